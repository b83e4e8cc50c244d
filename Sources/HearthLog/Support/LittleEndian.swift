// Reading and patching little-endian integers in place in a byte array: how the log reads its
// fixed-size headers (segment, record, checkpoint, MANIFEST) and patches a checksum into one.
//
// Everything on disk is little-endian (FORMAT.md §1). These helpers and `ByteWriter` are the only
// places where the log turns integers into bytes or back, so the byte order cannot differ between
// writer and reader.

extension Array where Element == UInt8 {
    /// Reads a little-endian integer at `offset`. The caller has checked the bounds
    /// (asserted here: a failure is a bug in the caller, never a consequence of bad input).
    func le<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "le read out of bounds")
        var v: T = 0
        for i in 0..<MemoryLayout<T>.size { v |= T(self[offset + i]) << (8 * i) }
        return v
    }

    /// Overwrites a little-endian `UInt32` at `offset` (used to patch a checksum into a header).
    mutating func putLE32(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count, "putLE32 writes within the array")
        for i in 0..<4 { self[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) }
    }
}
