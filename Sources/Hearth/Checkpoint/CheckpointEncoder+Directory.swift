@_spi(HearthInternals) import HearthLog
import HearthModel

// The checkpoint body's last two parts (FORMAT.md §7.1): the directory — everything but the cache
// and the pending writes, as events, then the write chunks', the untracked entries', the split
// priorities', the cache chunks' and (format 5) the order indexes' entries — and the fixed-size
// trailer that locates it.

extension CheckpointEncoder {
    /// The body's trailer (FORMAT.md §7.1): where the directory is, its sizes and checksum, and
    /// the trailer's own checksum.
    func trailer(directoryAt offset: UInt64, stored: [UInt8], rawCount: Int, compressed: Bool) -> [UInt8] {
        var trailer = ByteWriter(capacity: CheckpointFormat.trailerSize)
        trailer.raw(CheckpointFormat.magic)
        trailer.u32(bodyVersion)
        trailer.u64(offset)
        trailer.u32(UInt32(stored.count))
        trailer.u32(UInt32(rawCount))
        trailer.u8(compressed ? 1 : 0)
        trailer.raw([0, 0, 0])
        trailer.u32(CRC32C.mask(CRC32C.checksum(stored)))
        trailer.u32(CRC32C.mask(CRC32C.checksum(trailer.bytes)))
        assert(trailer.bytes.count == CheckpointFormat.trailerSize, "the trailer has its fixed size")
        return trailer.bytes
    }

    /// The directory's raw bytes (FORMAT.md §7.1) for `state`, whose cache was written as
    /// `chunks` (with the priorities of the nodes split across them), its pending writes as
    /// `writeChunks` and its order indexes as `orderIndexes` (format 5).
    func encodeDirectory(
        _ state: StoreState, priorities: [(path: Path, priority: Priority)], chunks: [CheckpointFormat.Chunk],
        writeChunks: [CheckpointFormat.WriteChunk] = [], orderIndexes: [CheckpointFormat.OrderIndex] = []
    ) -> [UInt8] {
        var w = ByteWriter(capacity: 4096)
        w.varint(UInt64(bodyVersion))
        w.varint(UInt64(state.lastWriteID))
        w.varint(UInt64(state.lastQueryID))
        w.varint(UInt64(state.lastTransactionID))
        w.varint(UInt64(state.lastOnDisconnectID))

        // Everything but the cache, as the events that rebuild it.
        var events: [StoreEvent] = []
        events.append(.serverTimeOffset(ms: state.serverTimeOffsetMs))
        if let auth = state.auth { events.append(.authSaved(auth)) }
        if bodyVersion == 1 { events += state.pendingWrites.map { .writeSaved($0) } }
        events += state.trackedQueries.keys.sorted().map { .trackedQuerySaved(state.trackedQueries[$0]!) }
        events += state.pins.sorted { $0.description < $1.description }.map { .pinChanged($0, on: true) }
        events += state.transactions.keys.sorted().map { .transactionSaved(state.transactions[$0]!) }
        events += state.onDisconnect.keys.sorted().map { .onDisconnectSaved(state.onDisconnect[$0]!) }
        if bodyVersion >= 4 {
            // Format 4: each run of write ids with the writer id they were created under, in id
            // order (the writes themselves stay in the write chunks, whose bytes do not change).
            for run in state.writerIdentities.runs {
                events.append(.writerIdentity(writer: run.writer, firstWriteID: run.firstWriteID))
            }
        } else if bodyVersion == 3, let id = state.writerID {
            // Format 3 (what earlier builds wrote): one writer id for the whole store.
            events.append(.writerIdentity(writer: id, firstWriteID: nil))
        }
        if bodyVersion >= 3 {
            // Since format 3: the writer watermarks (by writer, in UTF-8 byte order so the bytes
            // are deterministic; readers accept any order).
            for writer in state.writerWatermarks.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                let mark = state.writerWatermarks[writer]!
                events.append(.writerWatermark(writer: writer, id: mark.id, at: mark.at))
            }
        }
        let batch = EventCodec.encode(events)
        w.varint(batch.count)
        w.raw(batch)

        if bodyVersion >= 2 {
            w.varint(writeChunks.count)
            for c in writeChunks {
                w.varint(UInt64(c.firstID))
                w.varint(UInt64(c.lastID))
                w.varint(c.count)
                EventCodec.path(c.minPath, &w)
                EventCodec.path(c.maxPath, &w)
                w.varint(c.filter.bits.count)
                w.raw(c.filter.bits)
                w.varint(c.offset)
                w.varint(c.storedLength)
                w.varint(c.rawLength)
                w.bool(c.compressed)
                w.u32(c.crc)
            }
        }

        // Counted while written: the trie's `count` is a walk of its own over every entry
        // (~100,000 in a 50 MiB fill, a quarter of this directory's cost).
        var entries = ByteWriter(capacity: 4096)
        var entryCount = 0
        state.untracked.forEachEntry { keys, time in
            entries.varint(keys.count)
            for k in keys { entries.string(k.string) }
            entries.zigzag(time)
            entryCount += 1
        }
        w.varint(entryCount)
        w.raw(entries.bytes)

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
            if bodyVersion >= CheckpointFormat.referencesVersion { w.varint(c.file) }
        }
        if bodyVersion >= 5 { Self.encodeOrderIndexes(orderIndexes, into: &w) }
        return w.bytes
    }
}
