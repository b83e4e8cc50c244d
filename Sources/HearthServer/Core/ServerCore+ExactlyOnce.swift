import Hearth
import HearthWire

// Exactly-once writes (Hearth's extension to protocol v5, ``WriteStamp``): per writer, the
// highest write id applied — the watermark — kept in memory and made durable in the same
// store commit as the write itself (the write's `DurableWrite`s and the watermark's are in
// one output, and the adapter commits an output's writes as one batch), so a crash keeps both
// or neither.
//
// **The invariant it relies on:** a writer sends its writes in strictly increasing id order,
// and a connection delivers them in order. So when the server applies write i of writer w,
// every write of w with a lower id was already decided (applied, or refused) on some
// connection: a write arriving with an id ≤ the watermark is one the server has seen, re-sent
// because its answer was lost, and is answered `ok` without applying it again. (A re-sent
// write that had been *refused* while a later one was applied would also be answered `ok`;
// a client re-sends only writes with no answer, and a refused write is refused again only if
// the rules still refuse it, so this costs at most the error of a write that never applied.)
// A write refused (rules, invalid data, a stale transaction hash) does not advance the
// watermark, so its re-send is judged again.
//
// **The bound:** at most ``ServerCore/Configuration/maxWriters`` writers; past it, the least
// recently advanced sixteenth is evicted (durably), and an evicted writer falls back to
// at-least-once: its re-sent writes are applied again, as with Firebase.

extension ServerCore {
    /// Whether a stamped write was applied already (its id is at or below its writer's
    /// watermark). Unstamped writes, and every write when the extension is off, are new.
    func alreadyApplied(_ stamp: WriteStamp?) -> Bool {
        guard configuration.exactlyOnceWrites, let stamp, let mark = writerWatermarks[stamp.writer] else { return false }
        return stamp.id <= mark.id
    }

    /// After a stamped write was applied: its writer's watermark moves to its id, durably in
    /// the same output as the write, and the table is kept within its bound.
    mutating func advanceWatermark(_ stamp: WriteStamp?, into out: inout ServerOutput) {
        guard configuration.exactlyOnceWrites, let stamp else { return }
        let old = writerWatermarks[stamp.writer]
        // The caller checked alreadyApplied first: an applied write is always above the mark.
        assert(old.map { stamp.id > $0.id } ?? true, "a write at or below its writer's watermark was applied")
        writerWatermarks[stamp.writer] = WriterWatermark(id: stamp.id, at: max(now, old?.at ?? now))
        out.writes.append(.writerWatermark(writer: stamp.writer, id: stamp.id))
        if old == nil, writerWatermarks.count > max(1, configuration.maxWriters) { evictWriters(keeping: stamp.writer, into: &out) }
    }

    /// Evicts the least recently advanced sixteenth of the table (at least one writer, never
    /// `keep`), so the sort is paid once per many new writers.
    mutating func evictWriters(keeping keep: String, into out: inout ServerOutput) {
        let bound = max(1, configuration.maxWriters)
        let excess = writerWatermarks.count - bound
        let count = min(writerWatermarks.count - 1, excess + max(1, bound / 16) - 1)
        guard count > 0 else { return }
        let victims = writerWatermarks.filter { $0.key != keep }
            .sorted { $0.value.at != $1.value.at ? $0.value.at < $1.value.at : $0.key < $1.key }
            .prefix(count)
            .map(\.key)
        for w in victims { writerWatermarks[w] = nil }
        out.writes.append(.writerWatermarksRemoved(victims))
    }
}
