// Outcomes kept in the store until the app's handlers have run — a named transaction's and a plain
// write's: the record of an ended transaction, or of an answered write, stays, marked decided, and
// leaves with an acknowledgement batched into a later commit.

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
        deliver(
            outcome, record: outcome.id, completion: completion, observers: \.transactionObservers,
            waiting: \.undeliveredOutcomes
        ) {
            "transaction \($0.id)'s outcome was dropped: \(Database.maxUndeliveredOutcomes) outcomes wait for observeTransactionResults"
        }
    }

    /// Hands `value`, kept in the store as `record` (`nil`: not kept), to `completion` and to
    /// every observer in `registered` now; once each of them has returned, the record leaves the
    /// store. A kept value with no handler at all waits in `waiting` for the next observer,
    /// within ``maxUndeliveredOutcomes`` (the oldest is dropped past it, logged with `dropped`).
    func deliver<Value: Sendable>(
        _ value: Value, record: Int64?, completion: (queue: DispatchQueue, run: @Sendable () -> Void)?,
        observers registered: KeyPath<RuntimeState, [DatabaseHandle: OutcomeObserver<Value>]>,
        waiting: WritableKeyPath<RuntimeState, [KeptOutcome<Value>]>, dropped: (Value) -> String
    ) {
        let (observers, drop) = state.withLock { s -> ([OutcomeObserver<Value>], Value?) in
            let now = Array(s[keyPath: registered].values)
            guard now.isEmpty, completion == nil, let record else { return (now, nil) }
            return (now, keepUndelivered(KeptOutcome(record: record, value: value), in: waiting, &s))
        }
        if let drop { Database.logger(options)(dropped(drop)) }
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

    /// Registers `observer` in `registered`; the first one also gets, at once, every outcome
    /// waiting in `waiting`, each acknowledged once its handler has returned.
    func observeOutcomes<Value: Sendable>(
        _ observer: OutcomeObserver<Value>,
        in registered: WritableKeyPath<RuntimeState, [DatabaseHandle: OutcomeObserver<Value>]>,
        waiting: WritableKeyPath<RuntimeState, [KeptOutcome<Value>]>
    ) -> DatabaseHandle {
        startIfNeeded()
        let (h, kept) = state.withLock { s in
            let h = s.newHandle()
            s[keyPath: registered][h] = observer
            defer { s[keyPath: waiting] = [] }
            return (h, s[keyPath: waiting])
        }
        for k in kept {
            observer.queue.async { [weak self] in
                observer.handler(k.value)
                self?.acknowledgeOutcome(k.record)
            }
        }
        return h
    }

    /// Keeps an outcome no handler took, within ``maxUndeliveredOutcomes``; the oldest,
    /// dropped to make room (its record leaves the store with the next acknowledgement
    /// commit).
    private func keepUndelivered<Value: Sendable>(
        _ kept: KeptOutcome<Value>, in waiting: WritableKeyPath<RuntimeState, [KeptOutcome<Value>]>,
        _ s: inout RuntimeState
    ) -> Value? {
        s[keyPath: waiting].append(kept)
        guard s[keyPath: waiting].count > Database.maxUndeliveredOutcomes else { return nil }
        let dropped = s[keyPath: waiting].removeFirst()
        s.outcomeAcks.append(dropped.record)
        scheduleOutcomeAcks(&s)
        return dropped.value
    }

    /// Every handler of outcome `id` has returned: its record leaves the store with the next
    /// acknowledgement commit (one commit, without a sync of its own, for every outcome
    /// acknowledged by then; it becomes durable with the next synced commit or the close).
    func acknowledgeOutcome(_ id: Int64) {
        state.withLock { s in
            s.outcomeAcks.append(id)
            scheduleOutcomeAcks(&s)
        }
    }

    private func scheduleOutcomeAcks(_ s: inout RuntimeState) {
        guard !s.outcomeAckScheduled else { return }
        s.outcomeAckScheduled = true
        work.async { [weak self] in self?.commitOutcomeAcks() }
    }

    /// [on ``work``] Removes the records of the outcomes acknowledged so far. A failure leaves
    /// them in the store, to be delivered again at the next start (at least once).
    func commitOutcomeAcks() {
        dispatchPrecondition(condition: .onQueue(work))
        let ids: [Int64] = state.withLock { s in
            s.outcomeAckScheduled = false
            defer { s.outcomeAcks = [] }
            return s.closed ? [] : s.outcomeAcks
        }
        guard !ids.isEmpty else { return }
        _ = try? store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
            for id in ids where b.transaction(id)?.status.isDecided == true { try b.completeTransaction(id) }
        }
    }

    /// The record of a decided transaction: its status and the local-result field's content.
    static func decidedRecord(committed: Bool, error: DatabaseError?) -> (QueuedTransaction.Status, Node) {
        if committed { return (.committed, .empty) }
        guard let error else { return (.aborted, .empty) }
        return (.aborted, .string(JSONValue.array(errorFields(error).map { .string($0) }).serialized()))
    }

    /// The outcome a decided record holds (nil for one not decided).
    static func outcome(of tx: QueuedTransaction) -> TransactionOutcome? {
        switch tx.status {
        case .committed: return TransactionOutcome(id: tx.id, committed: true, error: nil)
        case .aborted: return TransactionOutcome(id: tx.id, committed: false, error: reason(of: tx))
        case .queued, .sent, .needsRetry, .writeApplied, .writeRefused: return nil
        }
    }

    /// The error a decided record holds in its local-result field (nil when it holds none).
    static func reason(of tx: QueuedTransaction) -> DatabaseError? {
        guard case .string(let text)? = tx.localResult.leafValue else { return nil }
        if case .array(let items)? = try? JSONValue.parse(text) {
            let error = decodeError(
                items.compactMap { item -> String? in
                    if case .string(let s) = item { return s }
                    return nil
                })
            if let error { return error }
        }
        return .storage("\(tx.status.isWriteOutcome ? "write outcome" : "transaction") \(tx.id) ended: \(text)")
    }

    /// An error as a kind and its strings (FORMAT.md §11.4, transaction status 4).
    private static func errorFields(_ error: DatabaseError) -> [String] {
        switch error {
        case .invalidPath(let s): ["invalidPath", s]
        case .invalidQuery(let s): ["invalidQuery", s]
        case .invalidValue(let s): ["invalidValue", s]
        case .decodingFailed(let s): ["decodingFailed", s]
        case .permissionDenied(let s): ["permissionDenied", s]
        case let .serverError(status, message): ["serverError", status, message]
        case .offline: ["offline"]
        case .closed: ["closed"]
        case .storage(let s): ["storage", s]
        case .alreadyInUse(let s): ["alreadyInUse", s]
        case .eventBufferFull(let limit): ["eventBufferFull", String(limit)]
        }
    }

    private static func decodeError(_ f: [String]) -> DatabaseError? {
        switch (f.first ?? "", f.count) {
        case ("invalidPath", 2): .invalidPath(f[1])
        case ("invalidQuery", 2): .invalidQuery(f[1])
        case ("invalidValue", 2): .invalidValue(f[1])
        case ("decodingFailed", 2): .decodingFailed(f[1])
        case ("permissionDenied", 2): .permissionDenied(f[1])
        case ("serverError", 3): .serverError(status: f[1], message: f[2])
        case ("offline", 1): .offline
        case ("closed", 1): .closed
        case ("storage", 2): .storage(f[1])
        case ("alreadyInUse", 2): .alreadyInUse(f[1])
        case ("eventBufferFull", 2): Int(f[1]).map { DatabaseError.eventBufferFull(limit: $0) }
        default: nil
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
