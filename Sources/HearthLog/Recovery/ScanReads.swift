// The small files a scan reads whole and verifies: the MANIFEST and a checkpoint file's header.
// Tooling (`Log.verify`, `Log.openCheckpoint`, `hearth dump`) reads them through here too, so they
// judge a store exactly as recovery does.

extension Scanner {
    /// How many times a scan runs on a store whose MANIFEST keeps moving (a writer checkpointing
    /// meanwhile) before the last result stands.
    static let rescanAttempts = 8

    /// The largest MANIFEST this version reads (refused before allocating).
    static let manifestSizeLimit =
        Layout.manifestFixedSize + 4 + Layout.manifestEntrySize * Layout.maxManifestSegments
        + Layout.manifestReferenceSize * Layout.maxManifestReferences

    /// The MANIFEST on disk now, decoded.
    static func readManifest(_ fs: any FileSystem, _ directory: String) throws(LogError) -> Manifest {
        try Manifest.decode(try readWhole(fs, directory, Layout.manifestName, limit: manifestSizeLimit))
    }

    /// The generation of the MANIFEST on disk now, or nil when it cannot be read.
    static func manifestGeneration(_ directory: String, _ fs: any FileSystem) -> UInt64? {
        try? readManifest(fs, directory).generation
    }

    /// Whether a read-only pass (a scan, a read-only open) that failed with `error`, or found
    /// damage `error`, reads a store a writer changed under it, and so should start again rather
    /// than report damage: the MANIFEST's generation moved on since `before` (a checkpoint
    /// deleted files the pass was reading), or a file shrank under the reader (a roll cut the
    /// active segment's preallocated zeros, which happens before its new MANIFEST is published:
    /// ``LogError/isShrinkUnderReader``). The caller bounds the attempts (``rescanAttempts``).
    static func worthRescanning(
        _ error: LogError?, since before: UInt64?, _ directory: String, _ fs: any FileSystem
    ) -> Bool {
        if error?.isShrinkUnderReader == true { return true }
        return manifestGeneration(directory, fs) != before
    }

    /// Reads a whole small file, refusing files larger than `limit` before allocating.
    static func readWhole(_ fs: any FileSystem, _ dir: String, _ name: String, limit: Int) throws(LogError) -> [UInt8] {
        let f = try logIO { try fs.open(joinPath(dir, name), mode: .readOnly) }
        defer { try? f.close() }
        let size = try logIO { try f.size() }
        guard size <= UInt64(limit) else {
            throw .corruption(file: name, offset: 0, reason: "file size \(size) exceeds the limit \(limit)")
        }
        return try logIO { try f.read(at: 0, count: Int(size)) }
    }

    /// Checks a checkpoint file's header against the MANIFEST and the file size.
    static func verifyCheckpointHeader(
        _ fs: any FileSystem, _ dir: String, _ ref: Manifest.CheckpointRef,
        exists: Bool
    ) throws(LogError) -> CheckpointHeader {
        let name = Layout.checkpointName(ref.id)
        guard exists else { throw .missingFile(file: name) }
        let f = try logIO { try fs.open(joinPath(dir, name), mode: .readOnly) }
        defer { try? f.close() }
        let size = try logIO { try f.size() }
        let hb = try logIO { try f.read(at: 0, count: Layout.checkpointHeaderSize) }
        let h = try CheckpointHeader.decode(hb, file: name)
        guard h.id == ref.id, h.lsn == ref.lsn, h.bodyLength == ref.bodyLength, h.bodyCRC == ref.bodyCRC else {
            throw .corruption(file: name, offset: 16, reason: "checkpoint header disagrees with the MANIFEST")
        }
        guard size == UInt64(Layout.checkpointHeaderSize) + h.bodyLength else {
            throw .corruption(
                file: name, offset: size,
                reason: "checkpoint file size \(size) does not match its body length \(h.bodyLength)")
        }
        return h
    }

    /// The checkpoint `ref` names, opened for reading; its header decoded (checked against the
    /// MANIFEST by the scan that found `ref`).
    static func checkpointHandle(
        _ fs: any FileSystem, _ directory: String,
        _ ref: Manifest.CheckpointRef, referenced: [Checkpoint] = []
    ) throws(LogError) -> Checkpoint {
        let name = Layout.checkpointName(ref.id)
        let f = try logIO { try fs.open(joinPath(directory, name), mode: .readOnly) }
        let hb = try logIO { try f.read(at: 0, count: Layout.checkpointHeaderSize) }
        return Checkpoint(header: try CheckpointHeader.decode(hb, file: name), file: f, referenced: referenced)
    }

    /// The checkpoint `manifest` names with the files it references, opened for reading
    /// (headers checked by the scan that read `manifest`); nil when it names none.
    static func checkpointHandle(
        _ fs: any FileSystem, _ directory: String, _ manifest: Manifest
    ) throws(LogError) -> Checkpoint? {
        guard let ref = manifest.checkpoint else { return nil }
        var referenced: [Checkpoint] = []
        for r in manifest.references { referenced.append(try checkpointHandle(fs, directory, r)) }
        return try checkpointHandle(fs, directory, ref, referenced: referenced)
    }

    /// The checkpoint the MANIFEST names, verified as a scan verifies it (MANIFEST, header), without
    /// a lock or recovery; nil when the store has no checkpoint.
    static func openCheckpoint(_ fs: any FileSystem, _ directory: String) throws(LogError) -> Checkpoint? {
        guard fs.directoryExists(directory) else { throw .storeMissing(path: directory) }
        let names = try logIO { try fs.listDirectory(directory) }
        guard names.contains(Layout.manifestName) else { return nil }
        let manifest = try readManifest(fs, directory)
        guard let ref = manifest.checkpoint else { return nil }
        let name = Layout.checkpointName(ref.id)
        let header = try verifyCheckpointHeader(fs, directory, ref, exists: names.contains(name))
        var referenced: [Checkpoint] = []
        for r in manifest.references {
            let h = try verifyCheckpointHeader(fs, directory, r, exists: names.contains(Layout.checkpointName(r.id)))
            let f = try logIO { try fs.open(joinPath(directory, Layout.checkpointName(r.id)), mode: .readOnly) }
            referenced.append(Checkpoint(header: h, file: f))
        }
        let file = try logIO { try fs.open(joinPath(directory, name), mode: .readOnly) }
        return Checkpoint(header: header, file: file, referenced: referenced)
    }
}
