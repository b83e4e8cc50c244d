// Opening a store: lock, scan (read-only, Scanner.swift), then act on the scan's verdict.
//
// Order of effects, each safe to crash in (recovery is idempotent; a crash during it is just another
// crash before the next open):
//  1. Remove temp files, and segment/checkpoint files the MANIFEST does not name; sync the directory.
//  2. Torn tail of the last segment: truncate to the end of the valid prefix and sync the file, before
//     anything is appended behind it (never append after a discarded tail).
//  3. Sync the last segment even when nothing was torn, so whatever this open reports as recovered is
//     durable: a second crash cannot take back records the first recovery returned.
//  4. With no live segment (new store, or a crash before its first segment was named), start one.

enum Recovery {
    static func open(directory: String, fs: any FileSystem, options: Log.Options) throws(LogError) -> Log {
        if !fs.directoryExists(directory) {
            guard options.createIfMissing else { throw .storeMissing(path: directory) }
            try logIO { try fs.createDirectory(directory) }
        }
        let lockPath = joinPath(directory, Layout.lockName)
        let lock: any StoreLock
        do { lock = try fs.lockFile(lockPath) } catch {
            if error.code == .wouldBlock { throw .storeLocked(path: lockPath) }
            throw .io(error)
        }
        do {
            return try recover(directory: directory, fs: fs, options: options, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    private static func recover(directory: String, fs: any FileSystem, options: Log.Options,
                                lock: any StoreLock) throws(LogError) -> Log {
        var report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        var info = RecoveryReport(createdStore: false, truncatedTail: nil, removedTempFiles: [], removedStrayFiles: [],
                                  salvaged: nil, lastLSN: 0)
        var dirty = false
        for t in report.tempFiles {
            try logIO { try fs.unlink(joinPath(directory, t)) }
            info.removedTempFiles.append(t)
            dirty = true
        }

        if report.isEmptyStore {
            guard options.createIfMissing else { throw .storeMissing(path: directory) }
            try ManifestWriter.replace(Manifest(generation: 1, checkpoint: nil, segments: []), directory: directory, fs: fs)
            info.createdStore = true
            report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        } else if let d = report.damage, !d.isTornTail {
            guard options.salvage else { throw d.error }
            let moved = try salvage(report, damage: d, directory: directory, fs: fs)
            info.salvaged = (d, moved)
            report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
            if let d2 = report.damage, !d2.isTornTail { throw d2.error }
        }
        guard let manifest = report.manifest else { throw report.damage?.error ?? .manifestMissing(path: directory) }

        for s in report.strayFiles {
            try logIO { try fs.unlink(joinPath(directory, s)) }
            info.removedStrayFiles.append(s)
            dirty = true
        }
        if dirty { try logIO { try fs.syncDirectory(directory) } }

        // The checkpoint handle: header already verified by the scan.
        var checkpoint: Checkpoint?
        if let ref = manifest.checkpoint {
            let name = Layout.checkpointName(ref.id)
            let f = try logIO { try fs.open(joinPath(directory, name), mode: .readOnly) }
            let hb = try logIO { try f.read(at: 0, count: Layout.checkpointHeaderSize) }
            checkpoint = Checkpoint(header: try CheckpointHeader.decode(hb, file: name), file: f)
        }

        let core = LogCore(fs: fs, directory: directory, options: options, lastLSN: report.lastLSN,
                           manifest: manifest, checkpoint: checkpoint, lock: lock)
        if let last = report.segments.last, let header = report.headers.last ?? nil {
            let f = try logIO { try fs.open(joinPath(directory, last.file), mode: .readWrite) }
            if let d = report.damage, d.isTornTail {
                precondition(d.file == last.file, "a torn tail is only ever in the last segment")
                try logIO { try f.truncate(to: last.validEnd) }
                info.truncatedTail = (last.file, last.validEnd, last.size - last.validEnd)
            } else if last.size != last.validEnd {
                preconditionFailure("clean scan must end at the end of the file")
            }
            try logIO { try f.sync() }
            core.active = (f, header, last.validEnd, report.endChain)
        } else {
            try core.roll(nextLSN: report.lastLSN + 1)
        }
        info.lastLSN = report.lastLSN
        core.startFlusher()
        return Log(directory: directory, core: core, recovery: info)
    }

    /// Salvage: keeps the longest valid prefix of the live log. Segments from the damaged one on are
    /// renamed to `<name>.broken` (never deleted); the valid prefix of the damaged segment is copied to
    /// a fresh file under its old name; the MANIFEST is rewritten to name what is kept. Damage in the
    /// MANIFEST or the checkpoint header cannot be salvaged by the log and is rethrown.
    private static func salvage(_ report: ScanReport, damage: Damage, directory: String,
                                fs: any FileSystem) throws(LogError) -> [String] {
        guard var manifest = report.manifest, let i = report.damagedSegment else { throw damage.error }
        let ckptLSN = manifest.checkpoint?.lsn ?? 0
        var moved: [String] = []
        let names = Set(try logIO { try fs.listDirectory(directory) })
        func brokenName(_ n: String) -> String {
            var candidate = n + Layout.brokenSuffix
            var k = 1
            while names.contains(candidate) { candidate = n + ".\(k)" + Layout.brokenSuffix; k += 1 }
            return candidate
        }
        var keep = Array(manifest.segments.prefix(i))
        var prefixEnd = report.salvagePrefixEnd
        // The kept prefix must reach the checkpoint, or the log would resume below it (LSN reuse).
        let keptLast: LSN = prefixEnd != nil ? report.segments[i].lastLSN
            : (i > 0 ? report.segments[i - 1].lastLSN : ckptLSN)
        var from = i
        if keptLast < ckptLSN {
            keep = []
            prefixEnd = nil
            from = 0
        }
        for e in manifest.segments[from...] {
            let n = Layout.segmentName(e.number)
            guard names.contains(n) else { continue }
            let b = brokenName(n)
            try logIO { try fs.rename(from: joinPath(directory, n), to: joinPath(directory, b)) }
            moved.append(b)
        }
        if let end = prefixEnd, from == i {
            let n = Layout.segmentName(manifest.segments[i].number)
            let src = joinPath(directory, moved[0])
            try logIO {
                let s = try fs.open(src, mode: .readOnly)
                defer { try? s.close() }
                let bytes = try s.read(at: 0, count: Int(end))
                let d = try fs.open(joinPath(directory, n), mode: .createTruncate)
                defer { try? d.close() }
                try d.write(bytes, at: 0)
                try d.sync()
            }
            keep.append(manifest.segments[i])
        }
        manifest.generation += 1
        manifest.segments = keep
        try ManifestWriter.replace(manifest, directory: directory, fs: fs)
        return moved
    }
}
