// The ack path, in the order it runs. The core answers a write (`ClientCore.responded`); the
// database hands the output's commits and the plain writes' answers to the acknowledger, which
// (1) commits them to the store, the outcome of each answered write kept beside it as a decided
// record when someone will hear of it; then (2) hands the outcome to the write's completion and
// the write-result observers (a named transaction's outcome joins here); and (3) once every one
// of them has returned, removes the record with the next acknowledgement commit. Its state, the
// ``OutcomeLedger``, is under its own lock; the database only steps the core and runs events.

import Dispatch
import Hearth
import HearthModel
import Synchronization

/// Commits the core's output to the store and carries each answered write's outcome to its
/// handlers and, once they have all returned, out of the store.
final class WriteAcknowledger: Sendable {
    /// The most outcomes of one kind (write results, transactions' outcomes) kept for an
    /// observer not yet registered (an earlier run's, or this run's when no handler was
    /// registered); past it the oldest is dropped (removed from the store and logged), so an
    /// app that never observes outcomes does not grow its store.
    static let maxUndeliveredOutcomes = 1_000

    /// At most this many of the core's commits per store commit: an ack of a write holding a
    /// server value resolves it against the batch's server data, which projects every earlier
    /// event of the batch, so a commit of K such acks costs O(K²); a burst of thousands of acks
    /// goes in slices, in order (server data before the acks that follow it, so views never
    /// flicker). What a commit costs beyond its events is under 1% of a drain at this size.
    static let slice = 64

    private struct State {
        var ledger: OutcomeLedger
        /// Set by ``close()``: acknowledgement commits stop (the records stay, delivered again
        /// at the next start).
        var closed = false
    }

    private let store: Store
    /// Where acknowledgement commits run: the database's queue, serial with the core's steps.
    private let work: DispatchQueue
    private let log: @Sendable (String) -> Void
    private let state: Mutex<State>

    init(store: Store, work: DispatchQueue, log: @escaping @Sendable (String) -> Void, ledger: OutcomeLedger) {
        self.store = store
        self.work = work
        self.log = log
        state = Mutex(State(ledger: ledger))
    }

    // MARK: - 1. The answer commits, with the outcome kept

    /// Applies the core's commits in slices of ``slice`` store commits (``commit(_:keeping:to:)``);
    /// a mutation the store refuses is skipped and logged, the rest commit. The outcome of a
    /// plain write `answers` ends (write id → the server's error, `nil` when applied) is kept
    /// with its answer when ``OutcomeLedger/keepsOutcome(ofWrite:)`` says someone will hear it.
    func commit(_ all: [ClientCommit], answering answers: [Int64: DatabaseError?]) {
        let keeping =
            answers.isEmpty ? [:] : state.withLock { s in answers.filter { s.ledger.keepsOutcome(ofWrite: $0.key) } }
        var start = all.startIndex
        while start < all.endIndex {
            let end = min(start + WriteAcknowledger.slice, all.endIndex)
            commitSlice(Array(all[start..<end]), keeping: keeping)
            start = end
        }
    }

