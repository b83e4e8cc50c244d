// Which file system holds an open file: fstatfs(2)'s `f_type` on Linux, which Glibc's Swift
// module does not import (<sys/vfs.h>). HearthLog's SharedWindow.swift asks it before it maps a
// segment for overwrites.
#ifndef HEARTH_CFILESYSTEMKIND_H
#define HEARTH_CFILESYSTEMKIND_H

#include <stdint.h>

/// The magic number of the file system holding the open file `fd` (`statfs.f_type`, e.g.
/// 0xEF53 for ext2/3/4), or 0 when it cannot be asked: fstatfs failed, or not Linux.
uint64_t hearth_file_system_magic(int fd);

#endif
