import HearthModel

// Pruning before a checkpoint, by size (the disk bound, Store+Maintenance.swift) and by the
// number of inactive queries.

extension Store {
    /// What ``makeRoomForCheckpoint()`` leaves the checkpoint that follows it.
    struct CheckpointRoom: Sendable {
        /// The pruning rounds committed.
        var rounds = 0
        /// The most bytes the new checkpoint file may spend copying the live chunks of files it
        /// compacts (``filesToCompact(_:copyBudget:)``): the room the disk bound leaves it beside
        /// the bytes it writes anyway. Unbounded when even a whole checkpoint fits the room.
        var copyBudget = UInt64.max
        /// The most bytes the new file was planned to take: the room, or the whole checkpoint
        /// when that is less (0: not planned).
        var newFile: UInt64 = 0
    }

    /// Prunes before a checkpoint so that the store keeps at most ``liveShare`` of the cap
    /// and the new checkpoint file fits beside the files it will replace within the disk bound
    /// (the argument at the top of Store+Maintenance.swift): estimated, it must come to at most
    /// ``plannedPeak``·cap − footprint − a segment (the one the checkpoint's roll creates). With
    /// maintenance in the background, less the log writers may still add before they wait (up
    /// to ``backpressureLogBytes(cacheSizeBytes:)``): past that, they wait while the file being
    /// written would not fit beside the footprint (Backpressure.swift, ``Core/installingBytes``).
    @discardableResult
    func makeRoomForCheckpoint() throws(StoreError) -> CheckpointRoom {
        let footprint = Double(try footprintBytes())
        let cap = Double(options.cacheSizeBytes)
        // The segment the checkpoint's roll creates is not in the footprint yet, but it is on disk
        // (up to its size, as writers fill and preallocate it) while the new file is written.
        var reserve = Double(options.effectiveSegmentSize)
        if options.backgroundMaintenance {
            let log = core.withLock { $0.logBytesSinceCheckpoint }
            reserve += Double(max(0, Store.backpressureLogBytes(cacheSizeBytes: options.cacheSizeBytes) - log))
        }
        let room = max(0, cap * Store.plannedPeak - footprint - reserve)
        return try prune(target: cap * Store.liveShare, room: room, footprint: footprint)
    }

    /// The bytes of the live files (MANIFEST, checkpoint, segments).
    func footprintBytes() throws(StoreError) -> UInt64 {
        do { return try log.footprint().total } catch { throw .log(error) }
    }

    /// Prunes the least recently used inactive queries (a ``Pruner/Pass`` round takes a fifth of
    /// the candidates, so this runs once per ~maxInactiveQueries/5 new ones) until at most
    /// `maxInactiveQueries` remain; no size estimate, no checkpoint. Returns the rounds
    /// committed.
    @discardableResult
    func pruneInactiveQueries() throws(StoreError) -> Int {
        return try prune(target: .infinity).rounds
    }

