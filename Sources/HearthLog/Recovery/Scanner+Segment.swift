// Step 3 of a scan: the live segments, in order. Each segment's header is checked against the
// MANIFEST and the previous segment (LSN sequence, checksum chain), its records are walked, and the
// verdict rules (Scanner.swift) decide where its valid prefix ends and whether that is a torn tail.

extension Scanner {
    /// How one segment's scan ended.
    enum SegmentVerdict {
        /// Valid to its end: the next segment continues from this LSN and chain.
        case clean(lastLSN: LSN, chain: UInt32, size: UInt64)
        /// The last segment ends in a torn tail: the scan ends here, the valid prefix recorded.
        case tornTail
        /// Damage, recorded in the report: the scan stops.
        case damaged
    }

    /// Where a segment's record walk stopped.
    struct RecordRun {
        /// An invalid record: where, and why (nil when the walk reached the end).
        var stop: (offset: UInt64, reason: String)?
        /// Where an unfinished run of `continued` records began.
        var groupStart: (offset: UInt64, lsn: LSN, chain: UInt32, count: Int)?
        /// The checksum chain after the last record walked.
        var chainAtEnd: UInt32
        /// An I/O or format error that ends the scan as damage.
        var hardError: LogError?
    }

    /// 3. Every live segment in order. False when damage stopped the scan (the log-reaches-the-
    /// checkpoint check is then skipped).
    static func scanSegments(
        _ c: ScanContext, _ manifest: Manifest, _ report: inout ScanReport
    ) throws(LogError) -> Bool {
        let checkpointLSN = manifest.checkpoint?.lsn ?? 0
        var previous: (lastLSN: LSN, chain: UInt32)?
        var scannedBefore: UInt64 = 0  // bytes of the segments already scanned (progress)
        report.lastLSN = checkpointLSN
        report.endChain = 0
        for (i, entry) in manifest.segments.enumerated() {
            let isLast = i == manifest.segments.count - 1
            switch try scanSegment(
                c, entry, index: i, isLast: isLast, previous: previous, checkpointLSN: checkpointLSN,
                scannedBefore: scannedBefore, &report)
            {
            case let .clean(lastLSN, chain, size):
                assert(previous.map { lastLSN >= $0.lastLSN } ?? true, "LSNs rise from segment to segment")
                scannedBefore += size
                c.progress?(scannedBefore)
                previous = (lastLSN, chain)
            case .tornTail: return true
            case .damaged: return false
            }
        }
        return true
    }

    /// One segment: its header, its records, its verdict. Appends its `SegmentScan` to `report`.
    private static func scanSegment(
        _ c: ScanContext, _ entry: Manifest.Entry, index i: Int, isLast: Bool,
        previous: (lastLSN: LSN, chain: UInt32)?, checkpointLSN: LSN, scannedBefore: UInt64,
        _ report: inout ScanReport
    ) throws(LogError) -> SegmentVerdict {
        let name = Layout.segmentName(entry.number)
        var scan = SegmentScan(
            file: name, number: entry.number, size: 0, baseLSN: 0, records: [],
            recordCount: 0, validEnd: 0, lastLSN: 0)
        guard c.names.contains(name) else { return damaged(.missingFile(file: name), scan, i, &report) }
        let file = try logIO { try c.fs.open(joinPath(c.directory, name), mode: .readOnly) }
        defer { try? file.close() }
        let reader = try ChunkedReader(file: file, name: name)
        scan.size = reader.size
        var cursor: SegmentCursor
        do { cursor = try SegmentCursor(reader: reader) } catch { return damaged(error, scan, i, &report) }
        let h = cursor.header
        scan.baseLSN = h.baseLSN
        scan.lastLSN = h.baseLSN - 1
        scan.validEnd = UInt64(Layout.segmentHeaderSize)
        if let e = headerMismatch(h, entry, name, previous: previous, checkpointLSN: checkpointLSN) {
            return damaged(e, scan, i, &report)
        }
        var run = try walkRecords(&cursor, &scan, c, scannedBefore: scannedBefore)
        if let e = run.hardError { return damaged(e, scan, i, &report, inRecords: true) }
        if let g = run.groupStart {
            // An atomic batch without its final record: never part of the valid prefix.
            scan.validEnd = g.offset
            scan.lastLSN = g.lsn - 1
            scan.recordCount = g.count
            if !isLast {
                return damaged(
                    .corruption(file: name, offset: g.offset, reason: "sealed segment ends inside an atomic batch"),
                    scan, i, &report, inRecords: true)
            }
            if c.keepRecords { scan.records.removeSubrange(g.count...) }
            run.chainAtEnd = g.chain
            if run.stop == nil { run.stop = (g.offset, "atomic batch without its final record") }
        }
        if let s = run.stop {
            if isLast, try cursor.isAllZero(from: scan.validEnd) {
                // Preallocated space after the last record: the normal end (FORMAT.md §4.2).
                scan.preallocatedTail = scan.size - scan.validEnd
                return finishedClean(scan, h, chainAtEnd: run.chainAtEnd, &report)
            }
            return try stopped(at: s, scan, h, cursor, index: i, isLast: isLast, chainAtEnd: run.chainAtEnd, &report)
        }
        return finishedClean(scan, h, chainAtEnd: run.chainAtEnd, &report)
    }

