// A plain write's outcome, kept in the store until the app's handlers have run: the commit that
// acknowledges or reverts the write also saves a decided record holding the outcome, which leaves
// once every handler it was handed to has returned (the machinery of Database+Outcomes).

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
                let heard = id < s.firstWriteOfRun || s.writeCallbacks[id] != nil || !s.writeResultObservers.isEmpty
                if heard { kept[id] = .some(error) }
            }
        }
        return (all, kept)
    }

    /// Applies one of the core's commits to `b`; when it ends a plain write still pending (its
    /// ack or its revert) whose answer `answers` holds, the write's outcome is kept in the same
    /// batch, as a decided record. Returns the write's id and the record's.
    static func apply(
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

    /// Reports a write's outcome: its completion (once) and every write-result observer. When
    /// the outcome is kept in the store (``apply(_:keeping:to:)``), it leaves once each of them
    /// has returned; with none, it waits for the next ``observeWriteResults(on:_:)``.
    func reportWrite(_ id: Int64, _ error: DatabaseError?) {
        let (callback, record) = state.withLock { s in
            (s.writeCallbacks.removeValue(forKey: id), s.writeOutcomeRecords.removeValue(forKey: id))
        }
        let completion = callback.map { c in (queue: c.queue, run: { @Sendable in c.handler(error) }) }
        deliver(
            WriteResult(id: WriteID(rawValue: id), error: error), record: record, completion: completion,
            observers: \.writeResultObservers, waiting: \.undeliveredWriteResults
        ) { "\($0.id)'s result was dropped: \(Database.maxUndeliveredOutcomes) results wait for observeWriteResults" }
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
