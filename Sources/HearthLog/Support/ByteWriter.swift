// The one byte writer: appends little-endian integers, LEB128 varints and length-prefixed strings
// to a growing buffer, for the log's headers (HearthLog) and the node and event encoding (Hearth).
//
// Decision: one writer for both modules. HearthLog needs fixed-width integers, zero padding and a
// settable buffer for patching a checksum in; Hearth needs varints, zigzag, doubles and strings;
// the fixed-width methods write the same bytes for both. So one type serves both: it lives here,
// in the lower module, `package`-visible so Hearth uses it, and holds the union of both method
// sets. Its reader half, `ByteReader`, stays in Hearth with the public `DecodeError` it throws
// (the log reads its fixed headers with `[UInt8].le(_:at:)` instead).
// Everything on disk is little-endian (FORMAT.md §1, §"Encoding primitives").

/// Appends primitive values to a byte buffer (little-endian integers, varints, strings).
package struct ByteWriter {
    /// The bytes written so far. Settable so a caller can patch a checksum into a header it wrote.
    package var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes before it reallocates.
    @inlinable
    package init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// One byte.
    @inlinable
    package mutating func u8(_ v: UInt8) { bytes.append(v) }

    /// A little-endian `UInt16`.
    @inlinable
    package mutating func u16(_ v: UInt16) { littleEndian(v) }

    /// A little-endian `UInt32`.
    @inlinable
    package mutating func u32(_ v: UInt32) { littleEndian(v) }

    /// A little-endian `UInt64`.
    @inlinable
    package mutating func u64(_ v: UInt64) { littleEndian(v) }

    /// Unsigned LEB128: 7 bits per byte, low bits first, high bit set on all but the last.
    @inlinable
    package mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A non-negative `Int` as an unsigned varint (a negative one is a bug in the caller).
    @inlinable
    package mutating func varint(_ v: Int) {
        precondition(v >= 0, "varint encodes non-negative values")
        varint(UInt64(v))
    }

    /// Signed values zigzag-mapped onto unsigned varints (0, -1, 1, -2, … → 0, 1, 2, 3, …).
    @inlinable
    package mutating func zigzag(_ v: Int64) {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    /// A `Double` as the little-endian `UInt64` of its bit pattern.
    @inlinable
    package mutating func double(_ v: Double) { u64(v.bitPattern) }

    /// `true` as 1, `false` as 0.
    @inlinable
    package mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    /// A varint byte length, then the UTF-8 bytes (exact; never normalized).
    @inlinable
    package mutating func string(_ s: String) {
        // A native string's bytes are read where they are (no copy of the string to make
        // `withUTF8`'s mutable access: a retain and release of its storage per string, and
        // strings are every key of every record and checkpoint chunk).
        if let written: Void = s.utf8.withContiguousStorageIfAvailable({ utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }) {
            return written
        }
        var s = s
        s.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Raw bytes, as they are.
    @inlinable
    package mutating func raw(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }

    /// `n` zero bytes (padding, reserved fields).
    @inlinable
    package mutating func zeros(_ n: Int) { bytes.append(contentsOf: repeatElement(0, count: n)) }

    @inlinable
    mutating func littleEndian<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