    /// A segment whose records end cleanly: at the end of the file, or (the last segment only)
    /// before a preallocated all-zero tail.
    private static func finishedClean(
        _ scan: SegmentScan, _ h: SegmentHeader, chainAtEnd: UInt32, _ report: inout ScanReport
    ) -> SegmentVerdict {
        report.segments.append(scan)
        report.headers.append(h)
        report.lastLSN = scan.lastLSN
        report.endChain = chainAtEnd
        return .clean(lastLSN: scan.lastLSN, chain: chainAtEnd, size: scan.size)
    }

    /// Why a segment's header does not fit where the MANIFEST puts it, or nil when it does.
    private static func headerMismatch(
        _ h: SegmentHeader, _ entry: Manifest.Entry, _ name: String,
        previous: (lastLSN: LSN, chain: UInt32)?, checkpointLSN: LSN
    ) -> LogError? {
        if h.number != entry.number || h.baseLSN != entry.baseLSN {
            return .corruption(
                file: name, offset: 16,
                reason:
                    "header says segment \(h.number) base LSN \(h.baseLSN), MANIFEST says \(entry.number) / \(entry.baseLSN)"
            )
        }
        if let p = previous {
            if h.baseLSN != p.lastLSN + 1 {
                return .lsnGap(file: name, offset: 24, expected: p.lastLSN + 1, found: h.baseLSN)
            }
            if h.previousChain != p.chain {
                return .corruption(
                    file: name, offset: 48, reason: "checksum chain does not continue the previous segment")
            }
        } else if h.baseLSN > checkpointLSN + 1 {
            return .lsnGap(file: name, offset: 24, expected: checkpointLSN + 1, found: h.baseLSN)
        }
        return nil
    }

    /// Walks a segment's records up to the end or the first invalid one, extending `scan`.
    private static func walkRecords(
        _ cursor: inout SegmentCursor, _ scan: inout SegmentScan, _ c: ScanContext,
        scannedBefore: UInt64
    ) throws(LogError) -> RecordRun {
        var run = RecordRun(chainAtEnd: cursor.chain)
        while true {
            switch try cursor.next() {
            case let .record(rh, at, _):
                if rh.isContinued {
                    if run.groupStart == nil { run.groupStart = (at, rh.lsn, run.chainAtEnd, scan.recordCount) }
                } else {
                    run.groupStart = nil
                }
                if c.keepRecords {
                    scan.records.append(
                        RecordInfo(
                            file: scan.file, offset: at, lsn: rh.lsn, type: rh.type, flags: rh.flags,
                            storedSize: Int(rh.storedLength), rawSize: Int(rh.rawLength)))
                }
                assert(rh.lsn == scan.lastLSN + 1, "the cursor returns consecutive LSNs")
                scan.recordCount += 1
                run.chainAtEnd = cursor.chain
                scan.validEnd = cursor.offset
                scan.lastLSN = rh.lsn
                if let progress = c.progress, scan.recordCount % 1024 == 0 { progress(scannedBefore + scan.validEnd) }
            case .end:
                return run
            case let .invalid(at, reason):
                run.stop = (at, reason)
                return run
            case let .hardError(e):
                run.hardError = e
                return run
            }
        }
    }

    /// An invalid record at `s`: corruption in a sealed segment; in the last one a torn tail, unless
    /// a later valid record proves the LSN had been synced.
    private static func stopped(
        at s: (offset: UInt64, reason: String), _ scan: SegmentScan, _ h: SegmentHeader,
        _ cursor: SegmentCursor, index i: Int, isLast: Bool, chainAtEnd: UInt32,
        _ report: inout ScanReport
    ) throws(LogError) -> SegmentVerdict {
        let e = LogError.corruption(file: scan.file, offset: s.offset, reason: s.reason)
        if !isLast { return damaged(e, scan, i, &report, inRecords: true) }
        if let v = try cursor.vouchingRecord(after: s.offset, lsn: scan.lastLSN + 1) {
            return damaged(
                .corruption(
                    file: scan.file, offset: s.offset,
                    reason:
                        "\(s.reason); the record at \(v) shows LSN \(scan.lastLSN + 1) had been synced"), scan, i,
                &report, inRecords: true)
        }
        report.segments.append(scan)
        report.headers.append(h)
        report.damagedSegment = i
        report.damage = Damage(file: scan.file, offset: s.offset, error: e, isTornTail: true)
        report.lastLSN = scan.lastLSN
        report.endChain = chainAtEnd
        return .tornTail
    }

    /// Records damage in segment `i` and stops the scan. `inRecords`: found while walking its
    /// records, so the records before it are a prefix salvage can keep.
    private static func damaged(
        _ e: LogError, _ scan: SegmentScan, _ i: Int, _ report: inout ScanReport,
        inRecords: Bool = false
    ) -> SegmentVerdict {
        if inRecords && scan.recordCount > 0 { report.salvagePrefixEnd = scan.validEnd }
        report.segments.append(scan)
        report.headers.append(nil)
        report.damagedSegment = i
        report.damage = Damage(file: scan.file, offset: e.offset ?? 0, error: e, isTornTail: false)
        return .damaged
    }
}
