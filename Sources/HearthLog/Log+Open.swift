// The opener: the one place a log is put together, one way down.
//
// Order of an open (each step uses only the layers below it; nothing below reaches up to `Log`):
//  1. Validate `Log.Options` and split them: `RecoveryOptions` for recovery, `WriterSettings` for
//     the write side.
//  2. Recovery (Recovery/): take the lock, scan, act on the scan's verdict (remove temp and stray
//     files, truncate a torn tail, sync), and return a `RecoveredState`. A read-only open only
//     scans. On failure recovery has released the lock.
//  3. The write side (GroupCommit/): a `LogCore` built from the recovered state, appending at the
//     recovered tail — or, with no live segment (new store, or a crash before the first segment was
//     named), after its first roll, which writes that segment's header. A failure here releases the
//     lock: nothing is acknowledged yet.
//  4. The `.batched` flusher thread (writable opens only).
//  5. The public face: a `Log` holding the core and the recovery report.

extension Log {
    /// Opens (creating if allowed) the store in `directory`: takes its lock, removes temp files and
    /// files the MANIFEST does not name, and recovers (truncating a torn tail of the last segment).
    ///
    /// Throws ``LogError/storeLocked(path:)`` if another opener holds the lock, and a corruption
    /// error naming file and offset for damage other than a torn tail (unless `options.salvage`).
    public static func open(
        directory: String, fileSystem: any FileSystem = POSIXFileSystem(),
        options: Options = Options()
    ) throws(LogError) -> Log {
        guard options.segmentSize >= 4096, (0...9).contains(options.compressionLevel),
            options.maxBatchBytes >= 4096, options.rawPayloadLimit >= 0
        else {
            throw .invalidArgument(
                "segmentSize ≥ 4096, compressionLevel 0...9, maxBatchBytes ≥ 4096, rawPayloadLimit ≥ 0")
        }
        let settings = WriterSettings(
            segmentSize: options.segmentSize, maxBatchBytes: options.maxBatchBytes,
            compressionLevel: options.compressionLevel, rawPayloadLimit: options.rawPayloadLimit,
            durability: options.durability, readOnly: options.readOnly)
        if options.readOnly {
            let state = try Recovery.openReadOnly(directory: directory, fs: fileSystem)
            let core = core(state, settings, fileSystem, directory)
            if let zeros = state.report.preallocatedTail, let last = state.manifest.segments.last {
                // The writer's preallocated zeros (FORMAT.md §4.2) are not part of the footprint.
                core.recordsEnd.withLock { $0 = (last.number, zeros.offset) }
            }
            return Log(directory: directory, core: core, recovery: state.report)
        }
        let state = try Recovery.open(
            directory: directory, fs: fileSystem,
            options: RecoveryOptions(
                createIfMissing: options.createIfMissing,
                salvage: options.salvage, salvageCut: options.salvageCut))
        let core = core(state, settings, fileSystem, directory)
        if let tail = state.tail {
            core.active = tail
        } else {
            // Open fails on any failure here (nothing is acknowledged yet).
            do throws(RollFailure) { try core.roll(nextLSN: state.lastLSN + 1) } catch {
                state.lock.release()
                throw error.error
            }
        }
        core.startFlusher()
        return Log(directory: directory, core: core, recovery: state.report)
    }

    /// The write side over a recovered store.
    private static func core(
        _ state: RecoveredState, _ settings: WriterSettings, _ fs: any FileSystem,
        _ directory: String
    ) -> LogCore {
        LogCore(
            fs: fs, directory: directory, settings: settings, lastLSN: state.lastLSN,
            manifest: state.manifest, checkpoint: state.checkpoint, lock: state.lock)
    }
}
