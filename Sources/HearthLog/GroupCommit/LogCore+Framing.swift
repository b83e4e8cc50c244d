// Record framing on the write side: a payload is prepared (bounded, compressed if that saves space)
// on the caller's thread, and the leader frames a whole group into one buffer (header, checksum,
// chain; FORMAT.md §5) and writes it with one call. Fields and lock discipline: see LogCore.swift.

extension LogCore {
    // MARK: Preparing records (caller's thread, no lock)

    func prepare(_ payload: [UInt8], type: UInt8, skippable: Bool) throws(LogError) -> PreparedRecord {
        guard payload.count <= Layout.maxPayloadSize else {
            throw .recordTooLarge(size: payload.count, limit: Layout.maxPayloadSize)
        }
        let skip = skippable ? Layout.flagSkippable : 0
        if let c = deflaters.compress(payload) {
            return PreparedRecord(type: type, flags: Layout.flagCompressed | skip, stored: c, rawLength: payload.count)
        }
        return PreparedRecord(type: type, flags: skip, stored: payload, rawLength: payload.count)
    }

    /// ``prepare(_:type:skippable:)`` of `split.head ‖ split.tail`, with the tail deflated
    /// beforehand (SplitPayload.swift): only copies, no compression.
    func prepare(_ split: SplitPayload, type: UInt8, skippable: Bool) throws(LogError) -> PreparedRecord {
        guard split.rawCount <= Layout.maxPayloadSize else {
            throw .recordTooLarge(size: split.rawCount, limit: Layout.maxPayloadSize)
        }
        let skip = skippable ? Layout.flagSkippable : 0
        if let c = split.compressedStream() {
            assert(c.count < split.rawCount, "a compressed record is strictly smaller than its payload")
            return PreparedRecord(type: type, flags: Layout.flagCompressed | skip, stored: c, rawLength: split.rawCount)
        }
        return PreparedRecord(type: type, flags: skip, stored: split.raw(), rawLength: split.rawCount)
    }

    /// [leader] Frames the group's records into one buffer and writes it with one call.
    /// `syncs`: the group's own sync follows (see below).
    func writeGroup(_ group: [CommitRequest], firstLSN: LSN, syncedThrough: LSN, syncs: Bool) throws(LogError) {
        guard let a = active else { preconditionFailure("no active segment") }
        assert(a.header.baseLSN <= firstLSN, "a group's LSNs follow its segment's base LSN")
        let framer = RecordFramer(salt: a.header.salt, segment: a.header.number)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(group.reduce(0) { $0 + $1.bytes })
        var lsn = firstLSN
        var chain = a.chain
        for r in group {
            for (i, rec) in r.records.enumerated() {
                // All but the last record of one request carry `continued`: the batch is atomic.
                let crc = framer.frame(
                    rec, lsn: lsn, syncedThrough: syncedThrough,
                    continued: i < r.records.count - 1, into: &buffer)
                chain = RecordHeader.chain(chain, crc)
                lsn += 1
            }
        }
        assert(
            buffer.count == group.reduce(0) { $0 + $1.bytes } && buffer.count % Layout.recordAlignment == 0,
            "the framed group is the requests' extents, 8-aligned")
        assert(a.offset % UInt64(Layout.recordAlignment) == 0, "records start 8-aligned")
        assert(a.offset >= UInt64(Layout.segmentHeaderSize), "records follow the segment header")
        // rollIfNeeded ran first: only a group that starts an empty segment may overflow it.
        assert(
            a.offset == UInt64(Layout.segmentHeaderSize)
                || a.offset + UInt64(buffer.count) <= UInt64(settings.segmentSize),
            "a group fits in its segment unless it is the segment's first")
        // A group that is not synced at once is copied over zeros the file holds: through a
        // shared mapping where the file has one (SharedWindow.swift), with no system call.
        // Anywhere else, and when the group's own sync follows, it is written. A sync cleans
        // the pages it writes and protects them against writes again, so the next store to
        // each is a page fault: one write call per synced group costs less than the fault
        // (`HearthBench writes1 hearth-full`, 3 interleaved pairs: 7,845 ops/s written,
        // 6,869 copied).
        let end = a.offset + UInt64(buffer.count)
        if !syncs && overwritable.lowerBound <= a.offset && end <= overwritable.upperBound {
            try logIO { try a.file.overwrite(buffer, at: a.offset) }
        } else {
            try logIO { try a.file.write(buffer, at: a.offset) }
        }
        active = (a.file, a.header, a.offset + UInt64(buffer.count), chain)
    }
}
