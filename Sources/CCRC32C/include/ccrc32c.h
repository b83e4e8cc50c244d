// CRC32C (Castagnoli) with the processor's own instruction, where there is one: SSE4.2's
// `crc32` on x86-64. HearthLog's CRC32C.swift calls these when `hearth_crc32c_hardware()` says
// so, and computes the same function in software (slicing-by-8) everywhere else.
#ifndef HEARTH_CCRC32C_H
#define HEARTH_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// 1 when `hearth_crc32c_extend_hardware` may be called on this processor, else 0.
int hearth_crc32c_hardware(void);

/// The CRC32C register `state` (the running value between the initial and the final
/// inversion, which the caller does) advanced over `count` bytes at `bytes`. Only when
/// `hearth_crc32c_hardware()` is 1.
uint32_t hearth_crc32c_extend_hardware(uint32_t state, const uint8_t *bytes, size_t count);

#endif
