// Who hears of an outcome (a plain write's, a named transaction's) and what waits for them: the
// observers of one kind of outcome, and the outcomes kept in the store that wait for the first
// of them. ``OutcomeLedger`` holds one channel per kind.

import Dispatch
import Hearth
import HearthModel

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
