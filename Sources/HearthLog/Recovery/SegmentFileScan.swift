// One segment file read on its own, outside the MANIFEST: for reporting what salvage moved aside
// (`hearth salvage`). Read-only; the same record decoding as the scanner (SegmentCursor).

/// The records of one segment file, read on their own.
package struct SegmentFileScan: Sendable {
    /// The LSN of the segment's first record (from its header).
    package var baseLSN: LSN
    /// The valid records from the first one on, up to the first invalid one (or the end).
    package var records: [RecordInfo]
    /// The end of those records: the file's bytes after this are damaged, torn or cut off.
    package var validEnd: UInt64
    /// Checksum-valid records found after `validEnd` (past the damage), in file order.
    package var laterRecords: [RecordInfo]
    /// The file size.
    package var size: UInt64

    /// The highest LSN of a checksum-valid record in the file, or nil when it holds none.
    package var highestLSN: LSN? { (records + laterRecords).map(\.lsn).max() }
}

extension SegmentFileScan {
    /// Reads segment file `name` on its own (see ``Log/scanSegmentFile(directory:name:fileSystem:)``).
    static func read(directory: String, name: String, fileSystem fs: any FileSystem) -> SegmentFileScan? {
        guard let file = try? fs.open(joinPath(directory, name), mode: .readOnly) else { return nil }
        defer { try? file.close() }
        guard let reader = try? ChunkedReader(file: file, name: name),
            var cursor = try? SegmentCursor(reader: reader)
        else { return nil }
        var scan = SegmentFileScan(
            baseLSN: cursor.header.baseLSN, records: [], validEnd: UInt64(Layout.segmentHeaderSize),
            laterRecords: [], size: reader.size)
        loop: while true {
            guard let step = try? cursor.next() else { break }
            switch step {
            case let .record(h, at, _):
                scan.records.append(
                    RecordInfo(
                        file: name, offset: at, lsn: h.lsn, type: h.type, flags: h.flags,
                        storedSize: Int(h.storedLength), rawSize: Int(h.rawLength)))
                scan.validEnd = cursor.offset
            case .end, .invalid, .hardError:
                break loop
            }
        }
        scan.laterRecords = (try? cursor.checksumValidRecords(from: scan.validEnd)) ?? []
        return scan
    }
}

extension SegmentCursor {
    /// Every record at or after `from` that is valid on its own (plausible header, fits in the
    /// file, checksum matches), whatever its LSN, in file order.
    func checksumValidRecords(from: UInt64) throws(LogError) -> [RecordInfo] {
        guard reader.size >= from + UInt64(Layout.recordHeaderSize) else { return [] }
        let tail = try reader.bytes(at: from, count: Int(reader.size - from))
        var found: [RecordInfo] = []
        var p = 0
        while p + Layout.recordHeaderSize <= tail.count {
            let hb = Array(tail[p..<p + Layout.recordHeaderSize])
            let h = RecordHeader.decode(hb)
            if h.implausibility(reserved: hb.le(UInt16.self, at: 14)) == nil, p + h.extent <= tail.count {
                let payload = tail[p + Layout.recordHeaderSize..<p + Layout.recordHeaderSize + Int(h.storedLength)]
                let crc = CRC32C.mask(
                    RecordHeader.checksum(salt: header.salt, segment: header.number, header: hb, payload: payload))
                if crc == h.maskedCRC {
                    found.append(
                        RecordInfo(
                            file: name, offset: from + UInt64(p), lsn: h.lsn, type: h.type, flags: h.flags,
                            storedSize: Int(h.storedLength), rawSize: Int(h.rawLength)))
                    p += h.extent
                    continue
                }
            }
            p += Layout.recordAlignment
        }
        return found
    }
}