    private func commitSlice(_ commits: [ClientCommit], keeping answers: [Int64: DatabaseError?]) {
        do {
            let (kept, refused) = try WriteAcknowledger.commit(commits, keeping: answers, to: store)
            state.withLock { $0.ledger.kept(kept) }
            // A refusal is a change from the server the store would not take (a value past its
            // limits, an offset that is not a number): the cache keeps what it had, and the
            // app's logger hears of it.
            for r in refused { log("the store refused a change from the server: \(DatabaseError(r.error))") }
        } catch {
            // The log failed: nothing of the slice committed, and the store refuses writes until
            // it recovers; the writes it would have acknowledged stay pending and are re-sent
            // at the next start.
            log("acknowledgements not saved: \(DatabaseError(error))")
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
        let (status, reason) = Database.decidedRecord(committed: answer == nil, error: answer)
        let record = try b.saveWriteOutcome(
            writeID: id, at: write.path, status: status == .committed ? .writeApplied : .writeRefused, reason: reason)
        return (id, record.id)
    }

    // MARK: - 2. The handlers hear it

    /// Write `id`'s completion, handed out with its answer.
    func expect(_ completion: WriteCallback, forWrite id: Int64) {
        state.withLock { $0.ledger.expect(completion, forWrite: id) }
    }

    /// Reports a write's outcome: its completion (once) and every write-result observer. When
    /// the outcome is kept in the store (by the commit that ended the write), it leaves once
    /// each of them has returned; with none, it waits for the next write-result observer.
    func reportWrite(_ id: Int64, _ error: DatabaseError?) {
        let (callback, record) = state.withLock { $0.ledger.answered(write: id) }
        let completion = callback.map { c in (queue: c.queue, run: { @Sendable in c.handler(error) }) }
        deliver(
            WriteResult(id: WriteID(rawValue: id), error: error), record: record, completion: completion,
            channel: \.writes
        ) { "\($0.id)'s result was dropped: \(Self.maxUndeliveredOutcomes) results wait for observeWriteResults" }
    }

    /// Hands a named transaction's outcome, kept as the record of the same id, to `completion`
    /// (this run's, if any) and to every observer registered now, as ``reportWrite(_:_:)`` does.
    func reportTransaction(
        _ outcome: TransactionOutcome, completion: (queue: DispatchQueue, run: @Sendable () -> Void)?
    ) {
        deliver(outcome, record: outcome.id, completion: completion, channel: \.transactions) {
            "transaction \($0.id)'s outcome was dropped: \(Self.maxUndeliveredOutcomes) outcomes wait for observeTransactionResults"
        }
    }

    /// Hands `value`, kept in the store as `record` (`nil`: not kept), to `completion` and to
    /// every observer of `channel` now; once each of them has returned, the record leaves the
    /// store. A kept value with no handler at all waits in `channel` for the next observer,
    /// within ``maxUndeliveredOutcomes`` (the oldest is dropped past it, logged with `dropped`).
    private func deliver<Value: Sendable>(
        _ value: Value, record: Int64?, completion: (queue: DispatchQueue, run: @Sendable () -> Void)?,
        channel: WritableKeyPath<OutcomeLedger, OutcomeChannel<Value>>, dropped: (Value) -> String
    ) {
        let (observers, drops) = state.withLock { s -> ([OutcomeObserver<Value>], [KeptOutcome<Value>]) in
            let now = Array(s.ledger[keyPath: channel].observers.values)
            guard now.isEmpty, completion == nil, let record else { return (now, []) }
            let drops = s.ledger[keyPath: channel].keep(KeptOutcome(record: record, value: value))
            for d in drops { acknowledge(d.record, &s) }
            return (now, drops)
        }
        for d in drops { log(dropped(d.value)) }
        var handlers: [(DispatchQueue, @Sendable () -> Void)] = completion.map { [($0.queue, $0.run)] } ?? []
        handlers += observers.map { o -> (DispatchQueue, @Sendable () -> Void) in (o.queue, { o.handler(value) }) }
        guard !handlers.isEmpty else { return }
        let left = Countdown(handlers.count)
        for (queue, run) in handlers {
            queue.async { [weak self] in
                run()
                if left.finishOne(), let record { self?.acknowledge(record) }
            }
        }
    }

    /// Registers `observer` on `channel` as `handle`; the first one also gets, at once, every
    /// outcome waiting there, each acknowledged once its handler has returned.
    func observe<Value: Sendable>(
        _ observer: OutcomeObserver<Value>, as handle: DatabaseHandle,
        on channel: WritableKeyPath<OutcomeLedger, OutcomeChannel<Value>>
    ) {
        let kept = state.withLock { $0.ledger[keyPath: channel].register(observer, as: handle) }
        for k in kept {
            observer.queue.async { [weak self] in
                observer.handler(k.value)
                self?.acknowledge(k.record)
            }
        }
    }

    /// Stops the observer `handle` of `channel`.
    func removeObserver<Value: Sendable>(
        _ handle: DatabaseHandle, on channel: WritableKeyPath<OutcomeLedger, OutcomeChannel<Value>>
    ) {
        state.withLock { $0.ledger[keyPath: channel].remove(handle) }
    }

    // MARK: - 3. The record leaves

    /// Every handler of the outcome kept as `record` has returned: the record leaves the store
    /// with the next acknowledgement commit (one commit, without a sync of its own, for every
    /// outcome acknowledged by then; it becomes durable with the next synced commit or the close).
    func acknowledge(_ record: Int64) {
        state.withLock { s in acknowledge(record, &s) }
    }

    private func acknowledge(_ record: Int64, _ s: inout State) {
        guard s.ledger.acknowledge(record) else { return }
        work.async { [weak self] in self?.commitAcknowledged() }
    }

    /// [on the database's queue] Removes the records of the outcomes acknowledged so far. A
    /// failure leaves them in the store, to be delivered again at the next start (at least once).
    func commitAcknowledged() {
        dispatchPrecondition(condition: .onQueue(work))
        let ids: [Int64] = state.withLock { s in
            let ids = s.ledger.takeAcknowledged()
            return s.closed ? [] : ids
        }
        guard !ids.isEmpty else { return }
        _ = try? store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
            for id in ids where b.transaction(id)?.status.isDecided == true { try b.completeTransaction(id) }
        }
    }

