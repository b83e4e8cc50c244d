import Dispatch
import HearthLog
import HearthModel

// Checkpoints, the size cap and LRU pruning.
//
// Maintenance runs on one serial queue (or inline, with `backgroundMaintenance` off), never
// under the store's lock for long: a checkpoint snapshots the state (O(1): persistent
// structures), encodes and writes it while writers go on, and takes the lock again only to
// record what it did. The log switches the MANIFEST to the new checkpoint and deletes the
// segments it covers only after the checkpoint is durable.

extension Store {
    /// The estimated footprint after pruning must fall below this share of the cap, leaving
    /// room for the live log (one segment is at most a quarter of the cap) between checkpoints.
    static let pruneTarget = 0.7

    /// Runs maintenance now (inline) or on the maintenance queue.
    func scheduleMaintenance(force: Bool) {
        let go = core.withLock { core -> Bool in
            if core.maintenancePending || core.closed { return false }
            core.maintenancePending = true
            return true
        }
        guard go else { return }
        if options.backgroundMaintenance {
            maintenanceQueue.async { [self] in
                try? maintain(force: force)
            }
        } else {
            try? maintain(force: force)
        }
    }

    /// Checkpoints when the log since the last checkpoint passed its threshold, and prunes
    /// while the footprint is over the cap (or too many inactive queries are tracked).
    func maintain(force: Bool) throws(StoreError) {
        defer { core.withLock { $0.maintenancePending = false } }
        _ = try fullyLoadedCore()
        let (sinceCheckpoint, threshold, closed) = core.withLock { core in
            core.bytesSinceSizeCheck = 0
            return (core.logBytesSinceCheckpoint, checkpointThreshold(core), core.closed)
        }
        if closed { return }
        var footprint = try footprintBytes()
        if sinceCheckpoint >= threshold || footprint > UInt64(options.cacheSizeBytes) {
            try writeCheckpoint()
            footprint = try footprintBytes()
        }
        let tooManyQueries = core.withLock { Pruner.inactiveQueryCount($0.loading.state) > options.maxInactiveQueries }
        if footprint > UInt64(options.cacheSizeBytes) || tooManyQueries {
            try prune()
            try writeCheckpoint()
            footprint = try footprintBytes()
            core.withLock { $0.capExceededByUnprunable = footprint > UInt64(options.cacheSizeBytes) }
        } else if force {
            core.withLock { $0.capExceededByUnprunable = false }
        }
    }

    /// The bytes of the live files (MANIFEST, checkpoint, segments).
    func footprintBytes() throws(StoreError) -> UInt64 {
        do { return try log.footprint().total } catch { throw .log(error) }
    }

    /// Prunes in rounds until the estimated checkpoint fits the target share of the cap and
    /// the inactive queries are within their limit, or nothing prunable is left.
    func prune() throws(StoreError) {
        let target = Double(options.cacheSizeBytes) * Store.pruneTarget
        var lastCandidates = Int.max
        while true {
            let (state, ratio) = core.withLock { ($0.loading.state, $0.compressionRatio) }
            let estimate = Store.estimatedCheckpointBytes(state, ratio: ratio)
            let inactive = Pruner.inactiveQueryCount(state)
            if estimate <= target && inactive <= options.maxInactiveQueries { return }
            let candidates = Pruner.candidates(state, protected: Pruner.protectedPaths(state)).count
            guard candidates < lastCandidates, let result = Pruner.round(state, maxInactiveQueries: options.maxInactiveQueries) else { return }
            lastCandidates = candidates
            try commit(durability: .buffered) { $0.append(.cachePruned(result)) }
            core.withLock { $0.prunedRounds += 1 }
        }
    }

    /// An estimate of the checkpoint body for `state`: the cache's encoded size times the
    /// last checkpoint's compression ratio, plus the other state uncompressed.
    static func estimatedCheckpointBytes(_ state: StoreState, ratio: Double) -> Double {
        let cache = Double(NodeCodec.encodedSize(state.serverCache))
        var meta = 0
        for w in state.pendingWrites {
            switch w.operation {
            case .set(let n): meta += NodeCodec.encodedSize(n) + 16
            case .update(let c): meta += c.reduce(16) { $0 + NodeCodec.encodedSize($1.node) + 16 }
            }
        }
        meta += state.trackedQueries.count * 64 + state.trackedQueries.values.reduce(0) { $0 + ($1.keys?.count ?? 0) * 16 }
        meta += state.untracked.count * 32
        return cache * ratio + Double(meta)
    }

    /// Writes a checkpoint of the state as of the last commit, unless one exists at that LSN.
    func writeCheckpoint() throws(StoreError) {
        _ = try fullyLoadedCore()
        let (state, lsn, checkpointLSN, bytesAtSnapshot) = core.withLock {
            ($0.loading.state, $0.lastLSN, $0.checkpointLSN, $0.logBytesSinceCheckpoint)
        }
        guard lsn > checkpointLSN else { return }
        let encoder = CheckpointEncoder(compressionLevel: options.compressionLevel)
        var summary = CheckpointEncoder.Summary()
        let clock = ContinuousClock()
        let start = clock.now
        do {
            try log.installCheckpoint(lsn: lsn) { writer in
                summary = try encoder.encode(state) { bytes in try writer.write(bytes) }
            }
        } catch {
            throw .log(error)
        }
        let elapsed = clock.now - start
        core.withLock { core in
            core.checkpointLSN = max(core.checkpointLSN, lsn)
            core.checkpointBodyBytes = summary.bodyBytes
            core.logBytesSinceCheckpoint = max(0, core.logBytesSinceCheckpoint - bytesAtSnapshot)
            if summary.rawCacheBytes > 0 {
                core.compressionRatio = Double(summary.storedCacheBytes) / Double(summary.rawCacheBytes)
            }
            core.checkpointsWritten += 1
            core.lastCheckpointPause = elapsed
        }
    }

    /// Checkpoints now, prunes if over the cap, and drops dead log. Returns the footprint
    /// before and after, in bytes.
    @discardableResult
    public func compact() throws(StoreError) -> (before: UInt64, after: UInt64) {
        _ = try fullyLoadedCore()
        let before = try footprintBytes()
        let result = maintenanceQueue.sync { () -> Result<Void, StoreError> in
            core.withLock { $0.maintenancePending = true }
            defer { core.withLock { $0.maintenancePending = false } }
            do throws(StoreError) {
                try writeCheckpoint()
                let footprint = try footprintBytes()
                let tooManyQueries = core.withLock { Pruner.inactiveQueryCount($0.loading.state) > options.maxInactiveQueries }
                if footprint > UInt64(options.cacheSizeBytes) || tooManyQueries {
                    try prune()
                    try writeCheckpoint()
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        let after = try footprintBytes()
        core.withLock { $0.capExceededByUnprunable = after > UInt64(options.cacheSizeBytes) }
        return (before, after)
    }
}
