// The 64-byte header at the start of every segment file (FORMAT.md §4).
//
//   0  8  magic "HRTHSEG\x01"
//   8  2  format version (1)
//  10  1  codec id (1 = raw DEFLATE)
//  11  1  reserved, zero
//  12  4  header size (64)
//  16  8  segment number (equals the number in the file name)
//  24  8  base LSN: the LSN of the first record in this segment
//  32  8  salt: random, fresh per segment; part of every record checksum
//  40  8  previous segment's last LSN (always base LSN - 1)
//  48  4  previous segment's final chain value (0 for the first segment of a store)
//  52  8  reserved, zero
//  60  4  masked CRC32C of bytes 0..<60

/// The decoded header of a segment file.
struct SegmentHeader: Equatable, Sendable {
    var number: UInt64
    var baseLSN: LSN
    var salt: UInt64
    var previousLastLSN: LSN
    var previousChain: UInt32
    var codec: UInt8 = Codec.rawDeflate

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: Layout.segmentHeaderSize)
        w.raw(Layout.segmentMagic)
        w.u16(Layout.formatVersion)
        w.u8(codec)
        w.u8(0)
        w.u32(UInt32(Layout.segmentHeaderSize))
        w.u64(number)
        w.u64(baseLSN)
        w.u64(salt)
        w.u64(previousLastLSN)
        w.u32(previousChain)
        w.zeros(8)
        w.u32(CRC32C.mask(CRC32C.checksum(w.bytes)))
        assert(w.bytes.count == Layout.segmentHeaderSize)
        return w.bytes
    }

    /// Decodes and validates a header. `bytes` may be shorter than a header (a damaged file).
    static func decode(_ bytes: [UInt8], file: String) throws(LogError) -> SegmentHeader {
        guard bytes.count >= 10 else {
            throw .corruption(file: file, offset: 0, reason: "segment header truncated (\(bytes.count) bytes)")
        }
        guard Array(bytes[0..<8]) == Layout.segmentMagic else {
            throw .corruption(file: file, offset: 0, reason: "bad segment magic")
        }
        // The version sits at a fixed place in every version, so an unknown one is reported as such.
        let version = bytes.le(UInt16.self, at: 8)
        guard version == Layout.formatVersion else {
            throw .unsupportedVersion(file: file, offset: 8, version: version)
        }
        guard bytes.count >= Layout.segmentHeaderSize else {
            throw .corruption(file: file, offset: 0, reason: "segment header truncated (\(bytes.count) bytes)")
        }
        let stored = bytes.le(UInt32.self, at: 60)
        guard CRC32C.mask(CRC32C.checksum(Array(bytes[0..<60]))) == stored else {
            throw .corruption(file: file, offset: 0, reason: "segment header checksum mismatch")
        }
        let codec = bytes[10]
        guard codec == Codec.rawDeflate else {
            throw .corruption(file: file, offset: 10, reason: "unknown codec id \(codec)")
        }
        guard bytes.le(UInt32.self, at: 12) == UInt32(Layout.segmentHeaderSize) else {
            throw .corruption(file: file, offset: 12, reason: "bad segment header size")
        }
        let h = SegmentHeader(
            number: bytes.le(UInt64.self, at: 16), baseLSN: bytes.le(UInt64.self, at: 24),
            salt: bytes.le(UInt64.self, at: 32), previousLastLSN: bytes.le(UInt64.self, at: 40),
            previousChain: bytes.le(UInt32.self, at: 48), codec: codec)
        guard h.baseLSN >= 1, h.baseLSN < Layout.maxLSN, h.number < Layout.maxLSN, h.previousLastLSN == h.baseLSN - 1
        else {
            throw .corruption(
                file: file, offset: 24,
                reason: "base LSN \(h.baseLSN) and previous last LSN \(h.previousLastLSN) disagree")
        }
        return h
    }
}
