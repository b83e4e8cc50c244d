import HearthLog
import HearthModel

// Checkpoints of a lazily loaded store whose cache is not resident: from its chunks, not from a
// load of the whole cache. The checkpoint's cache is the current checkpoint's with the server
// events deferred since applied (LoadingState), so the new one is built from the chunks those
// events write inside — decoded — and references every other chunk where it is, undecoded
// (CheckpointReader+Skeleton.swift says why that is the same checkpoint a load would write, but
// for the chunks the encoder would have split differently). Memory is what the decoded chunks
// and the events hold, not the whole cache: a checkpoint, or a compaction, peaks where the reads
// that went before it did.
//
// Once it is installed the store reads from it: the reader of the new checkpoint replaces the
// old one, and the events it folded in leave the deferred list (the ones committed since its
// snapshot stay). If the cache was loaded meanwhile (a whole-state read, a prune committed
// through a batch), the loaded cache is left as it is: it is the old checkpoint's plus every
// event, the same state.

extension Store {
    /// A checkpoint's cache when it is not resident: the current checkpoint's reader and the
    /// server events deferred since it, as of the snapshot.
    struct ChunkSource: Sendable {
        let reader: CheckpointReader
        let events: [StoreEvent]
    }

    /// The cache to encode for `source` (``CheckpointReader/skeleton(applying:queries:)``), with
    /// the order indexes of `queries` to copy. A chunk that cannot be read poisons the store, as a
    /// failed load does: the state it holds is unknown.
    func chunkSkeleton(
        _ source: ChunkSource, queries: some Sequence<TrackedQuery>
    ) throws(StoreError) -> CheckpointReader.Skeleton {
        let skeleton = try poisoningOnFailure { () throws(CheckpointError) in
            try source.reader.skeleton(applying: source.events, queries: queries)
        }
        resident.counters.withLock {
            $0.chunkCheckpoints += 1
            $0.chunkCheckpointDecodes += skeleton.decodedChunks
        }
        return skeleton
    }

    /// After a checkpoint from `source`'s chunks: reads go on from `installed` (its reader built
    /// here, outside the store's lock), unless the cache was loaded or the reader changed since
    /// the snapshot. Nothing changes when the new checkpoint cannot be read back: the old
    /// reader's file handles still read the old chunks, and the deferred events stay.
    func readFromChunkCheckpoint(_ source: ChunkSource, installed: Checkpoint?) {
        guard let installed, let reader = try? CheckpointReader(installed) else { return }
        let released = core.withLock { core -> [StoreEvent] in
            guard !core.loading.cacheLoaded, core.reader === source.reader,
                core.loading.deferred.count >= source.events.count
            else { return [] }
            core.reader = reader
            return core.loading.checkpointedFromChunks(eventCount: source.events.count)
        }
        withExtendedLifetime(released) {}
    }
}
