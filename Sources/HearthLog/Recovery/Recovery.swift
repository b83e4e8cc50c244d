// Opening a store: lock, scan (read-only, Scanner.swift), then act on the scan's verdict.
//
// Order of effects, each safe to crash in (recovery is idempotent; a crash during it is just another
// crash before the next open):
//  1. Remove temp files, and segment/checkpoint files the MANIFEST does not name; sync the directory.
//  2. Torn tail of the last segment: truncate to the end of the valid prefix and sync the file, before
//     anything is appended behind it (never append after a discarded tail).
//     A preallocated all-zero tail after the last record (FORMAT.md §4.2) is cut off the same way,
//     but reported as what it is (`RecoveryReport.preallocatedTail`), not as a torn tail.
//  3. Sync the last segment even when nothing was torn, so whatever this open reports as recovered is
//     durable: a second crash cannot take back records the first recovery returned.
//  4. With no live segment (new store, or a crash before its first segment was named), the opener
//     (Log+Open.swift) starts one with the write side's roll: recovery itself writes no segment.

enum Recovery {
    /// Takes the store's lock, scans and recovers. On failure the lock is released again.
    static func open(directory: String, fs: any FileSystem, options: RecoveryOptions) throws(LogError) -> RecoveredState
    {
        if !fs.directoryExists(directory) {
            guard options.createIfMissing else { throw .storeMissing(path: directory) }
            try logIO { try fs.createDirectory(directory) }
        }
        let lockPath = joinPath(directory, Layout.lockName)
        let lock: any StoreLock
        do { lock = RegisteredLock(try fs.lockFile(lockPath), path: lockPath) } catch {
            if error.code == .wouldBlock {
                // flock cannot tell this process from another: the registry can.
                if RegisteredLock.isHeld(lockPath) { throw .storeAlreadyOpen(path: lockPath) }
                throw .storeLocked(path: lockPath)
            }
            throw .io(error)
        }
        do {
            return try recover(directory: directory, fs: fs, options: options, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    /// A read-only open (``Log/Options/readOnly``): the scan recovery runs, and nothing else —
    /// no lock, no removal of temp or stray files, no truncation (a torn tail is only reported),
    /// no sync, no new segment. Damage other than a torn tail, and a directory without a store,
    /// fail. A MANIFEST replaced meanwhile (a writer checkpointed and deleted files the scan was
    /// reading), or a segment shrinking under the scan (a writer's roll), makes it scan again, as
    /// ``Log/verify(directory:fileSystem:)`` does.
    static func openReadOnly(directory: String, fs: any FileSystem) throws(LogError) -> RecoveredState {
        guard fs.directoryExists(directory) else { throw .storeMissing(path: directory) }
        return try Rescan.retrying(directory: directory, fileSystem: fs) { () throws(LogError) in
            try readOnlyAttempt(directory: directory, fs: fs)
        }
    }

    private static func readOnlyAttempt(directory: String, fs: any FileSystem) throws(LogError) -> RecoveredState {
        let report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        if report.isEmptyStore { throw .storeMissing(path: directory) }
        if let d = report.damage, !d.isTornTail { throw d.error }
        guard let manifest = report.manifest else { throw report.damage?.error ?? .manifestMissing(path: directory) }
        let checkpoint = try Scanner.checkpointHandle(fs, directory, manifest)
        var info = RecoveryReport(
            createdStore: false, truncatedTail: nil, removedTempFiles: [], removedStrayFiles: [],
            salvaged: nil, lastLSN: report.lastLSN)
        if let d = report.damage, d.isTornTail, let last = report.segments.last {
            info.ignoredTornTail = (last.file, last.validEnd, last.size - last.validEnd)
        } else if let last = report.segments.last, last.preallocatedTail > 0 {
            info.preallocatedTail = (last.file, last.validEnd, last.preallocatedTail)
        }
        return RecoveredState(
            report: info, lastLSN: report.lastLSN, manifest: manifest, checkpoint: checkpoint,
            lock: NoLock(), tail: nil)
    }

    private static func recover(
        directory: String, fs: any FileSystem, options: RecoveryOptions,
        lock: any StoreLock
    ) throws(LogError) -> RecoveredState {
        var report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        var info = RecoveryReport(
            createdStore: false, truncatedTail: nil, removedTempFiles: [], removedStrayFiles: [],
            salvaged: nil, lastLSN: 0)
        // Refuse before touching anything: a store we will not open is left exactly as found.
        if let d = report.damage, !d.isTornTail, !options.salvage { throw d.error }
        var dirty = false
        for t in report.tempFiles {
            try logIO { try fs.unlink(joinPath(directory, t)) }
            info.removedTempFiles.append(t)
            dirty = true
        }

        if report.isEmptyStore {
            guard options.createIfMissing else { throw .storeMissing(path: directory) }
            try ManifestWriter.replace(
                Manifest(generation: 1, checkpoint: nil, segments: []), directory: directory, fs: fs)
            info.createdStore = true
            report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        } else if options.salvage {
            info.salvaged = try salvageAll(&report, cut: options.salvageCut, directory: directory, fs: fs)
        } else if let d = report.damage, !d.isTornTail {
            throw d.error
        }
        guard let manifest = report.manifest else { throw report.damage?.error ?? .manifestMissing(path: directory) }

        for s in report.strayFiles {
            try logIO { try fs.unlink(joinPath(directory, s)) }
            info.removedStrayFiles.append(s)
            dirty = true
        }
        if dirty { try logIO { try fs.syncDirectory(directory) } }

        // The checkpoint handles: headers already verified by the scan.
        let checkpoint = try Scanner.checkpointHandle(fs, directory, manifest)

        let tail = try openTail(report, &info, directory: directory, fs: fs)
        info.lastLSN = report.lastLSN
        return RecoveredState(
            report: info, lastLSN: report.lastLSN, manifest: manifest, checkpoint: checkpoint,
            lock: lock, tail: tail)
    }

    /// Steps 2–3 of recovery: the last live segment opened for appending, a torn tail truncated
    /// (reported in `info`), the file synced. Nil when there is no live segment.
    private static func openTail(
        _ report: ScanReport, _ info: inout RecoveryReport, directory: String,
        fs: any FileSystem
    ) throws(LogError) -> RecoveredState.Tail? {
        guard let last = report.segments.last, let header = report.headers.last ?? nil else { return nil }
        let f = try logIO { try fs.open(joinPath(directory, last.file), mode: .readWrite) }
        if let d = report.damage, d.isTornTail {
            precondition(d.file == last.file, "a torn tail is only ever in the last segment")
            try logIO { try f.truncate(to: last.validEnd) }
            info.truncatedTail = (last.file, last.validEnd, last.size - last.validEnd)
        } else if last.preallocatedTail > 0 {
            // Zeros the last writer preallocated: the normal end of the log, not damage. Cut
            // off, so that appending resumes at the real end and the file holds only records.
            precondition(last.size == last.validEnd + last.preallocatedTail, "the zero tail runs to the end")
            try logIO { try f.truncate(to: last.validEnd) }
            info.preallocatedTail = (last.file, last.validEnd, last.preallocatedTail)
        } else if last.size != last.validEnd {
            preconditionFailure("clean scan must end at the end of the file")
        }
        try logIO { try f.sync() }
        assert(
            last.validEnd >= UInt64(Layout.segmentHeaderSize) && last.validEnd % UInt64(Layout.recordAlignment) == 0,
            "appending resumes 8-aligned, after the segment header")
        return (f, header, last.validEnd, report.endChain)
    }
}
