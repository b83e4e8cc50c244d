@_spi(HearthInternals) import Hearth

// The runtime's side of durable onDisconnect operations: the startup that runs those of the
// connections a stop or a crash left, and what a failed commit does to sessions it dropped.

extension ServerRuntime {
    /// Runs the journaled operations of the sessions the last run left open (those whose
    /// marker the store holds already ran), commits them with their markers, records every
    /// session ended and compacts the journal, then removes the markers — each step durable
    /// before the next, so a crash anywhere in it is recovered by the next start, and no
    /// operation runs twice. Linear in the journal's live operations.
    static func recoverOnDisconnect(
        _ core: inout ServerCore, store: AuthoritativeStore, journal: OnDisconnectJournal, now: Int64
    ) throws(StoreError) {
        let sessions = journal.sessions
        let marked = Set(store.writerWatermarks().keys.compactMap(ServerCore.markedSession))
        guard !sessions.isEmpty || !marked.isEmpty else { return }
        let out = core.runRecovered(sessions, ran: marked, now: now)
        if !out.writes.isEmpty {
            try store.commit(data: core.data) { (batch: inout AuthoritativeBatch) throws(StoreError) in
                for w in out.writes { try batch.apply(w) }
            }
        }
        do {
            try journal.append(out.onDisconnect)
            try journal.compact()
        } catch { throw .log(error) }
        let markers = marked.union(sessions.map(\.0)).sorted().map(ServerCore.onDisconnectMarker)
        try store.commit(data: core.data) { (batch: inout AuthoritativeBatch) throws(StoreError) in
            try batch.removeWriterWatermarks(markers)
        }
    }

    /// After a failed commit: the sessions whose end was dropped. One whose marker the store
    /// holds ran (only the journal's record of its end was lost): recorded with the next
    /// commit. Any other did not: its journaled operations wait, in the core, for writes to
    /// resume.
    func requeueEnded(_ dropped: [Item], durableMarks: [String: WriterWatermark], _ s: inout State) {
        let ended = dropped.flatMap { item in
            item.output.onDisconnect.compactMap { c -> UInt64? in
                if case .ended(let session) = c { return session }
                return nil
            }
        }
        guard !ended.isEmpty else { return }
        let live = Dictionary(journal.sessions, uniquingKeysWith: { a, _ in a })
        for session in ended {
            if durableMarks[ServerCore.onDisconnectMarker(session)] != nil {
                s.pendingEnded.append(session)
            } else if let ops = live[session] {
                s.core.deferOnDisconnect(session, ops)
            }
        }
    }
}
