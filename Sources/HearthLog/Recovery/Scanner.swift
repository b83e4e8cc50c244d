// The read-only scanner/verifier. It walks the MANIFEST, the checkpoint header and every live segment
// and reports every record and the first damage. It never writes: opening a store runs this same scan
// and then applies its verdict (Recovery.swift), so `Log.verify` and recovery cannot disagree.
//
// Verdict rules (FORMAT.md §8):
// - An invalid record in the LAST segment is a torn tail (the valid prefix ends there) unless a later
//   checksum-valid record vouches (synced-through ≥ its LSN) that it had been synced: then it is
//   corruption. A trailing run of `continued` records without its final record is also a torn tail.
// - Anything invalid in any other segment (sealed: synced before the next segment was created), a
//   damaged segment header, a broken LSN sequence or checksum chain, a missing file, a bad MANIFEST or
//   checkpoint header, or an unknown version is corruption.

enum Scanner {
    /// Scans `directory`. `keepRecords` fills `SegmentScan.records` (tooling); recovery passes false.
    /// `progress`, if given, is called now and then with the segment bytes scanned so far.
    static func scan(directory: String, fileSystem fs: any FileSystem, keepRecords: Bool,
                     progress: ((UInt64) -> Void)? = nil) throws(LogError) -> ScanReport {
        let names = try logIO { try fs.listDirectory(directory) }
        var report = ScanReport(manifestGeneration: nil, checkpoint: nil, segments: [], tempFiles: [],
                                strayFiles: [], brokenFiles: [], damage: nil, isEmptyStore: false, lastLSN: 0)
        report.tempFiles = names.filter { $0.hasSuffix(Layout.tempSuffix) }
        report.brokenFiles = names.filter { $0.hasSuffix(Layout.brokenSuffix) }
        let segmentFiles = names.filter { Layout.segmentNumber(fromName: $0) != nil }
        let checkpointFiles = names.filter { Layout.checkpointID(fromName: $0) != nil }

        // 1. MANIFEST.
        guard names.contains(Layout.manifestName) else {
            if segmentFiles.isEmpty && checkpointFiles.isEmpty {
                report.isEmptyStore = true
            } else {
                report.strayFiles = segmentFiles + checkpointFiles
                report.damage = Damage(file: Layout.manifestName, offset: 0,
                                       error: .manifestMissing(path: directory), isTornTail: false)
            }
            return report
        }
        let manifest: Manifest
        do {
            manifest = try readManifest(fs, directory)
        } catch {
            report.damage = Damage(file: Layout.manifestName, offset: error.offset ?? 0, error: error, isTornTail: false)
            return report
        }
        report.manifest = manifest
        report.manifestGeneration = manifest.generation
        let live = Set(manifest.segments.map { Layout.segmentName($0.number) })
            .union(manifest.checkpoint.map { [Layout.checkpointName($0.id)] } ?? [])
        report.strayFiles = (segmentFiles + checkpointFiles).filter { !live.contains($0) }

        // 2. Checkpoint header (the body is verified lazily by Checkpoint.readBody()).
        let checkpointLSN = manifest.checkpoint?.lsn ?? 0
        if let ref = manifest.checkpoint {
            let name = Layout.checkpointName(ref.id)
            report.checkpoint = (name, ref.lsn, ref.bodyLength)
            do {
                _ = try verifyCheckpointHeader(fs, directory, ref, exists: names.contains(name))
            } catch {
                report.damage = Damage(file: name, offset: error.offset ?? 0, error: error, isTornTail: false)
                return report
            }
        }

        // 3. Segments, in order.
        var previous: (lastLSN: LSN, chain: UInt32)?
        var scannedBefore: UInt64 = 0  // bytes of the segments already scanned (progress)
        report.lastLSN = checkpointLSN
        report.endChain = 0
        for (i, entry) in manifest.segments.enumerated() {
            let name = Layout.segmentName(entry.number)
            let isLast = i == manifest.segments.count - 1
            var scan = SegmentScan(file: name, number: entry.number, size: 0, baseLSN: 0, records: [],
                                   recordCount: 0, validEnd: 0, lastLSN: 0)
            var inRecords = false
            func fail(_ e: LogError, torn: Bool = false) -> ScanReport {
                if inRecords && scan.recordCount > 0 { report.salvagePrefixEnd = scan.validEnd }
                report.segments.append(scan)
                report.headers.append(nil)
                report.damagedSegment = i
                report.damage = Damage(file: name, offset: e.offset ?? 0, error: e, isTornTail: torn)
                return report
            }
            guard names.contains(name) else { return fail(.missingFile(file: name)) }
            let file = try logIO { try fs.open(joinPath(directory, name), mode: .readOnly) }
            defer { try? file.close() }
            let reader = try ChunkedReader(file: file, name: name)
            scan.size = reader.size
            var cursor: SegmentCursor
            do { cursor = try SegmentCursor(reader: reader) } catch { return fail(error) }
            let h = cursor.header
            scan.baseLSN = h.baseLSN
            scan.lastLSN = h.baseLSN - 1
            scan.validEnd = UInt64(Layout.segmentHeaderSize)
            if h.number != entry.number || h.baseLSN != entry.baseLSN {
                return fail(.corruption(file: name, offset: 16, reason:
                    "header says segment \(h.number) base LSN \(h.baseLSN), MANIFEST says \(entry.number) / \(entry.baseLSN)"))
            }
            if let p = previous {
                if h.baseLSN != p.lastLSN + 1 {
                    return fail(.lsnGap(file: name, offset: 24, expected: p.lastLSN + 1, found: h.baseLSN))
                }
                if h.previousChain != p.chain {
                    return fail(.corruption(file: name, offset: 48, reason: "checksum chain does not continue the previous segment"))
                }
            } else if h.baseLSN > checkpointLSN + 1 {
                return fail(.lsnGap(file: name, offset: 24, expected: checkpointLSN + 1, found: h.baseLSN))
            }

            // Records. `groupStart` is where an unfinished run of `continued` records began.
            var groupStart: (offset: UInt64, lsn: LSN, chain: UInt32, count: Int)?
            var chainAtEnd = cursor.chain
            var stop: (offset: UInt64, reason: String)?
            inRecords = true
            loop: while true {
                switch try cursor.next() {
                case let .record(rh, at, _):
                    if rh.isContinued {
                        if groupStart == nil { groupStart = (at, rh.lsn, chainAtEnd, scan.recordCount) }
                    } else {
                        groupStart = nil
                    }
                    if keepRecords {
                        scan.records.append(RecordInfo(file: name, offset: at, lsn: rh.lsn, type: rh.type, flags: rh.flags,
                                                       storedSize: Int(rh.storedLength), rawSize: Int(rh.rawLength)))
                    }
                    scan.recordCount += 1
                    chainAtEnd = cursor.chain
                    scan.validEnd = cursor.offset
                    scan.lastLSN = rh.lsn
                    if let progress, scan.recordCount % 1024 == 0 { progress(scannedBefore + scan.validEnd) }
                case .end:
                    break loop
                case let .invalid(at, reason):
                    stop = (at, reason)
                    break loop
                case let .hardError(e):
                    return fail(e)
                }
            }
            if let g = groupStart {
                // An atomic batch without its final record: never part of the valid prefix.
                scan.validEnd = g.offset
                scan.lastLSN = g.lsn - 1
                scan.recordCount = g.count
                if !isLast {
                    return fail(.corruption(file: name, offset: g.offset, reason: "sealed segment ends inside an atomic batch"))
                }
                scan.lastLSN = g.lsn - 1
                scan.recordCount = g.count
                if keepRecords { scan.records.removeSubrange(g.count...) }
                chainAtEnd = g.chain
                if stop == nil { stop = (g.offset, "atomic batch without its final record") }
            }
            if let s = stop {
                let e = LogError.corruption(file: name, offset: s.offset, reason: s.reason)
                if !isLast { return fail(e) }
                // Last segment: a torn tail unless a later valid record proves the LSN was synced.
                if let v = try cursor.vouchingRecord(after: s.offset, lsn: scan.lastLSN + 1) {
                    return fail(.corruption(file: name, offset: s.offset, reason:
                        "\(s.reason); the record at \(v) shows LSN \(scan.lastLSN + 1) had been synced"))
                }
                report.segments.append(scan)
                report.headers.append(h)
                report.damagedSegment = i
                report.damage = Damage(file: name, offset: s.offset, error: e, isTornTail: true)
                report.lastLSN = scan.lastLSN
                report.endChain = chainAtEnd
                break
            }
            report.segments.append(scan)
            report.headers.append(h)
            scannedBefore += scan.size
            progress?(scannedBefore)
            previous = (scan.lastLSN, chainAtEnd)
            report.lastLSN = scan.lastLSN
            report.endChain = chainAtEnd
        }
        if report.lastLSN < checkpointLSN, let last = report.segments.last {
            // The checkpoint install makes the log durable through its LSN first, so this is damage.
            report.damagedSegment = report.segments.count - 1
            report.damage = Damage(file: last.file, offset: last.validEnd, error: .lsnGap(
                file: last.file, offset: last.validEnd, expected: checkpointLSN, found: report.lastLSN), isTornTail: false)
        }
        return report
    }
}
