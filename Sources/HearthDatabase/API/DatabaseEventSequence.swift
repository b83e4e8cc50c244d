import Dispatch
import Synchronization

/// One event as the asynchronous sequences yield it: its type, the snapshot (the whole value
/// for ``DataEventType/value``, the child for a child event), and the key of the sibling
/// before the child in the query's order (`nil` for the first child, and for `value` and
/// `childRemoved`).
public typealias DataEvent = (event: DataEventType, snapshot: DataSnapshot, previousKey: String?)

/// An observer's events as an asynchronous sequence with a typed error
/// (``DatabaseQueryConvertible/values()``, ``DatabaseQueryConvertible/events(_:bufferingLimit:)``,
/// ``DatabaseQueryConvertible/childEvents(bufferingLimit:)``).
///
/// The observer is registered when the sequence is made and removed when the iteration ends:
/// when the iterating task is cancelled, when the sequence (and its iterator) is released, or
/// when the listen fails — then the sequence throws the ``DatabaseError`` (the server revoked
/// the listen with `permission_denied`, the query is invalid, the database closed) and ends.
/// Events reach it on a queue of its own, not the database's callback queue, so iterating it
/// needs no main queue. Iterate it once.
///
/// Buffering is bounded. A sequence of values keeps only the newest value its consumer has
/// not taken (each value is the whole data, so a slow consumer skips to the latest). A
/// sequence of events keeps up to its `bufferingLimit` and then ends by throwing
/// ``DatabaseError/eventBufferFull(limit:)`` rather than drop an event silently.
public struct DatabaseEventSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// What iterating it throws.
    public typealias Failure = DatabaseError

    let stream: AsyncStream<Result<Element, DatabaseError>>
    /// The events yielded and not yet taken, for a bounded sequence of events.
    let credit: EventCredit?
    /// Where its observer's events arrive (tests drain it).
    let queue: DispatchQueue

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// What ``next()`` throws.
        public typealias Failure = DatabaseError

        var inner: AsyncStream<Result<Element, DatabaseError>>.Iterator
        let credit: EventCredit?

        /// The next event, or `nil` once the sequence ended (its task cancelled, or after the
        /// error it threw).
        /// - Throws: the ``DatabaseError`` that ended the listen.
        public mutating func next() async throws(DatabaseError) -> Element? {
            try take(await inner.next())
        }

        /// ``next()`` on the caller's actor.
        /// - Throws: the ``DatabaseError`` that ended the listen.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(DatabaseError) -> Element? {
            try take(await inner.next(isolation: actor))
        }

        private func take(_ result: Result<Element, DatabaseError>?) throws(DatabaseError) -> Element? {
            guard let result else { return nil }
            if case .success = result { credit?.taken() }
            return try result.get()
        }
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(inner: stream.makeAsyncIterator(), credit: credit)
    }
}

/// Counts the events a bounded sequence holds for its consumer.
final class EventCredit: Sendable {
    let limit: Int
    private let outstanding = Mutex(0)

    /// A limit below 1 counts as 1: a sequence holds at least the event it yields.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// One more event to hold: false when `limit` are held already.
    func yielding() -> Bool {
        outstanding.withLock { n in
            guard n < limit else { return false }
            n += 1
            return true
        }
    }

    /// The consumer took one.
    func taken() {
        outstanding.withLock { n in
            assert(n > 0, "an event was taken that was never counted")
            n -= 1
        }
    }
}

extension DatabaseQueryConvertible {
    /// The query's data as an asynchronous sequence of snapshots: the current data once it is
    /// known (from the cache when offline), then the data after every change, local writes
    /// included — the `value` events of ``observe(_:on:with:)``. A consumer slower than the
    /// changes gets the newest data and skips the ones in between. Cancelling the iterating
    /// task ends the listen; a revoked listen throws its ``DatabaseError``.
    public func values() -> DatabaseEventSequence<DataSnapshot> {
        eventSequence([.value], credit: nil, policy: .bufferingNewest(1)) { $0.snapshot }
    }

    /// The events of `eventType` as an asynchronous sequence, each with its type, snapshot and
    /// previous sibling key. Holds up to `bufferingLimit` events its consumer has not taken
    /// (at least one), then throws ``DatabaseError/eventBufferFull(limit:)``. Cancelling the iterating task
    /// ends the listen; a revoked listen throws its ``DatabaseError``.
    public func events(_ eventType: DataEventType, bufferingLimit: Int = 4096) -> DatabaseEventSequence<DataEvent> {
        eventSequence([eventType], credit: EventCredit(limit: bufferingLimit), policy: .unbounded) { $0 }
    }

    /// The child events — `childRemoved`, `childAdded`, `childMoved`, `childChanged` — as one
    /// asynchronous sequence, in Firebase's order within each change, from one observer.
    /// Buffering, cancellation and errors as for ``events(_:bufferingLimit:)``.
    public func childEvents(bufferingLimit: Int = 4096) -> DatabaseEventSequence<DataEvent> {
        eventSequence(
            [.childRemoved, .childAdded, .childMoved, .childChanged], credit: EventCredit(limit: bufferingLimit),
            policy: .unbounded
        ) { $0 }
    }

    /// Registers one observer for `kinds` whose events feed a stream. With `credit`, the stream
    /// is bounded by counting (it is made unbounded, and never holds more than the credit's
    /// limit, plus the error that ends it).
    func eventSequence<Element: Sendable>(
        _ kinds: [DataEventType], credit: EventCredit?,
        policy: AsyncStream<Result<Element, DatabaseError>>.Continuation.BufferingPolicy,
        _ transform: @escaping @Sendable (DataEvent) -> Element
    ) -> DatabaseEventSequence<Element> {
        let q = databaseQuery
        let database = q.ref.database
        let (stream, continuation) = AsyncStream<Result<Element, DatabaseError>>.makeStream(bufferingPolicy: policy)
        let queue = DispatchQueue(label: "hearth.database.events")
        let handles = database.observe(
            q, kinds, queue: queue,
            handler: { type, snapshot, previous in
                if let credit, !credit.yielding() {
                    continuation.yield(.failure(.eventBufferFull(limit: credit.limit)))
                    continuation.finish()
                    return
                }
                continuation.yield(.success(transform((type, snapshot, previous))))
            },
            cancel: { error in
                continuation.yield(.failure(error))
                continuation.finish()
            })
        continuation.onTermination = { _ in
            for handle in handles { database.removeObserver(handle) }
        }
        return DatabaseEventSequence(stream: stream, credit: credit, queue: queue)
    }
}
