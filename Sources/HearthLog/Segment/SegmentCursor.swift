// Sequential decoding of the records of one segment file: the one piece of code that decides what a
// valid record is. The scanner, recovery and replay all read through it, so they cannot disagree.

/// Reads a file in large chunks so that decoding small records does not cost a call per field.
final class ChunkedReader {
    let file: any StoreFile
    let name: String
    /// The file size when the reader was created; nothing at or beyond it is ever read.
    let size: UInt64
    private var bufferStart: UInt64 = 0
    private var buffer: [UInt8] = []
    private static let chunk = 256 << 10

    init(file: any StoreFile, name: String) throws(LogError) {
        self.file = file
        self.name = name
        size = try logIO { try file.size() }
    }

    /// Exactly `count` bytes at `offset`. The caller has checked `offset + count <= size`.
    func bytes(at offset: UInt64, count: Int) throws(LogError) -> [UInt8] {
        precondition(count >= 0 && offset + UInt64(count) <= size, "read beyond the checked size")
        if count == 0 { return [] }
        if offset >= bufferStart, offset + UInt64(count) <= bufferStart + UInt64(buffer.count) {
            let s = Int(offset - bufferStart)
            return Array(buffer[s..<s + count])
        }
        if count >= Self.chunk {
            let b = try logIO { try file.read(at: offset, count: count) }
            guard b.count == count else {
                throw .corruption(file: name, offset: offset, reason: LogError.shrankWhileReading)
            }
            return b
        }
        let want = Int(min(UInt64(Self.chunk), size - offset))
        buffer = try logIO { try file.read(at: offset, count: want) }
        bufferStart = offset
        guard buffer.count >= count else {
            throw .corruption(file: name, offset: offset, reason: LogError.shrankWhileReading)
        }
        return Array(buffer[0..<count])
    }
}

extension LogError {
    /// ``ChunkedReader``'s reason when a file reads back shorter than its size was when the reader
    /// opened it.
    static let shrankWhileReading = "file shrank while reading"

    /// Whether this is a file that read back shorter than its size a moment before. No damage
    /// does that, and the writer of a store only ever does it one way: at a roll (and a close) it
    /// cuts off the zeros preallocated after the active segment's last record (FORMAT.md §4.2)
    /// — before its new MANIFEST is published, so a reader beside it sees the file shrink while
    /// the MANIFEST's generation is still the one it started from. A read-only scan then scans
    /// again (``Scanner/worthRescanning(_:since:_:_:)``) rather than report damage.
    package var isShrinkUnderReader: Bool {
        if case let .corruption(_, _, reason) = self { return reason == Self.shrankWhileReading }
        return false
    }
}

/// The result of trying to decode the record at the cursor.
enum RecordStep {
    /// A valid record with the expected LSN.
    case record(RecordHeader, offset: UInt64, payload: [UInt8])
    /// The cursor is exactly at the end of the file.
    case end
    /// No valid record starts here (torn, zeroed, garbage or damaged). `reason` says why.
    case invalid(offset: UInt64, reason: String)
    /// A checksum-valid record that must not be here (wrong LSN): damage no crash can cause.
    case hardError(LogError)
}

/// Walks the records of one segment, checking each against the expected LSN.
struct SegmentCursor {
    let reader: ChunkedReader
    let header: SegmentHeader
    /// Offset of the next record.
    private(set) var offset: UInt64 = UInt64(Layout.segmentHeaderSize)
    /// LSN the next record must carry.
    private(set) var expectedLSN: LSN
    /// Chain value after the last valid record.
    private(set) var chain: UInt32

    var name: String { reader.name }

    /// Opens a cursor after validating the header (which must be intact: it was synced before the
    /// MANIFEST named this segment).
    init(reader: ChunkedReader) throws(LogError) {
        self.reader = reader
        let n = Int(min(reader.size, UInt64(Layout.segmentHeaderSize)))
        header = try SegmentHeader.decode(try reader.bytes(at: 0, count: n), file: reader.name)
        expectedLSN = header.baseLSN
        chain = header.previousChain
    }

    mutating func next() throws(LogError) -> RecordStep {
        let remaining = reader.size - offset
        if remaining == 0 { return .end }
        guard remaining >= UInt64(Layout.recordHeaderSize) else {
            return .invalid(offset: offset, reason: "truncated record header (\(remaining) bytes left)")
        }
        let hb = try reader.bytes(at: offset, count: Layout.recordHeaderSize)
        let h = RecordHeader.decode(hb)
        if let why = h.implausibility(reserved: hb.le(UInt16.self, at: 14)) {
            return .invalid(offset: offset, reason: why)
        }
        // Lengths are bounded by the file size before anything of that length is read or allocated.
        guard UInt64(h.extent) <= remaining else {
            return .invalid(offset: offset, reason: "record of \(h.extent) bytes extends beyond the end of the file")
        }
        // Payload and padding in one read; the padding must be zero (it is not covered by the checksum).
        let body = try reader.bytes(
            at: offset + UInt64(Layout.recordHeaderSize), count: h.extent - Layout.recordHeaderSize)
        let payload = Array(body[0..<Int(h.storedLength)])
        let crc = CRC32C.mask(
            RecordHeader.checksum(
                salt: header.salt, segment: header.number, header: hb,
                payload: payload[...]))
        guard crc == h.maskedCRC else { return .invalid(offset: offset, reason: "record checksum mismatch") }
        guard body[Int(h.storedLength)...].allSatisfy({ $0 == 0 }) else {
            return .invalid(offset: offset, reason: "non-zero padding after the record")
        }
        guard h.lsn == expectedLSN else {
            return .hardError(.lsnGap(file: name, offset: offset, expected: expectedLSN, found: h.lsn))
        }
        let at = offset
        offset += UInt64(h.extent)
        expectedLSN += 1
        chain = RecordHeader.chain(chain, h.maskedCRC)
        return .record(h, offset: at, payload: payload)
    }

    /// After an invalid record at `from` in the last segment: looks for a later checksum-valid record
    /// whose synced-through field is ≥ `lsn`. Such a record proves that `lsn` had been synced before it
    /// was written, so the damage cannot be a torn write: it is corruption. Returns its offset.
    func vouchingRecord(after from: UInt64, lsn: LSN) throws(LogError) -> UInt64? {
        let start = from + UInt64(Layout.recordAlignment)
        guard reader.size >= start + UInt64(Layout.recordHeaderSize) else { return nil }
        let tail = try reader.bytes(at: start, count: Int(reader.size - start))
        var p = 0
        // Records start at 8-byte aligned offsets (segment header is 64 bytes, extents are multiples of 8).
        while p + Layout.recordHeaderSize <= tail.count {
            defer { p += Layout.recordAlignment }
            let synced = tail.le(UInt64.self, at: p + 24)
            guard synced >= lsn else { continue }
            let hb = Array(tail[p..<p + Layout.recordHeaderSize])
            let h = RecordHeader.decode(hb)
            guard h.implausibility(reserved: hb.le(UInt16.self, at: 14)) == nil, h.lsn > lsn,
                p + h.extent <= tail.count
            else { continue }
            let payload = tail[p + Layout.recordHeaderSize..<p + Layout.recordHeaderSize + Int(h.storedLength)]
            let crc = CRC32C.mask(
                RecordHeader.checksum(
                    salt: header.salt, segment: header.number, header: hb,
                    payload: payload))
            if crc == h.maskedCRC { return start + UInt64(p) }
        }
        return nil
    }
}
