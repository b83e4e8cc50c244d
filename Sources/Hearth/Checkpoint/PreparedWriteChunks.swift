import HearthModel
@_spi(HearthInternals) import HearthLog

// Pending-write chunks cut and compressed between checkpoints.
//
// A checkpoint writes every pending write in chunks of about `writeChunkTarget` raw bytes,
// deflated. The writes saved since the previous checkpoint have no chunk yet, so a checkpoint
// after N of them encodes and deflates N writes at once — and the one `close()` writes
// (Store+Close.swift) does it while the caller waits. Cutting those chunks as the writes come
// in, on the maintenance queue (Store+WritePreparation.swift), moves that work to when the
// writers are waiting for their syncs; the checkpoint then writes each prepared chunk whose
// writes are all still pending and unchanged (CheckpointEncoder+Writes.swift), as it copies
// the previous checkpoint's.
//
// Cost: a prepared chunk is the encode and deflate the next checkpoint would do anyway, unless
// one of its writes is acknowledged first (an online client's writes usually are; the chunk
// is then encoded again at the checkpoint). Preparation only cuts full chunks, so the last
// writes (under one chunk) are encoded again at the next preparation. Memory: the stored
// bytes of the writes saved since the last checkpoint, a fraction of the log that the
// checkpoint threshold already bounds.

extension CheckpointEncoder {
    /// A saved write's id and its encoded body (``EventCodec/writeBody(_:at:)``).
    struct EncodedWrite: Sendable {
        let id: Int64
        let body: EventCodec.WriteBody
    }

    /// The full chunks of `writes` (in id order), cut where a checkpoint would cut them from
    /// the first: each ends after the write that brings its events to `writeChunkTarget`. The
    /// writes after the last full chunk are left out (the caller prepares them later, with
    /// the writes after them).
    ///
    /// `bodies`: the encoded bodies (``EventCodec/writeBody(_:at:)``) of some of the writes,
    /// in id order, as the store encoded them before its lock; a write with one is not
    /// encoded again.
    static func preparedWriteChunks(
        _ writes: [PendingWrite], bodies: ArraySlice<EncodedWrite> = [], level: Int32
    ) -> [WriteChunkMemo.Run] {
        var runs: [WriteChunkMemo.Run] = []
        var run: [PendingWrite] = []
        var events = ByteWriter(capacity: CheckpointFormat.writeChunkTarget + 1024)
        var b = bodies.startIndex
        for w in writes {
            assert(run.last.map { $0.id < w.id } ?? true, "writes are prepared in increasing id order")
            while b < bodies.endIndex, bodies[b].id < w.id { b += 1 }
            if b < bodies.endIndex, bodies[b].id == w.id {
                assert(
                    bodies[b].body.bytes == EventCodec.writeBody(w.operation, at: w.path).bytes,
                    "a write's kept body is its encoding")
                EventCodec.encodeWriteSaved(id: w.id, body: bodies[b].body.bytes, into: &events)
            } else {
                EventCodec.encode(.writeSaved(w), into: &events)
            }
            run.append(w)
            guard events.bytes.count >= CheckpointFormat.writeChunkTarget else { continue }
            let (entry, stored) = writeChunk(run, events: events.bytes, level: level, offset: 0)
            runs.append(WriteChunkMemo.Run(entry: entry, writes: run, stored: stored))
            run.removeAll(keepingCapacity: true)
            events = ByteWriter(capacity: CheckpointFormat.writeChunkTarget + 1024)
        }
        return runs
    }
}
