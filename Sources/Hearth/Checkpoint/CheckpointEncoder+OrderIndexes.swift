@_spi(HearthInternals) import HearthLog
import HearthModel

// The order indexes a checkpoint writes (body format 5, FORMAT.md §7.1): for each location the
// cache split into range chunks and a tracked limited query orders by a child, by value or by
// priority, its children sorted by that ordering. Only tracked windows' orderings are indexed:
// they are what the app shows (or paged through), and an index costs a sort and some bytes at
// every checkpoint. A location held in one chunk needs none: it is read whole, cheaply.

extension CheckpointEncoder {
    /// The (location, ordering) pairs to index in `state`, whose cache was written as `chunks`:
    /// a tracked limited query's, ordered by other than the key, at a location split into range
    /// chunks. Sorted, so that equal states give equal bytes.
    static func orderIndexTargets(
        _ state: StoreState, chunks: [CheckpointFormat.Chunk]
    ) -> [CheckpointFormat.OrderIndex.Target] {
        var split = Set<Path>()
        for c in chunks { if case .range = c.kind { split.insert(c.path) } }
        guard !split.isEmpty else { return [] }
        var targets = Set<CheckpointFormat.OrderIndex.Target>()
        for q in state.trackedQueries.values {
            let location = q.location
            guard location.query.limit != nil, location.query.index != .key, split.contains(location.path) else {
                continue
            }
            targets.insert(CheckpointFormat.OrderIndex.Target(path: location.path, index: location.query.index))
        }
        return targets.sorted {
            let c = CheckpointFormat.pathOrder($0.path, $1.path)
            return c != 0 ? c < 0 : $0.index.wireName < $1.index.wireName
        }
    }

    /// Writes the order indexes of `state` (``orderIndexTargets(_:chunks:)``) from `offset` on
    /// and returns their directory entries.
    func writeOrderIndexes<E: Error>(
        _ state: StoreState, chunks: [CheckpointFormat.Chunk], offset: inout UInt64, summary: inout Summary,
        write: ([UInt8]) throws(E) -> Void
    ) throws(E) -> [CheckpointFormat.OrderIndex] {
        var indexes: [CheckpointFormat.OrderIndex] = []
        for target in Self.orderIndexTargets(state, chunks: chunks) {
            let (path, index) = (target.path, target.index)
            if let copied = copiedOrderIndexes[target] {
                var runs: [CheckpointFormat.OrderIndex.Run] = []
                for c in copied {
                    try write(c.stored)
                    runs.append(
                        CheckpointFormat.OrderIndex.Run(
                            count: c.run.count, offset: offset, storedLength: c.run.storedLength,
                            rawLength: c.run.rawLength, compressed: c.run.compressed, crc: c.run.crc))
                    offset += UInt64(c.stored.count)
                }
                indexes.append(CheckpointFormat.OrderIndex(path: path, index: index, runs: runs))
                continue
            }
            var entries = state.serverCache.child(at: path).children.map { child in
                (key: child.key, value: CheckpointFormat.storedIndexValue(index.indexedValue(of: child.value)))
            }
            if standIns,
                state.serverCache.child(at: path).children.contains(where: { CheckpointReader.isStandIn($0.value) })
            {
                summary.standInsEncoded += 1
            }
            entries.sort { CheckpointFormat.compareIndexed($0, $1) < 0 }
            var runs: [CheckpointFormat.OrderIndex.Run] = []
            var start = 0
            var size = 0
            func emit(through end: Int) throws(E) {
                let raw = CheckpointFormat.encodeOrderIndexRun(entries[start..<end])
                let (stored, compressed) = store(raw)
                try write(stored)
                runs.append(
                    CheckpointFormat.OrderIndex.Run(
                        count: end - start, offset: offset, storedLength: stored.count, rawLength: raw.count,
                        compressed: compressed, crc: CRC32C.mask(CRC32C.checksum(stored))))
                offset += UInt64(stored.count)
                start = end
                size = 0
            }
            for (i, entry) in entries.enumerated() {
                size += NodeCodec.stringSize(entry.key.string) + NodeCodec.encodedSize(entry.value)
                if size >= CheckpointFormat.orderIndexRunTarget { try emit(through: i + 1) }
            }
            if start < entries.count { try emit(through: entries.count) }
            indexes.append(CheckpointFormat.OrderIndex(path: path, index: index, runs: runs))
        }
        return indexes
    }

    /// One run of an order index of the previous checkpoint and its stored bytes (checked against
    /// its CRC when read), to be written as it is (``copiedOrderIndexes``).
    struct CopiedRun: Sendable {
        let run: CheckpointFormat.OrderIndex.Run
        let stored: [UInt8]
    }

    /// The directory's order index entries (format 5; FORMAT.md §7.1).
    static func encodeOrderIndexes(_ indexes: [CheckpointFormat.OrderIndex], into w: inout ByteWriter) {
        w.varint(indexes.count)
        for index in indexes {
            EventCodec.path(index.path, &w)
            EventCodec.query(QuerySpec(orderBy: index.index), &w)
            w.varint(index.runs.count)
            for run in index.runs {
                w.varint(run.count)
                w.varint(run.offset)
                w.varint(run.storedLength)
                w.varint(run.rawLength)
                w.bool(run.compressed)
                w.u32(run.crc)
            }
        }
    }
}
