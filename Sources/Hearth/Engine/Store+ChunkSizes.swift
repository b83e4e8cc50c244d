import HearthModel

// The server cache's encoded size while it is not resident, without loading it: the current
// checkpoint's cache with the deferred server events applied, as a skeleton (every chunk nothing
// reaches into stands in undecoded: CheckpointReader+Skeleton.swift) measured from the chunk table
// (CheckpointReader+Sizes.swift) — the size a load would measure, exactly. `stats()` reports it.
// A prune to a size loads the cache instead (Store+Prune.swift): its rounds are adjusted, under the
// commit's lock, to commits made meanwhile, and against a snapshot holding stand-ins that
// adjustment is not known to keep what a loaded store keeps.

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
    /// table (``chunkSizes(_:)``).
    struct ChunkSizes: Sendable {
        let skeleton: CheckpointReader.Skeleton
        let measure: CheckpointReader.SkeletonMeasure

        /// The encoded size of the whole cache.
        var encodedSize: Int { measure.encodedSize(of: skeleton.cache, at: .root) }
    }

    /// `source`'s cache as a skeleton whose stand-ins are measured from the chunk table: decoded
    /// are only the chunks an event writes inside. A chunk that cannot be read poisons the store,
    /// as a failed load does.
    func chunkSizes(_ source: ChunkSource) throws(StoreError) -> ChunkSizes {
        try poisoningOnFailure { () throws(CheckpointError) in
            let skeleton = try source.reader.skeleton(
                applying: source.events, queries: [TrackedQuery](), standingInAll: true)
            return ChunkSizes(skeleton: skeleton, measure: try source.reader.measure(skeleton))
        }
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
