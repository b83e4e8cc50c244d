@_spi(HearthInternals) import HearthLog
import HearthModel

/// The pending-write chunks a checkpoint wrote, with the writes of each, kept for the next
/// checkpoint to copy every chunk whose writes are all still pending and unchanged — so that
/// a checkpoint among N pending writes encodes and deflates only the writes saved (or the
/// runs changed) since the previous one, not all N again.
struct WriteChunkMemo: Sendable {
    /// One chunk: its index entry (offset in `checkpoint`'s body) and its writes — or, for a
    /// chunk prepared in memory since the last checkpoint (PreparedWriteChunks.swift), its
    /// stored bytes (the entry's offset then means nothing).
    struct Run: Sendable {
        let entry: CheckpointFormat.WriteChunk
        let writes: [PendingWrite]
        /// The stored bytes of a prepared chunk; nil for one held in `checkpoint`.
        var stored: [UInt8]? = nil
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
            guard !run.isEmpty else { return }
            let (entry, stored) = Self.writeChunk(
                run, events: events.bytes, level: writeCompressionLevel, offset: offset)
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
        // The chunks prepared since the previous checkpoint follow its chunks: they hold only
        // writes saved after its snapshot (Store+WritePreparation.swift), so the ranges stay
        // increasing and disjoint (one that would not is left out and its writes encoded).
        var previous = (previousWrites?.runs ?? []).filter {
            $0.entry.rawLength >= CheckpointFormat.writeChunkTarget / 2
        }
        for run in preparedWrites where previous.last.map({ $0.entry.lastID < run.entry.firstID }) ?? true {
            previous.append(run)
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
                if let stored = old.stored ?? previousWrites?.storedBytes(old.entry) {
                    try emitWrites()  // the run before it, so that id ranges stay in order
                    try append(old.entry.at(offset: offset), stored, held)
                    if old.stored != nil {
                        summary.preparedWriteChunks += 1
                    } else {
                        summary.copiedWriteChunks += 1
                    }
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

    /// The chunk of the writes `run` whose events (``EventCodec`` `.writeSaved`, in id order)
    /// are `events`: its directory entry at `offset` and its stored bytes (FORMAT.md §7.1).
    /// The one encoding of a write chunk, shared by checkpoints and the chunks prepared
    /// between them, so that a prepared chunk is exactly what a checkpoint would write.
    static func writeChunk(
        _ run: [PendingWrite], events: [UInt8], level: Int32, offset: UInt64
    ) -> (entry: CheckpointFormat.WriteChunk, stored: [UInt8]) {
        precondition(!run.isEmpty, "a write chunk holds at least one write")
        var raw = ByteWriter(capacity: events.count + 8)
        raw.varint(run.count)
        raw.raw(events)
        let (minPath, maxPath, filter) = pathSummary(of: run)
        let (stored, compressed) = store(raw.bytes, level: level)
        let entry = CheckpointFormat.WriteChunk(
            firstID: run[0].id, lastID: run[run.count - 1].id, count: run.count, minPath: minPath, maxPath: maxPath,
            filter: filter, offset: offset, storedLength: stored.count, rawLength: raw.bytes.count,
            compressed: compressed, crc: CRC32C.mask(CRC32C.checksum(stored)))
        return (entry, stored)
    }

    /// A write chunk's summary for the directory: the least and greatest path of its writes
    /// (in ``CheckpointFormat/pathOrder(_:_:)``) and the filter of the paths they touch.
    static func pathSummary(of run: [PendingWrite]) -> (min: Path, max: Path, filter: CheckpointFormat.PathFilter) {
        var minPath = run.first?.path ?? .root, maxPath = minPath
        var entries = Set<CheckpointFormat.PathFilter.Entry>()
        // Distinct entries are at most 1 + depth per write; siblings share their ancestors'.
        entries.reserveCapacity(2 * run.count + 8)
        for w in run {
            if CheckpointFormat.pathOrder(w.path, minPath) < 0 { minPath = w.path }
            if CheckpointFormat.pathOrder(w.path, maxPath) > 0 { maxPath = w.path }
            CheckpointFormat.PathFilter.entries(forWriteAt: w.path, into: &entries)
        }
        return (minPath, maxPath, CheckpointFormat.PathFilter(entries))
    }
}
