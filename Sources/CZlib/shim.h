// The system zlib (Debian: zlib1g-dev). Hearth uses raw DEFLATE (RFC 1951) through it.
// deflateInit2/inflateInit2 are C macros Swift cannot import; call deflateInit2_ and
// inflateInit2_ with ZLIB_VERSION and sizeof(z_stream).
#include <zlib.h>