    /// Prunes in rounds until the estimated checkpoint is at most `target` bytes, the new file
    /// it writes at most `room` bytes, and the inactive queries within their limit — or nothing
    /// prunable is left.
    ///
    /// The checkpoint is estimated whole (``estimatedCheckpointBytes(_:ratio:)``): what its files
    /// will hold live. Its new file is that minus the chunks it will reference where they are
    /// (``ChunkOrigins/reusableBytes(in:)``), estimated only when the whole would not fit the
    /// room. Pruning lowers the whole; the new bytes only by what it prunes of them, which the
    /// LRU order takes last (they are the recent writes) — so when they alone do not fit, the
    /// pass prunes until the whole does, the bound a new file always meets.
    ///
    /// One ``Pruner/Pass`` computes the rounds: the candidates are sorted once, and the
    /// estimate is measured once and then lowered by what each round frees (the encoded size
    /// of the pruned subtrees minus the kept ones below them, times the last checkpoint's
    /// compression ratio) — not re-measured over the whole cache every round. Writers go on
    /// meanwhile: each round is committed as its own event, adjusted under the commit's lock
    /// to keep what other commits made protected or recent since the pass began
    /// (``Pruner/Pass/adjust(_:to:snapshot:)``).
    @discardableResult
    func prune(
        target: Double, room: Double = .infinity, footprint: Double = .infinity
    ) throws(StoreError)
        -> CheckpointRoom
    {
        // Nothing can need pruning when the footprint already meets the target and the room
        // (the estimate is at most the footprint) and the inactive queries are within their
        // limit (a pass counts at most those): skip the estimate and the pass, each O(cache +
        // pending writes) — before every checkpoint among many pending writes, most of the
        // maintenance thread's time (`HearthBench writes16`).
        let bound = min(target, room)
        let inactive = core.withLock { Pruner.inactiveQueryCount($0.loading.state) }
        if footprint <= bound && inactive <= options.maxInactiveQueries {
            core.withLock { $0.prunePassesSkipped += 1 }
            return CheckpointRoom(newFile: UInt64(footprint.isFinite ? footprint : 0))
        }
        // The estimate walks the whole cache and every pending write: only when a size bound
        // asks for it and the footprint, which bounds the estimate, does not meet it already.
        // (A pass for the query limit alone before a checkpoint — every checkpoint of a
        // client draining its writes, whose acks track a query each — would otherwise walk
        // every pending write once more per checkpoint, to prune nothing by size.)
        let estimated = bound.isFinite && footprint > bound
        // Pending writes protect their locations: every one must be known. The cache is needed
        // only by the estimate: the rounds are chosen from the tracked queries, untracked entries
        // and protected paths alone, and a prune of a cache not resident is deferred with the
        // server events, applied where they are (LoadingState, Store+ChunkCheckpoint.swift).
        if estimated || !options.lazyCacheLoad { _ = try fullyLoadedCore() } else { try decodeCheckpointWrites() }
        let (snapshot, ratio, resident, origins) = core.withLock {
            ($0.loading.state, $0.compressionRatio, $0.loading.cacheLoaded, $0.cacheOrigins)
        }
        // Loaded above when estimated; dropped only at the end of a maintenance pass, which this
        // is part of.
        guard resident || !estimated else { return CheckpointRoom() }
        var estimate = 0.0
        var fresh = 0.0
        if estimated {
            estimate = min(Store.estimatedCheckpointBytes(snapshot, ratio: ratio, origins: origins), footprint)
            fresh = estimate
            if estimate > room, let origins {
                let reusable = origins.reusableBytes(in: snapshot.serverCache).values.reduce(0, +)
                fresh = max(0, estimate - Double(reusable))
            }
            core.withLock { $0.checkpointSizeEstimates += 1 }
        }
        var pass = Pruner.Pass(snapshot, maxInactiveQueries: options.maxInactiveQueries, origins: origins)
        var committed = 0
        while estimate > target || min(fresh, estimate) > room || pass.inactiveQueries > options.maxInactiveQueries {
            guard let round = pass.nextRound() else { break }
            estimate -= Double(round.freedCacheBytes) * ratio + Double(round.freedMetaBytes)
            var result: PruneResult?
            try commit(durability: .buffered) { batch in
                result = pass.adjust(round, to: batch.base, snapshot: snapshot)
                if let result { batch.append(.cachePruned(result)) }
            }
            if result != nil {
                committed += 1
                core.withLock { $0.prunedRounds += 1 }
            }
        }
        // A new file within the room whatever it copies when the whole checkpoint fits it.
        let whole = estimated ? estimate : footprint
        guard room.isFinite else { return CheckpointRoom(rounds: committed) }
        let newFile = UInt64(max(0, min(whole, room)))
        guard whole > room else { return CheckpointRoom(rounds: committed, newFile: newFile) }
        return CheckpointRoom(
            rounds: committed, copyBudget: UInt64(max(0, room - min(fresh, estimate))), newFile: newFile)
    }

    /// An estimate of the checkpoint body for `state`: the cache's encoded size times the
    /// last checkpoint's compression ratio, plus the other state uncompressed. With `origins`
    /// (the last checkpoint's chunks), the cache's encoded size is measured walking only what
    /// changed since (``ChunkOrigins/encodedSize(of:at:)``): the same size.
    static func estimatedCheckpointBytes(_ state: StoreState, ratio: Double, origins: ChunkOrigins? = nil) -> Double {
        let cache = Double(origins?.encodedSize(of: state.serverCache) ?? NodeCodec.encodedSize(state.serverCache))
        var meta = 0
        for w in state.pendingWrites {
            switch w.operation {
            case .set(let n): meta += NodeCodec.encodedSize(n) + 16
            case .update(let c): meta += c.reduce(16) { $0 + NodeCodec.encodedSize($1.node) + 16 }
            }
        }
        meta +=
            state.trackedQueries.count * 64 + state.trackedQueries.values.reduce(0) { $0 + ($1.keys?.count ?? 0) * 16 }
        meta += state.untracked.count * 32
        return cache * ratio + Double(meta)
    }
}
