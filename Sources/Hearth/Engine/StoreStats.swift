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
    /// The encoded (uncompressed) size of the server cache.
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
    /// Current sizes and counts (loads the whole server cache if it is not resident).
    public func stats() throws(StoreError) -> StoreStats {
        let core = try fullyLoadedCore()
        let (files, total): ([Log.FileSize], UInt64)
        do { (files, total) = try log.footprint() } catch { throw .log(error) }
        let s = core.loading.state
        return StoreStats(
            files: files, footprintBytes: total, cacheSizeBytes: options.cacheSizeBytes,
            capExceededByUnprunableData: core.capExceededByUnprunable,
            lastLSN: core.lastLSN, checkpointLSN: core.checkpointLSN,
            logBytesSinceCheckpoint: core.logBytesSinceCheckpoint,
            serverCacheBytes: NodeCodec.encodedSize(s.serverCache),
            pendingWrites: s.pendingWrites.count, trackedQueries: s.trackedQueries.count,
            activeQueries: s.trackedQueries.values.count(where: \.active), pins: s.pins.count,
            transactions: s.transactions.count, onDisconnectOperations: s.onDisconnect.count,
            untrackedEntries: s.untracked.count, checkpointsWritten: core.checkpointsWritten,
            pruneRounds: core.prunedRounds)
    }
}
