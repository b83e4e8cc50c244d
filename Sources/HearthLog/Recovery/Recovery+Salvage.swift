// Salvage (`Log.Options.salvage`): instead of failing on damage, recovery keeps the longest valid
// prefix of the live log and moves everything else aside as `*.broken` (never deleting it), rebuilding
// the MANIFEST when it is damaged itself. Recovery.swift calls in here; each salvage is followed by a
// fresh scan.

extension Recovery {
    /// Salvages until the scan finds no damage other than a torn tail (bounded: a rebuilt MANIFEST
    /// may itself name damaged segments). Returns the damage first found and the files moved aside,
    /// or nil when there was nothing to salvage. Throws when damage remains.
    static func salvageAll(
        _ report: inout ScanReport, cut: SalvageCut?, directory: String,
        fs: any FileSystem
    ) throws(LogError) -> (damage: Damage, movedAside: [String])? {
        // Salvage also looks where the scan does not: the checkpoint body's checksum, and a
        // record the engine could not replay (the cut).
        var cut = cut
        try addSalvageFindings(&report, cut: &cut, directory: directory, fs: fs)
        guard let d = report.damage, !d.isTornTail else { return nil }
        var moved: [String] = []
        for _ in 0..<4 {
            guard let d2 = report.damage, !d2.isTornTail else { break }
            moved += try salvage(report, damage: d2, directory: directory, fs: fs)
            report = try Scanner.scan(directory: directory, fileSystem: fs, keepRecords: false)
            try addSalvageFindings(&report, cut: &cut, directory: directory, fs: fs)
        }
        if let d2 = report.damage, !d2.isTornTail { throw d2.error }
        return (d, moved)
    }

    /// In salvage mode, on a scan that found no damage (or only a torn tail): a checkpoint whose
    /// body fails its checksum (FORMAT.md §7) is damage, salvaged as a damaged checkpoint header
    /// is; then the cut the engine asked for (a record it could not replay), once, is damage at
    /// that record, salvaged as a damaged record is.
    static func addSalvageFindings(
        _ report: inout ScanReport, cut: inout SalvageCut?,
        directory: String, fs: any FileSystem
    ) throws(LogError) {
        if let d = report.damage, !d.isTornTail { return }
        guard let manifest = report.manifest else { return }
        if let ref = manifest.checkpoint {
            let name = Layout.checkpointName(ref.id)
            if let reason = try checkpointBodyDamage(directory: directory, name: name, ref: ref, fs: fs) {
                report.damage = Damage(
                    file: name, offset: UInt64(Layout.checkpointHeaderSize),
                    error: .corruption(file: name, offset: UInt64(Layout.checkpointHeaderSize), reason: reason),
                    isTornTail: false)
                report.damagedSegment = nil
                report.salvagePrefixEnd = nil
                return
            }
        }
        if let c = cut, let i = report.segments.firstIndex(where: { $0.file == c.file }),
            c.offset >= UInt64(Layout.segmentHeaderSize), c.offset < report.segments[i].validEnd
        {
            cut = nil
            report.damage = Damage(
                file: c.file, offset: c.offset, error: .corruption(file: c.file, offset: c.offset, reason: c.reason),
                isTornTail: false)
            report.damagedSegment = i
            report.salvagePrefixEnd = c.offset > UInt64(Layout.segmentHeaderSize) ? c.offset : nil
        }
    }

    /// Why the checkpoint body fails its checksum, or nil when it holds. Reads the body in pieces.
    static func checkpointBodyDamage(
        directory: String, name: String, ref: Manifest.CheckpointRef,
        fs: any FileSystem
    ) throws(LogError) -> String? {
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
    static func salvage(
        _ report: ScanReport, damage: Damage, directory: String,
        fs: any FileSystem
    ) throws(LogError) -> [String] {
        if report.manifest == nil {
            if case .unsupportedVersion = damage.error { throw damage.error }  // a newer writer's store
            return try rebuildManifest(directory: directory, fs: fs)
        }
        let checkpointFiles = [report.checkpoint?.file].compactMap { $0 } + report.referencedCheckpoints
        if checkpointFiles.contains(damage.file), report.damagedSegment == nil {
            // A damaged checkpoint header: move it aside and rebuild from what remains (the log then
            // keeps only what it can replay from LSN 1, possibly nothing; all of it moved, not deleted).
            // A damaged referenced file goes the same way: the current checkpoint stays, and the
            // engine's chunk checksums report what it held. A checkpoint the MANIFEST names but
            // that is missing has nothing to move aside.
            guard try logIO({ try fs.listDirectory(directory) }).contains(damage.file) else {
                return try rebuildManifest(directory: directory, fs: fs)
            }
            let b = damage.file + Layout.brokenSuffix
            try logIO { try fs.rename(from: joinPath(directory, damage.file), to: joinPath(directory, b)) }
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
        let keptLast: LSN =
            prefixEnd != nil
            ? report.segments[i].lastLSN
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
    /// the files present: the checkpoint with the highest id whose header is intact (referencing every
    /// older intact one at or below its LSN, which its body may read chunks from), and the run of
    /// segments (by number, with intact headers) starting at the last one whose base LSN is ≤ the
    /// checkpoint LSN + 1. Segments not chosen are moved aside, never deleted. The scan that follows
    /// checks LSN continuity and the chain (and may salvage again).
    static func rebuildManifest(directory: String, fs: any FileSystem) throws(LogError) -> [String] {
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
        var references: [Manifest.CheckpointRef] = []
        for id in names.compactMap(Layout.checkpointID(fromName:)).sorted(by: >) {
            let n = Layout.checkpointName(id)
            let header: CheckpointHeader? = try? {
                () throws(LogError) -> CheckpointHeader in
                let f = try logIO { try fs.open(joinPath(directory, n), mode: .readOnly) }
                defer { try? f.close() }
                let h = try CheckpointHeader.decode(
                    try logIO { try f.read(at: 0, count: Layout.checkpointHeaderSize) }, file: n)
                guard h.id == id, try logIO({ try f.size() }) == UInt64(Layout.checkpointHeaderSize) + h.bodyLength
                else {
                    throw .corruption(file: n, offset: 0, reason: "checkpoint id or size mismatch")
                }
                return h
            }()
            if let h = header, checkpoint == nil {
                checkpoint = .init(id: h.id, lsn: h.lsn, bodyLength: h.bodyLength, bodyCRC: h.bodyCRC)
            } else if let h = header, let c = checkpoint, h.lsn <= c.lsn,
                references.count < Layout.maxManifestReferences
            {
                references.insert(.init(id: h.id, lsn: h.lsn, bodyLength: h.bodyLength, bodyCRC: h.bodyCRC), at: 0)
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
                let h = try SegmentHeader.decode(
                    try logIO { try f.read(at: 0, count: Layout.segmentHeaderSize) }, file: n)
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
        try ManifestWriter.replace(
            Manifest(generation: 1, checkpoint: checkpoint, segments: keep, references: references),
            directory: directory, fs: fs)
        return moved
    }
}
