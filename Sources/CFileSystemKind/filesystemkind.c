// See include/cfilesystemkind.h.
#include "cfilesystemkind.h"

#if defined(__linux__)
#include <sys/vfs.h>

uint64_t hearth_file_system_magic(int fd) {
    struct statfs s;
    if (fstatfs(fd, &s) != 0) return 0;
    return (uint64_t)s.f_type;
}
#else
uint64_t hearth_file_system_magic(int fd) {
    (void)fd;
    return 0;
}
#endif
