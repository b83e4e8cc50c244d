// The system SQLite (Debian: libsqlite3-dev), for the baseline in Firebase Android's layout.
#include <sqlite3.h>
