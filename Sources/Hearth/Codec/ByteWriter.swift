// Little-endian, varint-based binary encoding shared by event records and checkpoints.
// FORMAT.md §"Encoding primitives" is the normative description.

/// Appends primitive values to a byte buffer.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    /// Unsigned LEB128: 7 bits per byte, low bits first, high bit set on all but the last.
    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func varint(_ v: Int) {
        precondition(v >= 0, "varint encodes non-negative values")
        varint(UInt64(v))
    }

    /// Signed values zigzag-mapped onto unsigned varints (0, -1, 1, -2, … → 0, 1, 2, 3, …).
    mutating func zigzag(_ v: Int64) {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func u32(_ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func double(_ v: Double) { u64(v.bitPattern) }

    mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    /// A varint byte length, then the UTF-8 bytes (exact; never normalized).
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func raw(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }
}
