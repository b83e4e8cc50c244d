import HearthLog
import HearthModel

// What the store keeps resident of the server cache.
//
// A store opened lazily (``Store/Options/lazyCacheLoad``, the default) does not decode its
// checkpoint's cache into nodes at open: reads, views and writes work from the checkpoint's
// chunks (decoded on demand, under the reader's byte-bounded LRU, ChunkMemo.swift) with the
// server events since the checkpoint projected onto them (LoadingState). Only what needs the
// cache whole loads it — pruning to a size (its estimate measures the cache), ``Store/state()``,
// ``Store/stats()`` — and the end of each maintenance pass drops it again once it is a known
// checkpoint's cache plus server events (LoadingState.dropCache) and no server data has
// arrived for a second (``dropResidentCacheIfQuiet()``): after the pass's checkpoint is
// durable, the store goes back to reading chunks, now from that checkpoint.
//
// A checkpoint of a cache not resident is written from its chunks (Store+ChunkCheckpoint.swift),
// and pruning by the number of inactive queries chooses its rounds from the state's metadata and
// defers its event with the server events: neither loads the cache.
//
// The price: an operation that needs the whole cache pays a full decode (the checkpoint's
// chunks, ~1–2 ms per 64 KiB) when it is not resident; the peak then is the old one for the
// length of that operation. Between checkpoints the server events since the last one stay
// in the deferred list (bounded by the checkpoint threshold: a checkpoint is due once the
// log since the last one passes it, and that checkpoint folds them in).

/// Serializes the store's loads and drops of the whole server cache, and counts them.
final class ResidentCache: Sendable {
    struct Counters: Sendable {
        var loads = 0
        var drops = 0
        /// Readers built at a drop, of a checkpoint installed while the cache was resident
        /// (LoadingState.Base): one per drop at most, none per install.
        var baseReads = 0
        /// Cache chunks the checkpoints since open copied from the previous checkpoint, and
        /// encoded anew (tests: that reuse happens).
        var copiedChunks = 0
        /// See ``copiedChunks``.
        var encodedChunks = 0
        /// Copies refused because the old chunk (cache or writes) failed its CRC (then encoded
        /// instead).
        var rejectedCopies = 0
        /// Pending-write chunks the checkpoints since open copied from the previous one.
        var copiedWriteChunks = 0
        /// Pending-write chunks the checkpoints since open wrote as prepared in memory
        /// (Store+WritePreparation.swift).
        var preparedWriteChunks = 0
        /// Raw bytes of the cache chunks copied (``copiedChunks``), and encoded anew.
        var copiedRawBytes = 0
        /// See ``copiedRawBytes``.
        var encodedRawBytes = 0
        /// Of ``copiedChunks``: those referenced where they are rather than copied (FORMAT.md
        /// §7.1, Store+ChunkFiles.swift).
        var referencedChunks = 0
        /// Checkpoints written from the chunks of a cache that was not resident
        /// (Store+ChunkCheckpoint.swift), and the chunks they decoded (tests: that they decode
        /// only the chunks their events write inside).
        var chunkCheckpoints = 0
        /// See ``chunkCheckpoints``.
        var chunkCheckpointDecodes = 0

        /// Adds what one checkpoint's encoding copied, prepared and encoded.
        mutating func add(_ summary: CheckpointEncoder.Summary) {
            copiedChunks += summary.copiedChunks
            referencedChunks += summary.referencedChunks
            encodedChunks += summary.encodedChunks
            rejectedCopies += summary.rejectedCopies
            copiedWriteChunks += summary.copiedWriteChunks
            preparedWriteChunks += summary.preparedWriteChunks
            copiedRawBytes += summary.copiedRawBytes
            encodedRawBytes += summary.encodedRawBytes
        }
    }

    /// Held for a whole load (the decode runs outside the store's lock, under this one) or
    /// drop. Lock order: this, then the store's `core`.
    let gate = Locked(())
    /// Taken alone, briefly (also under `core`).
    let counters = Locked(Counters())
}

