// Outcomes kept in the store until the app's handlers have run — a named transaction's and a plain
// write's: the record of an ended transaction, or of an answered write, stays, marked decided, and
// leaves with an acknowledgement batched into a later commit. `OutcomeLedger` is the state (who
// hears of each outcome, what waits for an observer, which records may leave), pure and under
// ``Database/state``; the extension below runs the handlers and commits the acknowledgements.

import Dispatch
import Hearth
import HearthModel
import Synchronization

/// An observer of one kind of outcome (write results, named transactions' outcomes).
struct OutcomeObserver<Value: Sendable>: Sendable {
    let queue: DispatchQueue
    let handler: @Sendable (Value) -> Void
}

/// An observer of every write's outcome.
typealias WriteResultObserver = OutcomeObserver<WriteResult>

/// An outcome kept in the store as the decided record `record`, waiting for an observer.
struct KeptOutcome<Value: Sendable>: Sendable {
    let record: Int64
    let value: Value
}

/// A write's completion handler and its queue.
struct WriteCallback: Sendable {
    let queue: DispatchQueue
    let handler: @Sendable (DatabaseError?) -> Void
}

/// The observers of one kind of outcome, and the kept outcomes that wait for the first of them.
///
/// Invariant: outcomes wait only while no observer is registered (the first one takes them all),
/// and once an outcome has been kept, at most ``limit`` wait (those restored at open may be more
/// until then).
struct OutcomeChannel<Value: Sendable>: Sendable {
    /// The most outcomes that wait; past it the oldest is dropped.
    let limit: Int
    private(set) var observers: [DatabaseHandle: OutcomeObserver<Value>] = [:]
    /// Kept outcomes no handler took, oldest first.
    private(set) var waiting: [KeptOutcome<Value>] = []

    init(limit: Int, waiting: [KeptOutcome<Value>] = []) {
        precondition(limit > 0, "an outcome channel must be able to keep an outcome")
        self.limit = limit
        self.waiting = waiting
    }

    /// Registers `observer` under `handle`; returns the outcomes that waited, now its to hear.
    mutating func register(_ observer: OutcomeObserver<Value>, as handle: DatabaseHandle) -> [KeptOutcome<Value>] {
        observers[handle] = observer
        let taken = waiting
        waiting = []
        checkInvariants()
        return taken
    }

    mutating func remove(_ handle: DatabaseHandle) {
        observers.removeValue(forKey: handle)
    }

    /// Keeps an outcome no handler took; returns the oldest, dropped to stay within ``limit``.
    mutating func keep(_ outcome: KeptOutcome<Value>) -> [KeptOutcome<Value>] {
        precondition(observers.isEmpty, "an outcome waits only while nobody observes")
        waiting.append(outcome)
        let excess = max(0, waiting.count - limit)
        let dropped = Array(waiting.prefix(excess))
        waiting.removeFirst(excess)
        assert(waiting.count <= limit, "at most limit outcomes wait once one has been kept")
        checkInvariants()
        return dropped
    }

