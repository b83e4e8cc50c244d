// Records: the 32-byte header, the checksum that covers it, and the checksum chain (FORMAT.md §5).
//
//   0  4  masked CRC32C (see below)
//   4  4  stored length: payload bytes as stored (compressed or not)
//   8  4  raw length: payload bytes after decompression
//  12  1  type (engine-defined, 0–255; the log interprets none)
//  13  1  flags: bit0 compressed (raw DEFLATE), bit1 skippable, bit2 continued; bits 3–7 zero
//  14  2  reserved, zero
//  16  8  LSN
//  24  8  synced-through: highest LSN known durable (fsynced) when this record was written
//  32  …  payload (stored length bytes), then zero padding to the next multiple of 8
//
// CRC32C input, in this order: segment salt (8 bytes LE), segment number (8 bytes LE), header bytes
// 4..<32, payload. So a record is only valid inside the segment (salt and number) it was written for:
// bytes left over from an older file, or copied from another segment, never validate.
//
// Chain: chain(after r) = CRC32C(LE32(chain before r) ‖ LE32(masked CRC field of r)); the chain before
// the first record of a segment is the segment header's previous-chain field.

/// A record's decoded header.
struct RecordHeader: Equatable, Sendable {
    var maskedCRC: UInt32
    var storedLength: UInt32
    var rawLength: UInt32
    var type: UInt8
    var flags: UInt8
    var lsn: LSN
    var syncedThrough: LSN

    var isCompressed: Bool { flags & Layout.flagCompressed != 0 }
    var isSkippable: Bool { flags & Layout.flagSkippable != 0 }
    var isContinued: Bool { flags & Layout.flagContinued != 0 }

    /// Header plus payload plus padding.
    var extent: Int { Layout.aligned(Layout.recordHeaderSize + Int(storedLength)) }

    static func decode(_ b: [UInt8]) -> RecordHeader {
        precondition(b.count >= Layout.recordHeaderSize)
        return RecordHeader(
            maskedCRC: b.le(UInt32.self, at: 0), storedLength: b.le(UInt32.self, at: 4),
            rawLength: b.le(UInt32.self, at: 8), type: b[12], flags: b[13],
            lsn: b.le(UInt64.self, at: 16), syncedThrough: b.le(UInt64.self, at: 24))
    }

    /// Why these header fields are impossible for a writer of this version, or nil if plausible.
    /// Checked before the payload is read, so no length is trusted before it is bounded.
    func implausibility(reserved: UInt16) -> String? {
        if reserved != 0 { return "reserved header bytes are not zero" }
        if flags & ~Layout.knownFlags != 0 { return "unknown flag bits \(flags)" }
        if rawLength > UInt32(Layout.maxPayloadSize) { return "raw length \(rawLength) exceeds the maximum" }
        if isCompressed {
            if storedLength == 0 || storedLength >= rawLength {
                return "compressed length \(storedLength) not below raw length \(rawLength)"
            }
        } else if storedLength != rawLength {
            return "stored length \(storedLength) differs from raw length \(rawLength) in an uncompressed record"
        }
        if lsn == 0 || lsn >= Layout.maxLSN || syncedThrough >= Layout.maxLSN { return "LSN \(lsn) out of range" }
        return nil
    }

    /// The unmasked checksum of a record, given its header bytes (≥ 32) and payload.
    static func checksum(salt: UInt64, segment: UInt64, header: [UInt8], payload: ArraySlice<UInt8>) -> UInt32 {
        var pre = ByteWriter(capacity: 16)
        pre.u64(salt)
        pre.u64(segment)
        var c = CRC32C.checksum(pre.bytes)
        c = CRC32C.extend(c, header[4..<Layout.recordHeaderSize])
        return CRC32C.extend(c, payload)
    }

    /// The chain value after a record whose masked CRC field is `maskedCRC`.
    static func chain(_ previous: UInt32, _ maskedCRC: UInt32) -> UInt32 {
        var w = ByteWriter(capacity: 8)
        w.u32(previous)
        w.u32(maskedCRC)
        return CRC32C.checksum(w.bytes)
    }
}

/// A payload made ready for the log on the caller's thread (compressed if that saves space).
struct PreparedRecord: Sendable {
    var type: UInt8
    var flags: UInt8
    var stored: [UInt8]
    var rawLength: Int

    var extent: Int { Layout.aligned(Layout.recordHeaderSize + stored.count) }
}

/// Appends framed records to a buffer for one segment.
struct RecordFramer {
    let salt: UInt64
    let segment: UInt64

    /// Frames `r` as record `lsn` at the end of `buffer` and returns its masked CRC field.
    func frame(
        _ r: PreparedRecord, lsn: LSN, syncedThrough: LSN, continued: Bool,
        into buffer: inout [UInt8]
    ) -> UInt32 {
        var h = ByteWriter(capacity: Layout.recordHeaderSize)
        h.u32(0)
        h.u32(UInt32(r.stored.count))
        h.u32(UInt32(r.rawLength))
        h.u8(r.type)
        h.u8(r.flags | (continued ? Layout.flagContinued : 0))
        h.u16(0)
        h.u64(lsn)
        h.u64(syncedThrough)
        let crc = CRC32C.mask(
            RecordHeader.checksum(
                salt: salt, segment: segment, header: h.bytes,
                payload: r.stored[...]))
        h.bytes.putLE32(crc, at: 0)
        let start = buffer.count
        buffer.append(contentsOf: h.bytes)
        buffer.append(contentsOf: r.stored)
        let pad = Layout.aligned(buffer.count - start) - (buffer.count - start)
        buffer.append(contentsOf: repeatElement(0, count: pad))
        assert(buffer.count - start == r.extent)
        return crc
    }
}
