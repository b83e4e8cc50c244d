import HearthModel

// The server cache's encoded size while it is not resident, without loading it: the current
// checkpoint's cache with the deferred server events applied, as a skeleton (every chunk nothing
// reaches into stands in undecoded: CheckpointReader+Skeleton.swift) measured from the chunk table
// (CheckpointReader+Sizes.swift) — the size a load would measure, exactly. `stats()` reports it,
// and a prune to a size estimates the checkpoint and what each round frees from it
// (Store+Prune.swift), so that it prunes the same queries a loaded store would.

extension Store.Core {
    /// The current checkpoint's reader and the server events deferred since, while the cache
    /// is not resident; `nil` while it is (or when there is no checkpoint to read).
    var chunkSource: Store.ChunkSource? {
        guard !loading.cacheLoaded, let reader else { return nil }
        return Store.ChunkSource(reader: reader, events: loading.deferred)
    }
}

extension Store {
    /// A cache that is not resident, as a skeleton, and its encoded size measured from the chunk
    /// table (``chunkSizes(_:reading:)``).
    struct ChunkSizes: Sendable {
        let skeleton: CheckpointReader.Skeleton
        let measure: CheckpointReader.SkeletonMeasure
        /// The skeleton with the rounds measured so far (``freedBytes(by:)``) applied.
        private(set) var cache: Node

        init(skeleton: CheckpointReader.Skeleton, measure: CheckpointReader.SkeletonMeasure) {
            self.skeleton = skeleton
            self.measure = measure
            self.cache = skeleton.cache
        }

        /// The encoded size of the whole cache (as of the rounds applied).
        var encodedSize: Int { measure.encodedSize(of: cache, at: .root) }

        /// The encoded bytes of the cache `result` removes — its topmost pruned subtrees minus the
        /// kept subtrees below them, as ``Pruner/Round/freedCacheBytes`` counts them — and then
        /// applies it, for the next round's measure. Every path it names must be one the skeleton
        /// was read for (``chunkSizes(_:reading:)``): none lies strictly inside a stand-in.
        mutating func freedBytes(by result: PruneResult) -> Int {
            var pruned = PathTrie<Bool>()
            for p in result.prunedPaths { pruned.set(p, true) }
            var freed = 0
            for p in result.prunedPaths {
                if let parent = p.parent, pruned.nearestAtOrAbove(parent) != nil { continue }
                freed += measure.encodedSize(of: cache.child(at: p), at: p)
            }
            for k in result.keptPaths { freed -= measure.encodedSize(of: cache.child(at: k), at: k) }
            cache = StoreState.pruning(cache, by: result)
            return max(0, freed)
        }
    }

    /// `source`'s cache as a skeleton whose stand-ins are measured from the chunk table: decoded
    /// are only the chunks an event writes inside and those holding a path of `reading` strictly
    /// inside them (a prune's candidates and protected paths, whose subtrees it measures). A
    /// chunk that cannot be read poisons the store, as a failed load does.
    func chunkSizes(_ source: ChunkSource, reading paths: [Path]) throws(StoreError) -> ChunkSizes {
        try poisoningOnFailure { () throws(CheckpointError) in
            let skeleton = try source.reader.skeleton(
                applying: source.events, queries: [TrackedQuery](), reading: paths, standingInAll: true)
            return ChunkSizes(skeleton: skeleton, measure: try source.reader.measure(skeleton))
        }
    }

    /// The paths a prune pass may measure a subtree at: every candidate's (tracked queries,
    /// untracked entries) and every protected one (active queries, pins, pending writes), which
    /// its rounds prune or keep.
    static func prunePaths(_ state: StoreState) -> [Path] {
        var paths = Pruner.protectedPaths(state)
        for q in state.trackedQueries.values { paths.append(q.path) }
        state.untracked.forEachEntry { keys, _ in paths.append(Path(keys: keys)) }
        return paths
    }

    /// What a prune pass starts from (``prune(target:room:footprint:)``).
    struct PruneBase {
        /// The state; with ``sizes``, its server cache is the skeleton.
        var snapshot: StoreState
        let ratio: Double
        /// The chunks of the cache, when known (the skeleton's with ``sizes``).
        var origins: ChunkOrigins?
        /// The cache measured from its chunks, when it is not resident and `estimated`.
        var sizes: ChunkSizes?
    }

    /// The state a prune pass starts from, with every pending write decoded (they protect their
    /// locations). `estimated`: the pass measures the cache — a resident one as it is, one that
    /// is not from its chunks (``chunkSizes(_:reading:)``), not loaded. `nil`: no cache to measure.
    func pruneBase(estimated: Bool) throws(StoreError) -> PruneBase? {
        if options.lazyCacheLoad { try decodeCheckpointWrites() } else { _ = try fullyLoadedCore() }
        func take() -> (base: PruneBase, resident: Bool, source: ChunkSource?) {
            core.withLock { core in
                let base = PruneBase(
                    snapshot: core.loading.state, ratio: core.compressionRatio, origins: core.cacheOrigins)
                return (base, core.loading.cacheLoaded, core.chunkSource)
            }
        }
        let taken = take()
        guard estimated, !taken.resident else { return taken.base }
        guard let source = taken.source else {
            // No checkpoint to read it from: loaded.
            _ = try fullyLoadedCore()
            let loaded = take()
            return loaded.resident ? loaded.base : nil
        }
        var base = taken.base
        let sizes = try chunkSizes(source, reading: Store.prunePaths(base.snapshot))
        base.snapshot.serverCache = sizes.cache
        base.origins = sizes.skeleton.origins
        base.sizes = sizes
        return base
    }

    /// `body`'s result; a failure to read the checkpoint it meets poisons the store, as a failed
    /// load does: the state the unread chunk holds is unknown.
    func poisoningOnFailure<T>(_ body: () throws(CheckpointError) -> T) throws(StoreError) -> T {
        do throws(StoreError) {
            return try readingCheckpoint(body)
        } catch {
            core.withLock {
                if $0.loadError == nil { $0.loadError = error }
                $0.poisoned = $0.poisoned ?? "checkpoint load failed: \(error)"
            }
            throw error
        }
    }
}