    /// [on the database's queue] The database is closing: what was acknowledged leaves the store
    /// now, and no acknowledgement commit runs after.
    func close() {
        commitAcknowledged()
        state.withLock { $0.closed = true }
    }

    /// The ledger as it is now (for tests and checks).
    var ledger: OutcomeLedger { state.withLock { $0.ledger } }
}

// What each of the core's commits does to the store.
extension ClientCommit {
    /// Whether the commit must be durable at the database's tier (an ack or revert lost in a
    /// crash means the write is sent again; the token is the user's session). Server data
    /// needs no sync: losing it loses only cache.
    package var needsDurability: Bool {
        switch self {
        case .ackWrite, .revertWrite, .saveAuth, .clearAuth, .ackOnDisconnect, .removeOnDisconnect,
            .applyOnDisconnectLocally, .transactionSent:
            true
        default: false
        }
    }

    /// Records the commit in a store batch. Each batch method checks its input before it
    /// records anything, so a mutation the store refuses (invalid data from a server, an ack
    /// for a write no longer pending) throws without spoiling the batch.
    package func apply(to b: inout StoreBatch) throws(StoreError) {
        switch self {
        case let .serverOverwrite(path, node): try b.applyServerOverwrite(node, at: path)
        case let .serverMerge(path, children): try b.applyServerMerge(children, at: path)
        case let .taggedOverwrite(path, node, location): try b.applyTaggedServerOverwrite(node, at: path, for: location)
        case let .taggedMerge(path, children, location): try b.applyTaggedServerMerge(children, at: path, for: location)
        case .listenComplete(let location): try b.applyListenComplete(location)
        case .ackWrite(let id): if b.pendingWrite(id) != nil { try b.applyAckedWrite(id) }
        case .revertWrite(let id): if b.pendingWrite(id) != nil { try b.revertWrite(id) }
        case .serverTimeOffset(let ms): try b.setServerTimeOffset(ms)
        case .saveAuth(let token): b.saveAuth(token)
        case .clearAuth: b.clearAuth()
        case .transactionSent(let id): if b.transaction(id) != nil { try b.updateTransaction(id, status: .sent) }
        case .ackOnDisconnect(let id): if b.onDisconnectOperation(id) != nil { try b.ackOnDisconnect(id) }
        case .removeOnDisconnect(let id): if b.onDisconnectOperation(id) != nil { try b.removeOnDisconnect(id) }
        case .applyOnDisconnectLocally(let id):
            if b.onDisconnectOperation(id) != nil { try b.applyOnDisconnectLocally(id) }
        }
    }
}