extension Store {
    /// How much of the server cache is resident (tests, tooling).
    struct ResidentCacheStats: Sendable, Equatable {
        /// Whether the whole server cache is decoded in the state.
        var cacheResident: Bool
        /// Whether the resident cache can be dropped back to a checkpoint.
        var droppable: Bool
        /// Loads of the whole cache and drops of it since open.
        var loads: Int
        /// See ``loads``.
        var drops: Int
        /// Readers of the checkpoint the cache drops to, built at a drop (not at the install).
        var baseReads: Int
        /// Server events kept for projection onto chunks while the cache is not resident.
        var deferredEvents: Int
        /// Chunks the current reader keeps decoded, and their raw bytes.
        var decodedChunks: Int
        /// See ``decodedChunks``.
        var decodedChunkBytes: Int
        /// Checkpoints written from the chunks of a cache not resident, and the chunks they
        /// decoded (``ResidentCache/Counters/chunkCheckpoints``).
        var chunkCheckpoints = 0
        /// See ``chunkCheckpoints``.
        var chunkCheckpointDecodes = 0
    }

    /// How much of the server cache is resident now.
    var residentCacheStats: ResidentCacheStats {
        let counters = resident.counters.withLock { $0 }
        return core.withLock { core in
            ResidentCacheStats(
                cacheResident: core.loading.cacheLoaded, droppable: core.loading.canDropCache,
                loads: counters.loads, drops: counters.drops, baseReads: counters.baseReads,
                deferredEvents: core.loading.deferred.count,
                decodedChunks: core.reader?.decodedChunkCount ?? 0,
                decodedChunkBytes: core.reader?.decodedChunkBytes ?? 0, chunkCheckpoints: counters.chunkCheckpoints,
                chunkCheckpointDecodes: counters.chunkCheckpointDecodes)
        }
    }

    /// Loads the whole server cache if it is not resident. A failure (a damaged chunk, an I/O
    /// error) poisons the store, as it did when the whole cache was loaded at open: the state
    /// it would have is unknown.
    func ensureCacheLoaded() throws(StoreError) {
        try resident.gate.withLock { (_: inout Void) throws(StoreError) in try loadCacheHoldingGate() }
    }

    /// ``ensureCacheLoaded()``'s work, by a caller that holds `resident.gate`.
    func loadCacheHoldingGate() throws(StoreError) {
        let (reader, failure) = core.withLock { ($0.reader, $0.loadError) }
        if let failure { throw failure }
        guard let reader else { return }
        let cache: Node
        let origins: ChunkOrigins
        do throws(StoreError) {
            (cache, origins) = try readingCheckpoint { () throws(CheckpointError) in
                try reader.fullCacheWithOrigins()
            }
        } catch {
            core.withLock {
                $0.loadError = error
                $0.poisoned = $0.poisoned ?? "checkpoint load failed: \(error)"
            }
            throw error
        }
        let installed = core.withLock { core -> Bool in
            // A commit may have loaded it meanwhile (loadCacheUnderLock).
            guard !core.loading.cacheLoaded, core.reader === reader else { return false }
            core.loading.finishLoading(cache: cache, base: options.lazyCacheLoad ? reader : nil)
            core.reader = nil
            core.cacheOrigins = origins
            return true
        }
        reader.dropDecoded()
        if installed { resident.counters.withLock { $0.loads += 1 } }
    }

    /// Loads the whole server cache under the store's lock, if it is not resident: for a
    /// whole-state read whose load a maintenance pass dropped before its copy
    /// (``residentCore()``).
    func loadCacheUnderLock(_ core: inout Core) throws(StoreError) {
        guard !core.loading.cacheLoaded, let reader = core.reader else { return }
        let (cache, origins) = try readingCheckpoint { () throws(CheckpointError) in
            try reader.fullCacheWithOrigins()
        }
        core.loading.finishLoading(cache: cache, base: options.lazyCacheLoad ? reader : nil)
        core.reader = nil
        core.cacheOrigins = origins
        reader.dropDecoded()
        resident.counters.withLock { $0.loads += 1 }
    }

