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
    ///
    /// The steps, each stopping the scan at the first damage it records: the MANIFEST, the
    /// checkpoint header, the live segments in order (Scanner+Segment.swift), and last whether the
    /// log reaches the checkpoint.
    static func scan(
        directory: String, fileSystem fs: any FileSystem, keepRecords: Bool,
        progress: ((UInt64) -> Void)? = nil
    ) throws(LogError) -> ScanReport {
        let names = try logIO { try fs.listDirectory(directory) }
        var report = ScanReport(
            manifestGeneration: nil, checkpoint: nil, segments: [], tempFiles: [],
            strayFiles: [], brokenFiles: [], damage: nil, isEmptyStore: false, lastLSN: 0)
        report.tempFiles = names.filter { $0.hasSuffix(Layout.tempSuffix) }
        report.brokenFiles = names.filter { $0.hasSuffix(Layout.brokenSuffix) }
        let context = ScanContext(
            fs: fs, directory: directory, names: names, keepRecords: keepRecords, progress: progress)
        guard let manifest = scanManifest(context, &report) else { return report }
        guard scanCheckpointHeader(context, manifest, &report) else { return report }
        guard try scanSegments(context, manifest, &report) else { return report }
        checkLogReachesCheckpoint(manifest, &report)
        return report
    }

    /// 1. The MANIFEST, and the segment and checkpoint files it does not name (stray). Nil when
    /// there is none (an empty store, or damage if other store files exist) or it is damaged.
    private static func scanManifest(_ c: ScanContext, _ report: inout ScanReport) -> Manifest? {
        let segmentFiles = c.names.filter { Layout.segmentNumber(fromName: $0) != nil }
        let checkpointFiles = c.names.filter { Layout.checkpointID(fromName: $0) != nil }
        guard c.names.contains(Layout.manifestName) else {
            if segmentFiles.isEmpty && checkpointFiles.isEmpty {
                report.isEmptyStore = true
            } else {
                report.strayFiles = segmentFiles + checkpointFiles
                report.damage = Damage(
                    file: Layout.manifestName, offset: 0,
                    error: .manifestMissing(path: c.directory), isTornTail: false)
            }
            return nil
        }
        let manifest: Manifest
        do {
            manifest = try readManifest(c.fs, c.directory)
        } catch {
            report.damage = Damage(
                file: Layout.manifestName, offset: error.offset ?? 0, error: error, isTornTail: false)
            return nil
        }
        report.manifest = manifest
        report.manifestGeneration = manifest.generation
        let live = manifest.liveFileNames
        report.strayFiles = (segmentFiles + checkpointFiles).filter { !live.contains($0) }
        return manifest
    }

    /// 2. The checkpoint header, then those of the files it references (the bodies are verified
    /// lazily by Checkpoint.readBody() and the engine's chunk checksums). False when one is
    /// damaged.
    private static func scanCheckpointHeader(_ c: ScanContext, _ manifest: Manifest, _ report: inout ScanReport) -> Bool
    {
        guard let ref = manifest.checkpoint else { return true }
        let name = Layout.checkpointName(ref.id)
        report.checkpoint = (name, ref.lsn, ref.bodyLength)
        report.referencedCheckpoints = manifest.references.map { Layout.checkpointName($0.id) }
        for r in [ref] + manifest.references {
            let file = Layout.checkpointName(r.id)
            do {
                _ = try verifyCheckpointHeader(c.fs, c.directory, r, exists: c.names.contains(file))
            } catch {
                report.damage = Damage(file: file, offset: error.offset ?? 0, error: error, isTornTail: false)
                return false
            }
        }
        return true
    }

    /// 4. The log must reach the checkpoint's LSN: the checkpoint install makes the log durable
    /// through it first, so a log ending below it is damage.
    private static func checkLogReachesCheckpoint(_ manifest: Manifest, _ report: inout ScanReport) {
        let checkpointLSN = manifest.checkpoint?.lsn ?? 0
        guard report.lastLSN < checkpointLSN, let last = report.segments.last else { return }
        report.damagedSegment = report.segments.count - 1
        report.damage = Damage(
            file: last.file, offset: last.validEnd,
            error: .lsnGap(
                file: last.file, offset: last.validEnd, expected: checkpointLSN, found: report.lastLSN),
            isTornTail: false)
    }
}

/// One scan's constants: where it reads and what it keeps.
struct ScanContext {
    let fs: any FileSystem
    let directory: String
    /// The directory's file names, listed once at the start of the scan.
    let names: [String]
    let keepRecords: Bool
    let progress: ((UInt64) -> Void)?
}
