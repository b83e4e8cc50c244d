import HearthLog
import HearthModel

/// Sizes and counts describing a store.
public struct StoreStats: Sendable {
    /// The live files and their sizes.
    public let files: [Log.FileSize]
    /// The whole on-disk footprint (checkpoint + live log + MANIFEST), in bytes.
    public let footprintBytes: UInt64
    /// The cap.
    public let cacheSizeBytes: Int
    /// Whether pinned data, active queries and pending writes alone exceed the cap (the store
    /// keeps them and says so here).
    public let capExceededByUnprunableData: Bool
    /// The LSN of the last commit and of the checkpoint.
    public let lastLSN: LSN
    /// See ``lastLSN``.
    public let checkpointLSN: LSN
    /// Raw event bytes in the log after the checkpoint.
    public let logBytesSinceCheckpoint: Int
    /// The encoded (uncompressed) size of the server cache (FORMAT.md's node encoding).
    public let serverCacheBytes: Int
    /// Counts of the state's parts.
    public let pendingWrites: Int
    /// See ``pendingWrites``.
    public let trackedQueries: Int
    /// See ``pendingWrites``.
    public let activeQueries: Int
    /// See ``pendingWrites``.
    public let pins: Int
    /// See ``pendingWrites``.
    public let transactions: Int
    /// See ``pendingWrites``.
    public let onDisconnectOperations: Int
    /// See ``pendingWrites``.
    public let untrackedEntries: Int
    /// Maintenance counters since open.
    public let checkpointsWritten: Int
    /// See ``checkpointsWritten``.
    public let pruneRounds: Int
}

extension Store {
    /// Current sizes and counts.
    ///
    /// Loads nothing: while the server cache is not resident, its size is measured from the
    /// checkpoint's chunk table, decoding only the chunks the server data since the checkpoint
    /// was written inside (Store+ChunkSizes.swift) — the size a load would measure.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a chunk it reads, or a
    ///   pending write's, is damaged.
    public func stats() throws(StoreError) -> StoreStats {
        try decodeCheckpointWrites()
        let (core, source) = self.core.withLock { ($0, $0.chunkSource) }
        let cacheBytes: Int
        if let source {
            cacheBytes = try chunkSizes(source).encodedSize
        } else if core.loading.cacheLoaded {
            cacheBytes = NodeCodec.encodedSize(core.loading.state.serverCache)
        } else {
            cacheBytes = NodeCodec.encodedSize(try fullyLoadedCore().loading.state.serverCache)
        }
        let (files, total): ([Log.FileSize], UInt64)
        do { (files, total) = try log.footprint() } catch { throw .log(error) }
        let s = core.loading.state
        return StoreStats(
            files: files, footprintBytes: total, cacheSizeBytes: options.cacheSizeBytes,
            capExceededByUnprunableData: core.capExceededByUnprunable,
            lastLSN: core.lastLSN, checkpointLSN: core.checkpointLSN,
            logBytesSinceCheckpoint: core.logBytesSinceCheckpoint,
            serverCacheBytes: cacheBytes,
            pendingWrites: s.pendingWrites.count, trackedQueries: s.trackedQueries.count,
            activeQueries: s.trackedQueries.values.count(where: \.active), pins: s.pins.count,
            transactions: s.transactions.count, onDisconnectOperations: s.onDisconnect.count,
            untrackedEntries: s.untracked.count, checkpointsWritten: core.checkpointsWritten,
            pruneRounds: core.prunedRounds)
    }
}