    private func checkInvariants() {
        assert(observers.isEmpty || waiting.isEmpty, "outcomes wait only while nobody observes")
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

extension Database {
    /// The most outcomes of one kind (write results, transactions' outcomes) kept for an
    /// observer not yet registered (an earlier run's, or this run's when no handler was
    /// registered); past it the oldest is dropped (removed from the store and logged), so an
    /// app that never observes outcomes does not grow its store.
    static let maxUndeliveredOutcomes = 1_000

    /// Hands a named transaction's outcome to `completion` (this run's, if any) and to every
    /// observer registered now; once each of them has returned, the outcome's record leaves
    /// the store (``acknowledgeOutcome(_:)``). With no handler at all, it waits for the next
    /// ``observeTransactionResults(on:_:)``.
    func deliverOutcome(_ outcome: TransactionOutcome, completion: (queue: DispatchQueue, run: @Sendable () -> Void)?) {
        deliver(outcome, record: outcome.id, completion: completion, channel: \.transactions) {
            "transaction \($0.id)'s outcome was dropped: \(Database.maxUndeliveredOutcomes) outcomes wait for observeTransactionResults"
        }
    }

    /// Reports a write's outcome: its completion (once) and every write-result observer. When
    /// the outcome is kept in the store (by the commit that ended the write), it leaves once
    /// each of them has returned; with none, it waits for the next
    /// ``observeWriteResults(on:_:)``.
    func reportWrite(_ id: Int64, _ error: DatabaseError?) {
        let (callback, record) = state.withLock { $0.outcomes.answered(write: id) }
        let completion = callback.map { c in (queue: c.queue, run: { @Sendable in c.handler(error) }) }
        deliver(
            WriteResult(id: WriteID(rawValue: id), error: error), record: record, completion: completion,
            channel: \.writes
        ) { "\($0.id)'s result was dropped: \(Database.maxUndeliveredOutcomes) results wait for observeWriteResults" }
    }

    /// Hands `value`, kept in the store as `record` (`nil`: not kept), to `completion` and to
    /// every observer of `channel` now; once each of them has returned, the record leaves the
    /// store. A kept value with no handler at all waits in `channel` for the next observer,
    /// within ``maxUndeliveredOutcomes`` (the oldest is dropped past it, logged with `dropped`).
    func deliver<Value: Sendable>(
        _ value: Value, record: Int64?, completion: (queue: DispatchQueue, run: @Sendable () -> Void)?,
        channel: WritableKeyPath<OutcomeLedger, OutcomeChannel<Value>>, dropped: (Value) -> String
    ) {
        let (observers, drops) = state.withLock { s -> ([OutcomeObserver<Value>], [KeptOutcome<Value>]) in
            let now = Array(s.outcomes[keyPath: channel].observers.values)
            guard now.isEmpty, completion == nil, let record else { return (now, []) }
            let drops = s.outcomes[keyPath: channel].keep(KeptOutcome(record: record, value: value))
            for d in drops { acknowledge(d.record, &s) }
            return (now, drops)
        }
        for d in drops { Database.logger(options)(dropped(d.value)) }
        var handlers: [(DispatchQueue, @Sendable () -> Void)] = completion.map { [($0.queue, $0.run)] } ?? []
        handlers += observers.map { o -> (DispatchQueue, @Sendable () -> Void) in (o.queue, { o.handler(value) }) }
        guard !handlers.isEmpty else { return }
        let left = Countdown(handlers.count)
        for (queue, run) in handlers {
            queue.async { [weak self] in
                run()
                if left.finishOne(), let record { self?.acknowledgeOutcome(record) }
            }
        }
    }

    /// Registers `observer` on `channel`; the first one also gets, at once, every outcome
    /// waiting there, each acknowledged once its handler has returned.
    func observeOutcomes<Value: Sendable>(
        _ observer: OutcomeObserver<Value>, on channel: WritableKeyPath<OutcomeLedger, OutcomeChannel<Value>>
    ) -> DatabaseHandle {
        startIfNeeded()
        let (h, kept) = state.withLock { s in
            let h = s.newHandle()
            return (h, s.outcomes[keyPath: channel].register(observer, as: h))
        }
        for k in kept {
            observer.queue.async { [weak self] in
                observer.handler(k.value)
                self?.acknowledgeOutcome(k.record)
            }
        }
        return h
    }

    /// Every handler of outcome `id` has returned: its record leaves the store with the next
    /// acknowledgement commit (one commit, without a sync of its own, for every outcome
    /// acknowledged by then; it becomes durable with the next synced commit or the close).
    func acknowledgeOutcome(_ id: Int64) {
        state.withLock { s in acknowledge(id, &s) }
    }

    private func acknowledge(_ id: Int64, _ s: inout RuntimeState) {
        guard s.outcomes.acknowledge(id) else { return }
        work.async { [weak self] in self?.commitOutcomeAcks() }
    }

    /// [on ``work``] Removes the records of the outcomes acknowledged so far. A failure leaves
    /// them in the store, to be delivered again at the next start (at least once).
    func commitOutcomeAcks() {
        dispatchPrecondition(condition: .onQueue(work))
        let ids: [Int64] = state.withLock { s in
            let ids = s.outcomes.takeAcknowledged()
            return s.closed ? [] : ids
        }
        guard !ids.isEmpty else { return }
        _ = try? store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
            for id in ids where b.transaction(id)?.status.isDecided == true { try b.completeTransaction(id) }
        }
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
