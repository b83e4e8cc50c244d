@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthWire

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
// because its answer was lost, and is answered `ok` without applying it again. (Known gap: a
// write that was *refused* while a later write of the same writer was applied, whose refusal
// was lost and which is then re-sent, is also answered `ok` — the client loses that error and
// reports success for a write the server never applied; its cache then follows the server's
// data. Telling the two apart would need the refused ids remembered too.)
// A write refused (rules, invalid data, a stale transaction hash) does not advance the
// watermark, so its re-send is judged again.
//
// **The answer to a re-send** is `ok` with `{"seen":true}`, then the connection's own listens
// that overlap the written locations get their current data there. A client acknowledges a
// write as Firebase's do — the write's value becomes its cached server data — but data of later
// writes may already have reached it (pushed when it listened again, before the re-send was
// judged), and the value would overwrite them; the data sent after the `ok` puts the server's
// current data back. (Found by the simulator: seeds 41, 137, 155, 160, 178, 181, 186, 1561, 1924, 2077, 2167.)
//
// **The bound:** at most ``ServerConfiguration/maxWriters`` writers; past it, the least
// recently advanced sixteenth is evicted (durably), and an evicted writer falls back to
// at-least-once: its re-sent writes are applied again, as with Firebase.

extension ServerCore {
    /// Whether a stamped write was applied already (its id is at or below its writer's
    /// watermark). Unstamped writes, and every write when the extension is off, are new.
    func alreadyApplied(_ stamp: WriteStamp?) -> Bool {
        guard configuration.exactlyOnceWrites, let stamp, Self.markedSession(stamp.writer) == nil,
            let mark = writerWatermarks[stamp.writer]
        else {
            return false
        }
        return stamp.id <= mark.id
    }

    /// Answers a recognised re-send (the caller checked the write's permission first): `ok` +
    /// `seen`, then, where one of the connection's listens overlaps a written location, the
    /// current data there — the client's cache took the write's value, even outside a filtered
    /// query's window, so it is corrected — and each overlapping filtered query's window,
    /// tagged. The data goes at the deeper of the written location and the listen's (a write
    /// above a listen is answered at the listen), at the leaf above it if one stands there, and
    /// only where the connection may read: the write's location can reach beyond what it
    /// listens to.
    mutating func answerSeen(_ id: ConnectionID, number: Int, writtenAt paths: [Path], into out: inout ServerOutput) {
        out.send(id, .response(number: number, status: "ok", data: WriteStamp.seenResponse))
        guard let c = connections[id] else { return }
        let listens = c.listens.values.sorted(by: Listen.inOrder)
        func overlaps(_ l: Listen, _ p: Path) -> Bool { p.contains(l.path) || l.path.contains(p) }
        var candidates = Set<Path>()
        for p in paths {
            for l in listens where overlaps(l, p) {
                let at = l.path.contains(p) ? p : l.path
                candidates.insert(leafAbove(at) ?? at)
            }
        }
        // Each location once, and none below one already sent (its data is in it).
        var sent: [Path] = []
        for at in candidates.sorted() where !sent.contains(where: { $0.contains(at) }) {
            guard mayRead(at, .default, as: c.principal).allowed else { continue }
            sent.append(at)
            let node = data.child(at: at)
            out.send(id) { ServerMessage.set(path: at, data: node.exportJSON(), tag: nil).text }
        }
        for l in listens where !l.query.loadsAllData && paths.contains(where: { overlaps(l, $0) }) {
            let node = data.child(at: l.path)
            out.send(id) {
                ServerMessage.set(path: l.path, data: queryView(node, l.query).exportJSON(), tag: l.tag).text
            }
        }
    }

    /// The highest path strictly above `path` where the data is a non-empty leaf, if any.
    func leafAbove(_ path: Path) -> Path? {
        var keys: [ChildKey] = []
        for key in path.keys {
            let node = data.child(at: Path(keys: keys))
            if node.isLeaf && !node.isEmpty { return Path(keys: keys) }
            keys.append(key)
        }
        return nil
    }

    /// After a stamped write was applied: its writer's watermark moves to its id, durably in
    /// the same output as the write, and the table is kept within its bound.
    mutating func advanceWatermark(_ stamp: WriteStamp?, into out: inout ServerOutput) {
        // The server's own onDisconnect markers are not a client's to advance.
        guard configuration.exactlyOnceWrites, let stamp, Self.markedSession(stamp.writer) == nil else { return }
        let old = writerWatermarks[stamp.writer]
        // The caller checked alreadyApplied first: an applied write is always above the mark.
        assert(old.map { stamp.id > $0.id } ?? true, "a write at or below its writer's watermark was applied")
        writerWatermarks[stamp.writer] = WriterWatermark(id: stamp.id, at: max(now, old?.at ?? now))
        out.writes.append(.writerWatermark(writer: stamp.writer, id: stamp.id))
        if old == nil, writerWatermarks.count > max(1, configuration.maxWriters) {
            evictWriters(keeping: stamp.writer, into: &out)
        }
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
