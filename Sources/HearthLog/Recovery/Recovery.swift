import Synchronization
// Opening a store: lock, scan (read-only, Scanner.swift), then act on the scan's verdict.
//
// Order of effects, each safe to crash in (recovery is idempotent; a crash during it is just another
// crash before the next open):
//  1. Remove temp files, and segment/checkpoint files the MANIFEST does not name; sync the directory.
//  2. Torn tail of the last segment: truncate to the end of the valid prefix and sync the file, before
//     anything is appended behind it (never append after a discarded tail).
//  3. Sync the last segment even when nothing was torn, so whatever this open reports as recovered is
//     durable: a second crash cannot take back records the first recovery returned.
//  4. With no live segment (new store, or a crash before its first segment was named), the opener
//     (Log+Open.swift) starts one with the write side's roll: recovery itself writes no segment.

enum Recovery {
    /// Takes the store's lock, scans and recovers. On failure the lock is released again.
    static func open(directory: String, fs: any FileSystem, options: RecoveryOptions) throws(LogError) -> RecoveredState {
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
    /// reading) makes it scan again, as ``Log/verify(directory:fileSystem:)`` does.
    static func openReadOnly(directory: String, fs: any FileSystem) throws(LogError) -> RecoveredState {
        guard fs.directoryExists(directory) else { throw .storeMissing(path: directory) }
        var attempt = 0
        while true {
            attempt += 1
            let before = Scanner.manifestGeneration(directory, fs)
            do {
                return try readOnlyAttempt(directory: directory, fs: fs)
            } catch {
                if attempt < Scanner.rescanAttempts, Scanner.manifestGeneration(directory, fs) != before { continue }
                throw error
            }
        }
    }

    private static func readOnlyAttempt(directory: String, fs: any FileSystem) throws(LogError) -> RecoveredState {
        let report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        if report.isEmptyStore { throw .storeMissing(path: directory) }
        if let d = report.damage, !d.isTornTail { throw d.error }
        guard let manifest = report.manifest else { throw report.damage?.error ?? .manifestMissing(path: directory) }
        let checkpoint = try manifest.checkpoint.map { ref throws(LogError) in try Scanner.checkpointHandle(fs, directory, ref) }
        var info = RecoveryReport(createdStore: false, truncatedTail: nil, removedTempFiles: [], removedStrayFiles: [],
                                  salvaged: nil, lastLSN: report.lastLSN)
        if let d = report.damage, d.isTornTail, let last = report.segments.last {
            info.ignoredTornTail = (last.file, last.validEnd, last.size - last.validEnd)
        }
        return RecoveredState(report: info, lastLSN: report.lastLSN, manifest: manifest, checkpoint: checkpoint,
                              lock: NoLock(), tail: nil)
    }

    private static func recover(directory: String, fs: any FileSystem, options: RecoveryOptions,
                                lock: any StoreLock) throws(LogError) -> RecoveredState {
        var report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        var info = RecoveryReport(createdStore: false, truncatedTail: nil, removedTempFiles: [], removedStrayFiles: [],
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
            try ManifestWriter.replace(Manifest(generation: 1, checkpoint: nil, segments: []), directory: directory, fs: fs)
            info.createdStore = true
            report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
        } else if options.salvage {
            // Salvage also looks where the scan does not: the checkpoint body's checksum, and a
            // record the engine could not replay (options.salvageCut).
            var cut = options.salvageCut
            try addSalvageFindings(&report, cut: &cut, directory: directory, fs: fs)
            if let d = report.damage, !d.isTornTail {
                // A rebuilt MANIFEST may itself name damaged segments: salvage again (bounded).
                var moved: [String] = []
                for _ in 0 ..< 4 {
                    guard let d2 = report.damage, !d2.isTornTail else { break }
                    moved += try salvage(report, damage: d2, directory: directory, fs: fs)
                    report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
                    try addSalvageFindings(&report, cut: &cut, directory: directory, fs: fs)
                }
                if let d2 = report.damage, !d2.isTornTail { throw d2.error }
                info.salvaged = (d, moved)
            }
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

        // The checkpoint handle: header already verified by the scan.
        let checkpoint = try manifest.checkpoint.map { ref throws(LogError) in try Scanner.checkpointHandle(fs, directory, ref) }

        var tail: RecoveredState.Tail?
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
            tail = (f, header, last.validEnd, report.endChain)
        }
        info.lastLSN = report.lastLSN
        return RecoveredState(report: info, lastLSN: report.lastLSN, manifest: manifest, checkpoint: checkpoint,
                              lock: lock, tail: tail)
    }

    /// In salvage mode, on a scan that found no damage (or only a torn tail): a checkpoint whose
    /// body fails its checksum (FORMAT.md §7) is damage, salvaged as a damaged checkpoint header
    /// is; then the cut the engine asked for (a record it could not replay), once, is damage at
    /// that record, salvaged as a damaged record is.
    private static func addSalvageFindings(_ report: inout ScanReport, cut: inout SalvageCut?,
                                           directory: String, fs: any FileSystem) throws(LogError) {
        if let d = report.damage, !d.isTornTail { return }
        guard let manifest = report.manifest else { return }
        if let ref = manifest.checkpoint {
            let name = Layout.checkpointName(ref.id)
            if let reason = try checkpointBodyDamage(directory: directory, name: name, ref: ref, fs: fs) {
                report.damage = Damage(file: name, offset: UInt64(Layout.checkpointHeaderSize),
                                       error: .corruption(file: name, offset: UInt64(Layout.checkpointHeaderSize), reason: reason),
                                       isTornTail: false)
                report.damagedSegment = nil
                report.salvagePrefixEnd = nil
                return
            }
        }
        if let c = cut, let i = report.segments.firstIndex(where: { $0.file == c.file }),
           c.offset >= UInt64(Layout.segmentHeaderSize), c.offset < report.segments[i].validEnd {
            cut = nil
            report.damage = Damage(file: c.file, offset: c.offset, error: .corruption(file: c.file, offset: c.offset, reason: c.reason),
                                   isTornTail: false)
            report.damagedSegment = i
            report.salvagePrefixEnd = c.offset > UInt64(Layout.segmentHeaderSize) ? c.offset : nil
        }
    }

    /// Why the checkpoint body fails its checksum, or nil when it holds. Reads the body in pieces.
    private static func checkpointBodyDamage(directory: String, name: String, ref: Manifest.CheckpointRef,
                                             fs: any FileSystem) throws(LogError) -> String? {
        let f = try logIO { try fs.open(joinPath(directory, name), mode: .readOnly) }
        defer { try? f.close() }
        var crc: UInt32 = 0
        var at: UInt64 = 0
        while at < ref.bodyLength {
            let n = Int(min(UInt64(1 << 20), ref.bodyLength - at))
            let b = try logIO { try f.read(at: UInt64(Layout.checkpointHeaderSize) + at, count: n) }
            guard b.count == n else { return "checkpoint file is shorter than its header says" }
            crc = CRC32C.extend(crc, b)
            at += UInt64(n)
        }
        return CRC32C.mask(crc) == ref.bodyCRC ? nil : "checkpoint body checksum mismatch"
    }

    /// Salvage: keeps the longest valid prefix of the live log. Segments from the damaged one on are
    /// renamed to `<name>.broken` (never deleted); the valid prefix of the damaged segment is copied to
    /// a fresh file under its old name; the MANIFEST is rewritten to name what is kept. A damaged
    /// MANIFEST is rebuilt from the files present; a damaged checkpoint header is moved aside and the
    /// MANIFEST rebuilt without it. An unknown MANIFEST version is rethrown (a newer writer's store).
    private static func salvage(_ report: ScanReport, damage: Damage, directory: String,
                                fs: any FileSystem) throws(LogError) -> [String] {
        if report.manifest == nil {
            if case .unsupportedVersion = damage.error { throw damage.error } // a newer writer's store
            return try rebuildManifest(directory: directory, fs: fs)
        }
        if let c = report.checkpoint, damage.file == c.file, report.damagedSegment == nil {
            // A damaged checkpoint header: move it aside and rebuild from what remains (the log then
            // keeps only what it can replay from LSN 1, possibly nothing; all of it moved, not deleted).
            // A checkpoint the MANIFEST names but that is missing has nothing to move aside.
            guard try logIO({ try fs.listDirectory(directory) }).contains(c.file) else {
                return try rebuildManifest(directory: directory, fs: fs)
            }
            let b = c.file + Layout.brokenSuffix
            try logIO { try fs.rename(from: joinPath(directory, c.file), to: joinPath(directory, b)) }
            return [b] + (try rebuildManifest(directory: directory, fs: fs))
        }
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

    /// Salvage of a damaged or missing MANIFEST: the old one is moved aside, and a new one is built from
    /// the files present: the checkpoint with the highest id whose header is intact, and the run of
    /// segments (by number, with intact headers) starting at the last one whose base LSN is ≤ the
    /// checkpoint LSN + 1. Segments not chosen are moved aside, never deleted. The scan that follows
    /// checks LSN continuity and the chain (and may salvage again).
    private static func rebuildManifest(directory: String, fs: any FileSystem) throws(LogError) -> [String] {
        let names = try logIO { try fs.listDirectory(directory) }
        var moved: [String] = []
        func moveAside(_ n: String) throws(LogError) {
            var b = n + Layout.brokenSuffix
            var k = 1
            while names.contains(b) || moved.contains(b) { b = n + ".\(k)" + Layout.brokenSuffix; k += 1 }
            try logIO { try fs.rename(from: joinPath(directory, n), to: joinPath(directory, b)) }
            moved.append(b)
        }
        if names.contains(Layout.manifestName) { try moveAside(Layout.manifestName) }
        var checkpoint: Manifest.CheckpointRef?
        for id in names.compactMap(Layout.checkpointID(fromName:)).sorted(by: >) {
            let n = Layout.checkpointName(id)
            let header: CheckpointHeader? = try? {
                () throws(LogError) -> CheckpointHeader in
                let f = try logIO { try fs.open(joinPath(directory, n), mode: .readOnly) }
                defer { try? f.close() }
                let h = try CheckpointHeader.decode(try logIO { try f.read(at: 0, count: Layout.checkpointHeaderSize) }, file: n)
                guard h.id == id, try logIO({ try f.size() }) == UInt64(Layout.checkpointHeaderSize) + h.bodyLength else {
                    throw .corruption(file: n, offset: 0, reason: "checkpoint id or size mismatch")
                }
                return h
            }()
            if let h = header, checkpoint == nil {
                checkpoint = .init(id: h.id, lsn: h.lsn, bodyLength: h.bodyLength, bodyCRC: h.bodyCRC)
            } else {
                try moveAside(n)
            }
        }
        var headers: [SegmentHeader] = []
        for number in names.compactMap(Layout.segmentNumber(fromName:)).sorted() {
            let n = Layout.segmentName(number)
            let h: SegmentHeader? = try? {
                () throws(LogError) -> SegmentHeader in
                let f = try logIO { try fs.open(joinPath(directory, n), mode: .readOnly) }
                defer { try? f.close() }
                let h = try SegmentHeader.decode(try logIO { try f.read(at: 0, count: Layout.segmentHeaderSize) }, file: n)
                guard h.number == number else { throw .corruption(file: n, offset: 16, reason: "number mismatch") }
                return h
            }()
            if let h { headers.append(h) } else { try moveAside(n) }
        }
        let start = (checkpoint?.lsn ?? 0) + 1
        let first = headers.lastIndex { $0.baseLSN <= start }
        var keep: [Manifest.Entry] = []
        for (i, h) in headers.enumerated() {
            if let first, i >= first, keep.isEmpty || h.baseLSN >= keep.last!.baseLSN {
                keep.append(.init(number: h.number, baseLSN: h.baseLSN))
            } else {
                try moveAside(Layout.segmentName(h.number))
            }
        }
        try ManifestWriter.replace(Manifest(generation: 1, checkpoint: checkpoint, segments: keep), directory: directory, fs: fs)
        return moved
    }
}

/// The lock of a read-only log: none is taken.
private final class NoLock: StoreLock {
    func release() {}
}

/// A store lock this process holds, registered by path while held, so that a second open of
/// the same store in this process is reported as such rather than as "locked by another
/// process" (an advisory file lock cannot tell the two apart).
final class RegisteredLock: StoreLock {
    /// How many locks this process holds per path. Counted, not a set: two file systems (the
    /// simulated ones of concurrent tests) may use the same path, and one releasing must not
    /// make the other's look free.
    private static let held = Mutex<[String: Int]>([:])
    private let inner: any StoreLock
    private let path: String
    private let released = Atomic<Bool>(false)

    init(_ inner: any StoreLock, path: String) {
        self.inner = inner
        self.path = path
        RegisteredLock.held.withLock { $0[path, default: 0] += 1 }
    }

    /// Whether this process holds the lock at `path` (as spelled when it was taken).
    static func isHeld(_ path: String) -> Bool { held.withLock { $0[path] != nil } }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        inner.release()
        RegisteredLock.held.withLock { held in
            held[path, default: 1] -= 1
            if held[path] == 0 { held[path] = nil }
        }
    }
}
