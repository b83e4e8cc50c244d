// CRC32C (Castagnoli), and LevelDB's masking of stored checksums.
//
// Parameters (FORMAT.md §2): reflected polynomial 0x82F63B78 (normal form 0x1EDC6F41), initial value
// 0xFFFFFFFF, final xor 0xFFFFFFFF, input and output reflected. Check value: CRC32C("123456789") =
// 0xE3069283. The processor's instruction where there is one (CCRC32C), else software
// slicing-by-8; every byte of the log goes through here exactly once per write and once per read.

import CCRC32C

/// CRC32C checksums and LevelDB-style masking.
@_spi(HearthInternals) public enum CRC32C {
    /// The constant LevelDB adds when masking (`kMaskDelta`).
    public static let maskDelta: UInt32 = 0xA282_EAD8

    /// 8 × 256 lookup tables for slicing-by-8, built once. Immutable after initialisation.
    nonisolated(unsafe) private static let tables: UnsafeMutablePointer<UInt32> = {
        let t = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            var c = t[i]
            for k in 1..<8 {
                c = t[Int(c & 0xFF)] ^ (c >> 8)
                t[k * 256 + i] = c
            }
        }
        return t
    }()

    /// CRC32C of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 { extend(0, bytes) }

    /// Extends a finished CRC32C `crc` (of some prefix) with more bytes: `extend(checksum(a), b) ==
    /// checksum(a + b)`.
    public static func extend(_ crc: UInt32, _ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { extend(crc, $0) }
    }

    /// Extends a finished CRC32C with the bytes of an array slice.
    public static func extend(_ crc: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { extend(crc, $0) }
    }

    /// Whether the processor computes CRC32C itself (x86-64 with SSE4.2: CCRC32C), read once.
    /// The software below computes the same function — the tests check the two agree.
    static let usesHardware = hearth_crc32c_hardware() != 0

    /// Extends a finished CRC32C with the bytes of a raw buffer.
    public static func extend(_ crc: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
        guard buffer.count > 0, let base = buffer.baseAddress else { return crc }
        if usesHardware {
            // Every byte written to or read from the log and the checkpoints passes here.
            return ~hearth_crc32c_extend_hardware(~crc, base.assumingMemoryBound(to: UInt8.self), buffer.count)
        }
        return extendInSoftware(crc, buffer)
    }

    /// `extend` of a raw buffer in software (slicing-by-8), whatever the processor: for the
    /// tests to hold the instruction to it.
    static func extendInSoftware(_ crc: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
        let t = tables
        var c = ~crc
        var p = 0
        let n = buffer.count
        guard n > 0, let base = buffer.baseAddress else { return crc }
        while n - p >= 8 {
            let lo =
                c
                ^ (UInt32(base.load(fromByteOffset: p, as: UInt8.self))
                    | UInt32(base.load(fromByteOffset: p + 1, as: UInt8.self)) << 8
                    | UInt32(base.load(fromByteOffset: p + 2, as: UInt8.self)) << 16
                    | UInt32(base.load(fromByteOffset: p + 3, as: UInt8.self)) << 24)
            let hi =
                UInt32(base.load(fromByteOffset: p + 4, as: UInt8.self))
                | UInt32(base.load(fromByteOffset: p + 5, as: UInt8.self)) << 8
                | UInt32(base.load(fromByteOffset: p + 6, as: UInt8.self)) << 16
                | UInt32(base.load(fromByteOffset: p + 7, as: UInt8.self)) << 24
            c =
                t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
            p += 8
        }
        while p < n {
            c = t[Int((c ^ UInt32(base.load(fromByteOffset: p, as: UInt8.self))) & 0xFF)] ^ (c >> 8)
            p += 1
        }
        return ~c
    }

    /// LevelDB's mask: rotate right by 15 bits, then add `maskDelta`. Stored checksums are masked so
    /// that the CRC of data which itself contains CRCs is not degenerate.
    public static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ maskDelta
    }

    /// Inverse of ``mask(_:)``.
    public static func unmask(_ masked: UInt32) -> UInt32 {
        let rot = masked &- maskDelta
        return (rot >> 17) | (rot << 15)
    }
}
