// Debian's LevelDB C API (libleveldb-dev), for the baseline in Firebase iOS's layout.
#include <leveldb/c.h>
