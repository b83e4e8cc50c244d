// See include/ccrc32c.h. The instruction computes the reflected Castagnoli CRC (polynomial
// 0x82F63B78) over 1, 2, 4 or 8 bytes without the initial and final inversions, exactly one
// step of CRC32C.swift's register; the caller inverts before and after, as the software does.
#include "ccrc32c.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

int hearth_crc32c_hardware(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

// Compiled for SSE4.2 on its own: the rest of the build stays for any x86-64, and this runs
// only after `hearth_crc32c_hardware` found the instruction.
__attribute__((target("sse4.2")))
uint32_t hearth_crc32c_extend_hardware(uint32_t state, const uint8_t *bytes, size_t count) {
    uint64_t c = state;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);  // unaligned load, little-endian as the software reads it
        c = __builtin_ia32_crc32di(c, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *bytes);
        bytes += 1;
        count -= 1;
    }
    return c32;
}

#else

int hearth_crc32c_hardware(void) { return 0; }

uint32_t hearth_crc32c_extend_hardware(uint32_t state, const uint8_t *bytes, size_t count) {
    (void)state;
    (void)bytes;
    (void)count;
    __builtin_trap();  // a caller's bug: hearth_crc32c_hardware() is 0 here
}

#endif
