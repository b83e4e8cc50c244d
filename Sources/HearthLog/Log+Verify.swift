// Read-only access for tooling (`hearth verify`, `hearth dump`): scan a store, or open its
// checkpoint, without a lock or recovery — through the same scanner recovery runs.

extension Log {
    /// Scans the store read-only and reports every record and any damage, exactly as recovery would
    /// judge it (recovery runs the same scan). Never writes, and does not take the lock: run it on a
    /// store no one is writing to.
    ///
    /// A writer may replace the MANIFEST and delete the files a new checkpoint covers while the
    /// scan reads them; a file vanishing that way is not damage. Nor is the active segment
    /// shrinking under the scan: a roll cuts off its preallocated zeros before the new MANIFEST
    /// names the next segment. So when a scan fails or finds damage (other than a torn tail), and
    /// the MANIFEST's generation has moved on meanwhile or a file shrank while it was read, the
    /// scan starts again from the MANIFEST on disk — at most ``verifyAttempts`` times, after
    /// which the last result stands (a writer checkpointing faster than a whole scan runs).
    public static func verify(
        directory: String, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(LogError) -> ScanReport {
        try verify(directory: directory, fileSystem: fileSystem, progress: nil)
    }

    /// ``verify(directory:fileSystem:)``, calling `progress` now and then with the segment bytes
    /// scanned so far (of the live segments' total size; a scan that starts again starts from 0).
    package static func verify(
        directory: String, fileSystem: any FileSystem,
        progress: ((_ bytesScanned: UInt64) -> Void)?
    ) throws(LogError) -> ScanReport {
        guard fileSystem.directoryExists(directory) else { throw .storeMissing(path: directory) }
        return try Rescan.retrying(directory: directory, fileSystem: fileSystem) {
            Result { () throws(LogError) in
                try Scanner.scan(directory: directory, fileSystem: fileSystem, keepRecords: true, progress: progress)
            }
        } verdict: { outcome in
            switch outcome {
            case .success(let report):
                if let damage = report.damage, !damage.isTornTail { .failed(damage.error) } else { .stands }
            case .failure(let error): .failed(error)
            }
        }.get()
    }

    /// How many times ``verify(directory:fileSystem:)`` scans a store whose MANIFEST keeps moving.
    public static let verifyAttempts = Scanner.rescanAttempts

    /// The generation of the MANIFEST on disk now, or nil when it cannot be read.
    package static func manifestGeneration(_ directory: String, _ fs: any FileSystem) -> UInt64? {
        Scanner.manifestGeneration(directory, fs)
    }

    /// Opens the checkpoint the MANIFEST names, with the files it references
    /// (``Checkpoint/referenced``), read-only, without taking the store's lock or running
    /// recovery (for tools; run it on a store no one is writing to). Verifies the MANIFEST and
    /// the checkpoint headers exactly as ``verify(directory:fileSystem:)`` does; the bodies are
    /// read on demand. Returns nil when the store has no checkpoint.
    public static func openCheckpoint(
        directory: String, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(LogError) -> Checkpoint? {
        try Scanner.openCheckpoint(fileSystem, directory)
    }

    /// Reads the records of the segment file `name` in `directory` (any name, such as a
    /// `*.broken` file), checking each as recovery does but without the MANIFEST: from its
    /// header's base LSN on, up to the first invalid record; then every checksum-valid record
    /// after that (at 8-byte aligned offsets, as records are written). Nil when the file cannot
    /// be opened or its header is damaged.
    package static func scanSegmentFile(
        directory: String, name: String,
        fileSystem fs: any FileSystem = POSIXFileSystem()
    ) -> SegmentFileScan? {
        SegmentFileScan.read(directory: directory, name: name, fileSystem: fs)
    }
}
