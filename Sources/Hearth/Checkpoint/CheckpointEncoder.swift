import HearthLog
import HearthModel

/// Writes a ``StoreState`` as a checkpoint body (``CheckpointFormat``), streaming chunk by
/// chunk so that memory stays bounded by one chunk plus the directory.
struct CheckpointEncoder {
    /// Totals of one encoding, for stats and the pruning estimate.
    struct Summary: Sendable {
        var bodyBytes: UInt64 = 0
        var rawCacheBytes: Int = 0
        var storedCacheBytes: Int = 0
        var chunkCount: Int = 0
    }

    let compressionLevel: Int32

    /// Encodes `state` and passes the body's bytes to `write` in order.
    func encode(_ state: StoreState, write: ([UInt8]) throws -> Void) throws -> Summary {
        var summary = Summary()
        var chunks: [CheckpointFormat.Chunk] = []
        var priorities: [(path: Path, priority: Priority)] = []
        var offset: UInt64 = 0

        func emit(_ path: Path, _ kind: CheckpointFormat.Chunk.Kind, _ node: Node) throws {
            let raw = NodeCodec.encode(node)
            let (stored, compressed) = store(raw)
            try write(stored)
            chunks.append(CheckpointFormat.Chunk(
                path: path, kind: kind, offset: offset, storedLength: stored.count, rawLength: raw.count,
                compressed: compressed, crc: CRC32C.mask(CRC32C.checksum(stored))))
            offset += UInt64(stored.count)
            summary.rawCacheBytes += raw.count
            summary.storedCacheBytes += stored.count
        }

        // Split the cache into chunks of about `chunkTarget` raw bytes: a small enough subtree
        // is one chunk; a larger node is split into runs of consecutive children, recursing
        // into any child that alone exceeds the target.
        func split(_ node: Node, at path: Path) throws {
            if node.isEmpty { return }
            if node.isLeaf || NodeCodec.encodedSize(node) <= CheckpointFormat.chunkTarget {
                try emit(path, .whole, node)
                return
            }
            if let p = node.priority { priorities.append((path, p)) }
            var run: [(key: ChildKey, value: Node)] = []
            var runSize = 0
            func flush() throws {
                guard let first = run.first, let last = run.last else { return }
                try emit(path, .range(first: first.key, last: last.key), Node(children: ChildMap(sortedPairs: run)))
                run.removeAll(keepingCapacity: true)
                runSize = 0
            }
            for (key, child) in node.children {
                let size = NodeCodec.stringSize(key.string) + NodeCodec.encodedSize(child)
                if size > CheckpointFormat.chunkTarget {
                    try flush()
                    try split(child, at: path.child(key))
                } else {
                    run.append((key, child))
                    runSize += size
                    if runSize >= CheckpointFormat.chunkTarget { try flush() }
                }
            }
            try flush()
        }

        try split(state.serverCache, at: .root)

        let directoryRaw = encodeDirectory(state, priorities: priorities, chunks: chunks)
        let (directoryStored, directoryCompressed) = store(directoryRaw)
        try write(directoryStored)

        var trailer = ByteWriter(capacity: CheckpointFormat.trailerSize)
        trailer.raw(CheckpointFormat.magic)
        trailer.u32(CheckpointFormat.version)
        trailer.u64(offset)
        trailer.u32(UInt32(directoryStored.count))
        trailer.u32(UInt32(directoryRaw.count))
        trailer.u8(directoryCompressed ? 1 : 0)
        trailer.raw([0, 0, 0])
        trailer.u32(CRC32C.mask(CRC32C.checksum(directoryStored)))
        trailer.u32(CRC32C.mask(CRC32C.checksum(trailer.bytes)))
        try write(trailer.bytes)

        summary.chunkCount = chunks.count
        summary.bodyBytes = offset + UInt64(directoryStored.count) + UInt64(CheckpointFormat.trailerSize)
        return summary
    }

    /// The bytes to store for `raw`: compressed when that saves enough, else raw.
    func store(_ raw: [UInt8]) -> ([UInt8], Bool) {
        if raw.count >= 64, let packed = RawDeflate.compress(raw, level: compressionLevel),
            Double(packed.count) < Double(raw.count) * CheckpointFormat.compressionWorthwhile
        {
            return (packed, true)
        }
        return (raw, false)
    }

    func encodeDirectory(_ state: StoreState, priorities: [(path: Path, priority: Priority)], chunks: [CheckpointFormat.Chunk]) -> [UInt8] {
        var w = ByteWriter(capacity: 4096)
        w.varint(UInt64(CheckpointFormat.version))
        w.varint(UInt64(state.lastWriteID))
        w.varint(UInt64(state.lastQueryID))
        w.varint(UInt64(state.lastTransactionID))
        w.varint(UInt64(state.lastOnDisconnectID))

        // Everything but the cache, as the events that rebuild it.
        var events: [StoreEvent] = []
        events.append(.serverTimeOffset(ms: state.serverTimeOffsetMs))
        if let auth = state.auth { events.append(.authSaved(auth)) }
        events += state.pendingWrites.map { .writeSaved($0) }
        events += state.trackedQueries.keys.sorted().map { .trackedQuerySaved(state.trackedQueries[$0]!) }
        events += state.pins.sorted { $0.description < $1.description }.map { .pinChanged($0, on: true) }
        events += state.transactions.keys.sorted().map { .transactionSaved(state.transactions[$0]!) }
        events += state.onDisconnect.keys.sorted().map { .onDisconnectSaved(state.onDisconnect[$0]!) }
        let batch = EventCodec.encode(events)
        w.varint(batch.count)
        w.raw(batch)

        let untracked = state.untracked.entries
        w.varint(untracked.count)
        for (path, time) in untracked {
            EventCodec.path(path, &w)
            w.zigzag(time)
        }

        w.varint(priorities.count)
        for (path, priority) in priorities {
            EventCodec.path(path, &w)
            NodeCodec.encode(Node(priority.leafValue), into: &w)
        }

        w.varint(chunks.count)
        for c in chunks {
            EventCodec.path(c.path, &w)
            switch c.kind {
            case .whole:
                w.u8(0)
            case let .range(first, last):
                w.u8(1)
                w.string(first.string)
                w.string(last.string)
            }
            w.varint(c.offset)
            w.varint(c.storedLength)
            w.varint(c.rawLength)
            w.bool(c.compressed)
            w.u32(c.crc)
        }
        return w.bytes
    }
}
