// Opening a store: the log opened (again, for salvage), then named steps — the checkpoint read,
// the log tail replayed, the store made, the background work started, the previous session ended.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// Opens (or creates) the store in `directory`.
    ///
    /// Reads the newest checkpoint's directory (tracked queries, pins, auth, transactions,
    /// onDisconnect, the indexes of the cache and of the pending writes) and replays the log
    /// after it. With ``Options/lazyCacheLoad`` the server cache is not decoded whole: a read
    /// decodes just the chunks it needs, and only what needs the whole cache (pruning, a
    /// checkpoint, a read of the whole state) loads it, until the next maintenance pass — and the checkpoint's
    /// pending writes are decoded when a read, view or write first touches a location they
    /// may be at (or when the whole list is needed), so open costs the same with 1,000 or
    /// 100,000 of them. Queries left active by the previous session become inactive.
    ///
    /// - Throws: ``StoreError/log(_:)`` when the store is locked by another process or
    ///   damaged (file and offset named), ``StoreError/invalidOption(_:)``, or a corrupt
    ///   checkpoint or record error.
    public static func open(directory: String, options: Options = Options()) throws(StoreError) -> Store {
        try options.validate()
        guard options.readOnly else { return try openOnce(directory: directory, options: options) }
        // Read-only, perhaps under a live writer: a checkpoint of that writer may replace the
        // MANIFEST and delete a segment between the scan and the replay, and a roll shrinks the
        // active segment before it publishes a new MANIFEST. Not damage: read again.
        return try Rescan.retrying(directory: directory, fileSystem: options.fileSystem) {
            Result { () throws(StoreError) in try openOnce(directory: directory, options: options) }
        } verdict: { outcome in
            guard case .failure(let error) = outcome else { return .stands }
            if case .log(let e) = error { return .failed(e) }
            return .failed(nil)
        }.get()
    }

    private static func openOnce(directory: String, options: Options) throws(StoreError) -> Store {
        var logOptions = Log.Options()
        logOptions.readOnly = options.readOnly
        logOptions.segmentSize = options.effectiveSegmentSize
        logOptions.durability = options.durability
        logOptions.salvage = options.salvage
        logOptions.createIfMissing = options.createIfMissing
        logOptions.compressionLevel = options.logCompressionLevel
        logOptions.rawPayloadLimit = Store.rawRecordLimit
        var earlier: RecoveryReport?
        while true {
            let log: Log
            do { log = try Log.open(directory: directory, fileSystem: options.fileSystem, options: logOptions) } catch {
                throw .log(error)
            }
            var recovery = log.recovery
            if let first = earlier?.salvaged {
                // Salvage ran twice: report the first damage and every file moved aside.
                recovery.salvaged = (first.damage, first.movedAside + (recovery.salvaged?.movedAside ?? []))
            }
            var unreplayable: Log.SalvageCut?
            do {
                return try open(
                    directory: directory, options: options, log: log, recovery: recovery, unreplayable: &unreplayable)
            } catch {
                // Salvage: a record that passed its checksum but cannot be replayed is cut off
                // with everything after it, as a damaged record is (once).
                guard options.salvage, logOptions.salvageCut == nil, let cut = unreplayable else { throw error }
                try? log.close()
                logOptions.salvageCut = cut
                earlier = recovery
            }
        }
    }

    /// What open has read so far: the state, the checkpoint's reader while its cache is not
    /// loaded yet, and where the checkpoint and the log stand.
    private struct Opening {
        var loading = LoadingState(state: StoreState(), cacheLoaded: true)
        var reader: CheckpointReader?
        var checkpointLSN: LSN = 0
        var checkpointBytes: UInt64 = 0
        var lastLSN: LSN = 0
        var replayedBytes = 0
    }

    /// Reads the state of the log just opened: the checkpoint, then the records after it.
    /// `unreplayable` is set when a record after the checkpoint cannot be replayed.
    private static func open(
        directory: String, options: Options, log: Log, recovery: RecoveryReport,
        unreplayable: inout Log.SalvageCut?
    ) throws(StoreError) -> Store {
        var opening = try readCheckpoint(log, options: options)
        try replayTail(log, into: &opening, unreplayable: &unreplayable)
        let sessionLeftActive = opening.loading.state.trackedQueries.values.contains(where: \.active)
        let store = makeStore(directory: directory, options: options, log: log, recovery: recovery, opening)
        store.startBackgroundWork()
        // Read-only: the state as the log has it (no sessionStarted, no maintenance).
        if options.readOnly { return store }
        if sessionLeftActive { try store.endPreviousSession() }
        store.scheduleMaintenance(force: true)
        return store
    }

    /// The state as of the log's checkpoint: its directory, and — unless the cache loads lazily
    /// — its cache and pending writes decoded now.
    private static func readCheckpoint(_ log: Log, options: Options) throws(StoreError) -> Opening {
        var opening = Opening()
        guard let checkpoint = log.checkpoint else { return opening }
        let r = try readingCheckpoint { () throws(CheckpointError) in try CheckpointReader(checkpoint) }
        // Eager: the pending writes too (lazy: as reads, views and writes need them).
        if !options.lazyCacheLoad {
            try readingCheckpoint { () throws(CheckpointError) in try r.directory.state.writes.decodeAll() }
        }
        opening.loading = LoadingState(state: r.directory.state, cacheLoaded: false)
        opening.checkpointLSN = checkpoint.lsn
        opening.lastLSN = checkpoint.lsn
        opening.checkpointBytes = checkpoint.bodySize + checkpoint.referencedBytes
        if r.directory.chunks.isEmpty {
            opening.loading.finishLoading(cache: .empty, base: options.lazyCacheLoad ? r : nil)
        } else if !options.lazyCacheLoad {
            opening.loading.finishLoading(
                cache: try readingCheckpoint { () throws(CheckpointError) in try r.fullCache() })
        } else {
            opening.reader = r
        }
        return opening
    }

    /// Replays the log's records after the checkpoint onto `opening`. `unreplayable` is set
    /// when a record cannot be replayed (its events do not decode, or the log is damaged there).
    private static func replayTail(
        _ log: Log, into opening: inout Opening, unreplayable: inout Log.SalvageCut?
    ) throws(StoreError) {
        do {
            try log.replay(after: opening.checkpointLSN, knownTypes: [EventCodec.recordType]) { record in
                let events: [StoreEvent]
                do {
                    events = try EventCodec.decode(record.payload)
                } catch {
                    throw StoreError.corruptRecord(
                        file: record.file, offset: record.offset, lsn: record.lsn, reason: "\(error)")
                }
                // A prune in the tail (a crash between a prune and its checkpoint) is deferred
                // with the server events, as one committed with the cache not resident is.
                for e in events { opening.loading.apply(e) }
                opening.replayedBytes += record.payload.count
                opening.lastLSN = record.lsn
            }
        } catch let e as StoreError {
            if case let .corruptRecord(file, offset, _, reason) = e {
                unreplayable = Log.SalvageCut(file: file, offset: offset, reason: "undecodable events: \(reason)")
            }
            throw e
        } catch let e as LogError {
            if let file = e.file, let offset = e.offset {
                unreplayable = Log.SalvageCut(file: file, offset: offset, reason: e.description)
            }
            throw .log(e)
        } catch {
            throw .log(.invalidArgument("replay: \(error)"))
        }
    }

    /// The store over what open read, its views given the pending writes (region by region) and
    /// the list of views to rebuild.
    private static func makeStore(
        directory: String, options: Options, log: Log, recovery: RecoveryReport, _ opening: Opening
    ) -> Store {
        var core = Core(
            loading: opening.loading, reader: opening.reader, lastLSN: max(opening.lastLSN, log.lastLSN),
            checkpointLSN: opening.checkpointLSN, checkpointBodyBytes: opening.checkpointBytes,
            logBytesSinceCheckpoint: opening.replayedBytes)
        // Replaying the tail is what open costs beyond the directory (12–20 µs per pending
        // write of ~330 bytes of JSON): past `openReplayCheckpointBytes` the background
        // maintenance writes a checkpoint now rather than at the usual threshold, and the next
        // open reads it instead.
        core.checkpointRequested = opening.replayedBytes >= Store.openReplayCheckpointBytes
        core.views.restore(PersistedCacheReader(loading: opening.loading, reader: opening.reader), now: options.clock())
        return Store(directory: directory, options: options, log: log, recovery: recovery, core: core)
    }

    /// Starts the rebuild of the pins' views (from the checkpoint's
    /// chunks: the whole cache is not loaded for it).
    private func startBackgroundWork() {
        viewQueue.async { self.rebuildViews() }
    }

    /// Queries active in the previous session are not active now: a `sessionStarted` event.
    private func endPreviousSession() throws(StoreError) {
        do {
            try commit(durability: .buffered) { $0.append(.sessionStarted(at: $0.now)) }
        } catch {
            // (E.g. a load of the whole cache already failed and poisoned the store.) Open
            // fails, so close now: the background work ends and the lock is released
            // before the caller sees the error — not whenever the store is deallocated.
            try? close()
            throw error
        }
    }

    /// Log bytes replayed at open past which open's maintenance pass checkpoints.
    static let openReplayCheckpointBytes = 64 << 10
}
