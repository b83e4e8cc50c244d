@_spi(HearthInternals) import HearthLog
import HearthModel

/// The pending-write chunks a checkpoint wrote, with the writes of each, kept for the next
/// checkpoint to copy every chunk whose writes are all still pending and unchanged — so that
/// a checkpoint among N pending writes encodes and deflates only the writes saved (or the
/// runs changed) since the previous one, not all N again.
struct WriteChunkMemo: Sendable {
    /// One written chunk: its index entry (offset in `checkpoint`'s body) and its writes.
    struct Run: Sendable {
        let entry: CheckpointFormat.WriteChunk
        let writes: [PendingWrite]
    }

    /// The checkpoint holding the chunks.
    let checkpoint: Checkpoint
    /// In id order (increasing, disjoint ranges).
    let runs: [Run]

    /// The stored bytes of `entry`, verified against its CRC; nil when the read fails or the
    /// bytes do not match (the writes are then encoded).
    func storedBytes(_ entry: CheckpointFormat.WriteChunk) -> [UInt8]? {
        guard let stored = try? checkpoint.read(offset: entry.offset, count: entry.storedLength),
            stored.count == entry.storedLength, CRC32C.mask(CRC32C.checksum(stored)) == entry.crc
        else { return nil }
        return stored
    }
}

extension CheckpointEncoder {
    /// Format 2: writes the pending writes from `offset` on, in id order, as runs of about
    /// `writeChunkTarget` raw bytes, and returns their directory entries (id range, path range,
    /// path filter). With ``previousWrites``, the writes within a previous chunk's id range are
    /// held back until the range is passed, then copied as that chunk if they are exactly its
    /// writes (same ids, equal values: O(1) for shared nodes), else encoded as usual.
    func writePendingWrites<E: Error>(
        _ writes: some Sequence<PendingWrite>, offset: inout UInt64, summary: inout Summary,
        write: ([UInt8]) throws(E) -> Void
    ) throws(E) -> [CheckpointFormat.WriteChunk] {
        var writeChunks: [CheckpointFormat.WriteChunk] = []
        var runs: [WriteChunkMemo.Run] = []
        var run: [PendingWrite] = []
        var events = ByteWriter(capacity: CheckpointFormat.writeChunkTarget + 1024)
        func emitWrites() throws(E) {
            guard let first = run.first, let last = run.last else { return }
            var raw = ByteWriter(capacity: events.bytes.count + 8)
            raw.varint(run.count)
            raw.raw(events.bytes)
            let (minPath, maxPath, filter) = Self.pathSummary(of: run)
            let (stored, compressed) = store(raw.bytes)
            let entry = CheckpointFormat.WriteChunk(
                firstID: first.id, lastID: last.id, count: run.count, minPath: minPath, maxPath: maxPath,
                filter: filter, offset: offset, storedLength: stored.count,
                rawLength: raw.bytes.count, compressed: compressed, crc: CRC32C.mask(CRC32C.checksum(stored)))
            try append(entry, stored, run)
            run.removeAll(keepingCapacity: true)
            events = ByteWriter(capacity: CheckpointFormat.writeChunkTarget + 1024)
        }
        func append(_ entry: CheckpointFormat.WriteChunk, _ stored: [UInt8], _ writes: [PendingWrite]) throws(E) {
            assert(
                writeChunks.last.map { $0.lastID < entry.firstID } ?? true,
                "write chunks hold increasing, disjoint id ranges")
            try write(stored)
            writeChunks.append(entry)
            runs.append(WriteChunkMemo.Run(entry: entry, writes: writes))
            offset += UInt64(stored.count)
        }
        func add(_ w: PendingWrite) throws(E) {
            EventCodec.encode(.writeSaved(w), into: &events)
            run.append(w)
            if events.bytes.count >= CheckpointFormat.writeChunkTarget { try emitWrites() }
        }
        // Runs end at `writeChunkTarget` but the last: a small one is encoded again with the
        // writes after it, so that a few new writes per checkpoint do not add a chunk each.
        let previous = (previousWrites?.runs ?? []).filter {
            $0.entry.rawLength >= CheckpointFormat.writeChunkTarget / 2
        }
        var k = 0
        var held: [PendingWrite] = []
        func closePrevious() throws(E) {
            defer {
                held.removeAll(keepingCapacity: true)
                k += 1
            }
            let old = previous[k]
            if held.count == old.writes.count, zip(held, old.writes).allSatisfy({ $0.id == $1.id && $0 == $1 }) {
                if let memo = previousWrites, let stored = memo.storedBytes(old.entry) {
                    try emitWrites()  // the run before it, so that id ranges stay in order
                    let e = old.entry
                    let entry = CheckpointFormat.WriteChunk(
                        firstID: e.firstID, lastID: e.lastID, count: e.count, minPath: e.minPath, maxPath: e.maxPath,
                        filter: e.filter, offset: offset, storedLength: e.storedLength, rawLength: e.rawLength,
                        compressed: e.compressed, crc: e.crc)
                    try append(entry, stored, held)
                    summary.copiedWriteChunks += 1
                    return
                }
                summary.rejectedCopies += 1
            }
            for w in held { try add(w) }
        }
        for w in writes {
            while k < previous.count, previous[k].entry.lastID < w.id { try closePrevious() }
            if k < previous.count, previous[k].entry.firstID <= w.id {
                held.append(w)
                continue
            }
            try add(w)
        }
        while k < previous.count { try closePrevious() }
        try emitWrites()
        summary.writeRuns = runs
        return writeChunks
    }

    /// A write chunk's summary for the directory: the least and greatest path of its writes
    /// (in ``CheckpointFormat/pathOrder(_:_:)``) and the filter of the paths they touch.
    static func pathSummary(of run: [PendingWrite]) -> (min: Path, max: Path, filter: CheckpointFormat.PathFilter) {
        var minPath = run.first?.path ?? .root, maxPath = minPath
        var entries = Set<CheckpointFormat.PathFilter.Entry>()
        for w in run {
            if CheckpointFormat.pathOrder(w.path, minPath) < 0 { minPath = w.path }
            if CheckpointFormat.pathOrder(w.path, maxPath) > 0 { maxPath = w.path }
            CheckpointFormat.PathFilter.entries(forWriteAt: w.path, into: &entries)
        }
        return (minPath, maxPath, CheckpointFormat.PathFilter(entries))
    }
}