/// Outcomes on their way to the app's handlers, and the records that may leave the store.
///
/// A plain write's outcome, and a named transaction's, is kept in the store as a decided record
/// until every handler it was handed to has returned; then its record is *acknowledged* and leaves
/// with the next acknowledgement commit. An outcome no handler takes waits in its channel for the
/// first observer.
///
/// Invariant: acknowledged records wait only while a commit of them is scheduled.
struct OutcomeLedger: Sendable {
    /// Completions of this run's writes that have not been answered, by write id.
    private(set) var completions: [Int64: WriteCallback] = [:]
    /// Answered plain writes whose outcome the store keeps: the record's id by write id, until
    /// the outcome is handed out.
    private var records: [Int64: Int64] = [:]
    /// The id of this run's first write: those below it were restored from an earlier run.
    let firstWriteOfRun: Int64
    var writes: OutcomeChannel<WriteResult>
    var transactions: OutcomeChannel<TransactionOutcome>
    /// Records whose handlers have all returned, for the next acknowledgement commit.
    private var acks: [Int64] = []
    private(set) var ackCommitScheduled = false

    init(
        firstWriteOfRun: Int64, limit: Int, waitingWrites: [KeptOutcome<WriteResult>] = [],
        waitingTransactions: [KeptOutcome<TransactionOutcome>] = []
    ) {
        self.firstWriteOfRun = firstWriteOfRun
        writes = OutcomeChannel(limit: limit, waiting: waitingWrites)
        transactions = OutcomeChannel(limit: limit, waiting: waitingTransactions)
    }

    mutating func expect(_ completion: WriteCallback, forWrite id: Int64) {
        completions[id] = completion
    }

    /// Whether write `id`'s outcome must be kept in the store when it is answered: someone will
    /// hear of it (its completion, a write-result observer) or it was restored from an earlier
    /// run, whose completion died with that run. A write nothing hears of keeps no outcome.
    func keepsOutcome(ofWrite id: Int64) -> Bool {
        id < firstWriteOfRun || completions[id] != nil || !writes.observers.isEmpty
    }

    /// The answers of `kept` writes were committed with their outcome records (record by write).
    mutating func kept(_ kept: [Int64: Int64]) {
        records.merge(kept) { $1 }
    }

    /// Write `id` was answered: its completion, if any, and its outcome's record, if kept.
    mutating func answered(write id: Int64) -> (completion: WriteCallback?, record: Int64?) {
        (completions.removeValue(forKey: id), records.removeValue(forKey: id))
    }

    /// Every handler of the outcome kept as `record` has returned (or it was dropped); returns
    /// whether the caller must schedule the acknowledgement commit (none is scheduled yet).
    mutating func acknowledge(_ record: Int64) -> Bool {
        acks.append(record)
        defer {
            ackCommitScheduled = true
            assert(acks.isEmpty || ackCommitScheduled, "acknowledged records wait only for a scheduled commit")
        }
        return !ackCommitScheduled
    }

    /// The records acknowledged so far, for the commit that removes them; none is scheduled after.
    mutating func takeAcknowledged() -> [Int64] {
        ackCommitScheduled = false
        defer { acks = [] }
        return acks
    }
}

/// How many handlers of one outcome have yet to return.
final class Countdown: Sendable {
    private let left: Mutex<Int>
    init(_ count: Int) { left = Mutex(count) }
    /// One handler returned; true for the last.
    func finishOne() -> Bool {
        left.withLock { n in
            n -= 1
            return n == 0
        }
    }
}
