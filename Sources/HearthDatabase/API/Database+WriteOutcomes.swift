// The core's commits into the store, and each plain write's outcome kept with them until the app's
// handlers have run: the commit that acknowledges or reverts a write also saves a decided record
// holding its outcome, which leaves once every handler it was handed to has returned (the
// ledger's side is OutcomeLedger, the handlers' Database+Outcomes).

import Dispatch
import Hearth
import HearthModel

extension Database {
    /// The server's answers to plain writes among `events`, by write id (a transaction's write
    /// is answered to the transaction): `all` of them, and those whose outcome is `kept`. A
    /// write of this run that nothing will hear of — no completion, no write-result observer
    /// when its answer arrives, as with Firebase's `setValue(_:)` in most apps — is not kept:
    /// keeping it would only fill the store with outcomes no handler waits for. A write restored
    /// from an earlier run is kept either way (its completion died with that run; the next
    /// observer hears it).
    func plainWriteAnswers(_ events: [ClientEvent]) -> (all: [Int64: DatabaseError?], kept: [Int64: DatabaseError?]) {
        var all: [Int64: DatabaseError?] = [:], kept: [Int64: DatabaseError?] = [:]
        guard events.contains(where: { if case .writeCompleted = $0 { true } else { false } }) else {
            return (all, kept)
        }
        state.withLock { s in
            for case let .writeCompleted(id, error) in events where !s.transactions.contains(id) {
                all[id] = .some(error)
                if s.outcomes.keepsOutcome(ofWrite: id) { kept[id] = .some(error) }
            }
        }
        return (all, kept)
    }

    /// Applies the core's commits as one store commit (``ClientCommit/apply(to:)``); a
    /// mutation the store refuses is skipped and remembered, the rest commit. Durable at the
    /// database's tier only when it holds an ack or the token. The outcomes of the plain writes
    /// it ends (`answers`) are kept with it (``apply(_:keeping:to:)``).
    func commit(_ all: [ClientCommit], answers: [Int64: DatabaseError?]) {
        // At most this many per store commit: an ack of a write holding a server value resolves
        // it against the batch's server data, which projects every earlier event of the batch,
        // so a commit of K such acks costs O(K²); a burst of thousands of acks goes in slices,
        // in order (server data before the acks that follow it, so views never flicker). What
        // a commit costs beyond its events is under 1% of a drain at this size.
        let slice = 64
        var start = all.startIndex
        while start < all.endIndex {
            let end = min(start + slice, all.endIndex)
            commitSlice(Array(all[start..<end]), answers: answers)
            start = end
        }
    }

    private func commitSlice(_ commits: [ClientCommit], answers: [Int64: DatabaseError?]) {
        do {
            let (kept, refused) = try Database.commit(commits, keeping: answers, to: store)
            state.withLock { s in
                s.outcomes.kept(kept)
                if let last = refused.last { s.lastStorageError = DatabaseError(last.error) }
            }
        } catch {
            let e = DatabaseError(error)
            state.withLock { $0.lastStorageError = e }
        }
    }

    /// Applies the core's `commits` as one store commit — durable at the store's tier when one
    /// of them needs it, else buffered — keeping the outcome of each plain write `answers` ends
    /// (``apply(_:keeping:to:)``). A commit the store refuses is skipped and returned; the rest
    /// commit. Returns the kept outcomes' records by write id. Throws the log's failure (then
    /// nothing committed).
    static func commit(
        _ commits: [ClientCommit], keeping answers: [Int64: DatabaseError?], to store: Store
    ) throws(StoreError) -> (kept: [Int64: Int64], refused: [(commit: ClientCommit, error: StoreError)]) {
        let durable = commits.contains(where: \.needsDurability)
        var kept: [Int64: Int64] = [:]
        var refused: [(commit: ClientCommit, error: StoreError)] = []
        try store.commit(durability: durable ? nil : .buffered) { (b: inout StoreBatch) throws(StoreError) in
            for c in commits {
                do throws(StoreError) {
                    if let k = try apply(c, keeping: answers, to: &b) { kept[k.write] = k.record }
                } catch {
                    if case .log = error { throw error }
                    refused.append((c, error))
                }
            }
        }
        return (kept, refused)
    }

    /// Applies one of the core's commits to `b`; when it ends a plain write still pending (its
    /// ack or its revert) whose answer `answers` holds, the write's outcome is kept in the same
    /// batch, as a decided record. Returns the write's id and the record's.
    private static func apply(
        _ commit: ClientCommit, keeping answers: [Int64: DatabaseError?], to b: inout StoreBatch
    ) throws(StoreError) -> (write: Int64, record: Int64)? {
        let id: Int64
        switch commit {
        case .ackWrite(let i), .revertWrite(let i): id = i
        default:
            try commit.apply(to: &b)
            return nil
        }
        guard let answer = answers[id], let write = b.pendingWrite(id) else {
            try commit.apply(to: &b)
            return nil
        }
        try commit.apply(to: &b)
        let (status, reason) = decidedRecord(committed: answer == nil, error: answer)
        let record = try b.saveWriteOutcome(
            writeID: id, at: write.path, status: status == .committed ? .writeApplied : .writeRefused, reason: reason)
        return (id, record.id)
    }

    /// At open: the outcomes of writes an earlier run had kept in the store (decided, their
    /// handlers not all returned), in the order they were decided. A write's outcome record
    /// that names no write id (its argument not an integer: no version of Hearth writes one,
    /// so a damaged or foreign store) can never be delivered: it is removed here, with a
    /// warning, rather than kept forever.
    static func keptWriteResults(
        _ store: Store, warn: (String) -> Void
    ) throws(StoreError) -> [KeptOutcome<WriteResult>] {
        var kept: [KeptOutcome<WriteResult>] = []
        var unreadable: [Int64] = []
        for tx in store.transactions() where tx.status.isWriteOutcome {
            if let result = writeResult(of: tx) {
                kept.append(KeptOutcome(record: tx.id, value: result))
            } else {
                unreadable.append(tx.id)
            }
        }
        if !unreadable.isEmpty {
            try store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
                for id in unreadable { try b.completeTransaction(id) }
            }
            warn("removed \(unreadable.count) write outcome record(s) naming no write id: \(unreadable)")
        }
        return kept
    }

    /// The write result a decided write's record holds (nil for any other record).
    package static func writeResult(of tx: QueuedTransaction) -> WriteResult? {
        guard tx.status.isWriteOutcome else { return nil }
        let id: Int64
        switch tx.argument.leafValue {
        case .number(let n)?:
            guard let exact = Int64(exactly: n) else { return nil }
            id = exact
        case .integer(let i)?: id = i
        default: return nil
        }
        return WriteResult(id: WriteID(rawValue: id), error: tx.status == .writeApplied ? nil : reason(of: tx))
    }
}
