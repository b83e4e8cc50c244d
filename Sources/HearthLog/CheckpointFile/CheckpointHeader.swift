// The 64-byte header of a checkpoint file (FORMAT.md §7). The body follows at offset 64.
//
//   0  8  magic "HRTHCKP\x01"
//   8  2  format version (1)
//  10  2  reserved, zero
//  12  4  header size (64)
//  16  8  checkpoint id (equals the id in the file name and in the MANIFEST)
//  24  8  checkpoint LSN: the state includes every record with LSN ≤ this
//  32  8  body length
//  40  4  body CRC32C, masked
//  44 16  reserved, zero
//  60  4  masked CRC32C of bytes 0..<60

struct CheckpointHeader: Equatable, Sendable {
    var id: UInt64
    var lsn: LSN
    var bodyLength: UInt64
    var bodyCRC: UInt32

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: Layout.checkpointHeaderSize)
        w.raw(Layout.checkpointMagic)
        w.u16(Layout.formatVersion)
        w.u16(0)
        w.u32(UInt32(Layout.checkpointHeaderSize))
        w.u64(id)
        w.u64(lsn)
        w.u64(bodyLength)
        w.u32(bodyCRC)
        w.zeros(16)
        w.u32(CRC32C.mask(CRC32C.checksum(w.bytes)))
        assert(w.bytes.count == Layout.checkpointHeaderSize)
        return w.bytes
    }

    static func decode(_ b: [UInt8], file: String) throws(LogError) -> CheckpointHeader {
        guard b.count >= 10, Array(b[0..<8]) == Layout.checkpointMagic else {
            throw .corruption(file: file, offset: 0, reason: "bad checkpoint magic or truncated header")
        }
        let version = b.le(UInt16.self, at: 8)
        guard version == Layout.formatVersion else {
            throw .unsupportedVersion(file: file, offset: 8, version: version)
        }
        guard b.count >= Layout.checkpointHeaderSize else {
            throw .corruption(file: file, offset: 0, reason: "checkpoint header truncated")
        }
        guard CRC32C.mask(CRC32C.checksum(Array(b[0..<60]))) == b.le(UInt32.self, at: 60) else {
            throw .corruption(file: file, offset: 0, reason: "checkpoint header checksum mismatch")
        }
        guard b.le(UInt32.self, at: 12) == UInt32(Layout.checkpointHeaderSize) else {
            throw .corruption(file: file, offset: 12, reason: "bad checkpoint header size")
        }
        let h = CheckpointHeader(
            id: b.le(UInt64.self, at: 16), lsn: b.le(UInt64.self, at: 24),
            bodyLength: b.le(UInt64.self, at: 32), bodyCRC: b.le(UInt32.self, at: 40))
        guard h.id < Layout.maxLSN, h.lsn < Layout.maxLSN, h.bodyLength < Layout.maxLSN else {
            throw .corruption(file: file, offset: 16, reason: "checkpoint header fields out of range")
        }
        return h
    }
}