    /// Drops the resident server cache back to the checkpoint it is based on (reads then
    /// decode that checkpoint's chunks again). Does nothing for an eagerly loaded store, or
    /// when the cache is not a known checkpoint's plus server events. Returns whether it
    /// dropped. Called at the end of a maintenance pass (never while one prunes or
    /// checkpoints: both need the cache to stay resident from their snapshot to their commit).
    @discardableResult
    func dropResidentCache() -> Bool {
        guard options.lazyCacheLoad else { return false }
        return resident.gate.withLock { _ in
            // The reader of a checkpoint installed since the load is built now, outside the
            // store's lock: it reads and decodes the checkpoint's directory.
            if let checkpoint = core.withLock({ $0.loading.cacheLoaded ? $0.loading.unreadBase : nil }) {
                let reader = try? CheckpointReader(checkpoint)
                resident.counters.withLock { $0.baseReads += 1 }
                core.withLock { $0.loading.readBase(reader, of: checkpoint) }
            }
            let dropped = core.withLock { core -> Bool in
                guard let reader = core.loading.dropCache() else { return false }
                core.reader = reader
                core.cacheOrigins = nil
                return true
            }
            if dropped { resident.counters.withLock { $0.drops += 1 } }
            return dropped
        }
    }

    /// Drops the resident cache (``dropResidentCache()``) unless a server event was committed
    /// within ``Options/residentCacheQuietNanos`` before `start` (when the maintenance pass
    /// began) or since: the end of a maintenance pass. Measured from the pass's start because
    /// writers that outrun maintenance wait for it (backpressure, Store+Queue.swift): a pass
    /// longer than the quiet period would otherwise always end "quiet" under a stream.
    ///
    /// Under a stream of server data (a cache fill, a busy kept-synced location) every
    /// checkpoint needs the whole cache, so dropping it after each pass made the next one
    /// decode the whole checkpoint again — the fill's maintenance cost twice its commits, and
    /// the decoded copies (which share nothing with the nodes the events carry) raised its
    /// peak RSS by ~1 GB. So the cache stays resident while server data keeps coming, and
    /// the first pass after a quiet period drops it. Returns whether it dropped.
    @discardableResult
    func dropResidentCacheIfQuiet(asOf start: UInt64 = monotonicNanos()) -> Bool {
        let last = core.withLock { $0.lastServerEventNanos }
        guard Store.isQuiet(lastServerEvent: last, now: start, quiet: options.residentCacheQuietNanos) else {
            return false
        }
        return dropResidentCache()
    }

    /// Cache chunks the checkpoints since open copied from the previous checkpoint and
    /// encoded anew, and their raw bytes (benchmarks: how much of each checkpoint is reused).
    @_spi(HearthInternals) public var checkpointChunkCounts:
        (copied: Int, encoded: Int, copiedRawBytes: Int, encodedRawBytes: Int)
    {
        let c = resident.counters.withLock { $0 }
        return (c.copiedChunks, c.encodedChunks, c.copiedRawBytes, c.encodedRawBytes)
    }

    /// Whether no server event came within `quiet` nanoseconds before `now`, nor after it
    /// (`lastServerEvent` 0: none since open).
    static func isQuiet(lastServerEvent: UInt64, now: UInt64, quiet: UInt64) -> Bool {
        lastServerEvent == 0 || (lastServerEvent <= now && now - lastServerEvent >= quiet)
    }

    /// Called under the lock in the critical section that takes a checkpoint's snapshot.
    func checkpointSnapshotTaken(_ core: inout Core) {
        if options.lazyCacheLoad { core.loading.checkpointSnapshotTaken() }
    }

    /// After a checkpoint install through `lsn` succeeded (`true`) or failed: the new
    /// checkpoint becomes the base the resident cache can be dropped to, and `origins` (what
    /// its chunks encode, recorded by its encoder) what the next checkpoint may copy while the
    /// cache stays resident. `readable` false (close's checkpoint): it does not become the
    /// base, which stays what it was.
    func checkpointFinished(lsn: LSN, installed: Bool, origins: ChunkOrigins? = nil, readable: Bool = true) {
        var base: Checkpoint?
        if installed, readable, options.lazyCacheLoad, let checkpoint = log.checkpoint, checkpoint.lsn == lsn {
            base = checkpoint
        }
        // What the store stops holding is released after its lock, not under it.
        let released = core.withLock { core -> ([StoreEvent], ChunkOrigins?) in
            let events = core.loading.checkpointInstalled(base)
            // The old checkpoint's origins are not kept alive past the next one; the new ones
            // only for a resident cache (a dropped one is read from the new checkpoint).
            guard installed else { return (events, nil) }
            var old = core.loading.cacheLoaded ? origins : nil
            swap(&old, &core.cacheOrigins)
            return (events, old)
        }
        withExtendedLifetime(released) {}
    }
}
