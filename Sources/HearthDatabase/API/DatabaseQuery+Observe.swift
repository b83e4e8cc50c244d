import Dispatch
import Hearth
import HearthModel
import Synchronization

/// What can be observed and read: a ``DatabaseQuery``, or a ``DatabaseReference`` (its
/// default query). The observing API is written once, here.
public protocol DatabaseQueryConvertible: Sendable {
    /// The query this value stands for.
    var databaseQuery: DatabaseQuery { get }
}

extension DatabaseQuery: DatabaseQueryConvertible {
    /// The query itself.
    public var databaseQuery: DatabaseQuery { self }
}

extension DatabaseReference: DatabaseQueryConvertible {
    /// The reference's default query (all its data, by priority).
    public var databaseQuery: DatabaseQuery { DatabaseQuery(ref: self, spec: .default) }
}

extension DatabaseQueryConvertible {
    /// Observes `eventType`: `block` runs for the current data (child events for every
    /// child in the window, then `value` once the data is known — from the cache when
    /// offline) and for every later change, local writes included, on `queue` (default: the
    /// database's callback queue). Returns the handle for ``removeObserver(withHandle:)``.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil,
        with block: @escaping @Sendable (DataSnapshot) -> Void
    ) -> DatabaseHandle {
        let q = databaseQuery
        return q.ref.database.observe(q, eventType, queue: queue, handler: { snap, _ in block(snap) }, cancel: nil)
    }

    /// ``observe(_:on:with:)`` with a cancel block: it runs (and the observer is removed) when
    /// the server revokes the listen (`permission_denied`), or at once for an invalid query.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil,
        with block: @escaping @Sendable (DataSnapshot) -> Void,
        withCancel cancelBlock: @escaping @Sendable (DatabaseError) -> Void
    ) -> DatabaseHandle {
        let q = databaseQuery
        return q.ref.database.observe(
            q, eventType, queue: queue, handler: { snap, _ in block(snap) }, cancel: cancelBlock)
    }

    /// ``observe(_:on:with:withCancel:)`` whose block also gets the key of the previous
    /// sibling in the query's order (`nil` for the first), for `childAdded`, `childChanged`
    /// and `childMoved`.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil,
        andPreviousSiblingKeyWith block: @escaping @Sendable (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: (@Sendable (DatabaseError) -> Void)? = nil
    ) -> DatabaseHandle {
        let q = databaseQuery
        return q.ref.database.observe(q, eventType, queue: queue, handler: block, cancel: cancelBlock)
    }

    /// Observes one event and then stops (Firebase's `observeSingleEvent`).
    public func observeSingleEvent(
        of eventType: DataEventType, on queue: DispatchQueue? = nil,
        with block: @escaping @Sendable (DataSnapshot) -> Void,
        withCancel cancelBlock: (@Sendable (DatabaseError) -> Void)? = nil
    ) {
        observeSingleEvent(
            of: eventType, on: queue, andPreviousSiblingKeyWith: { snap, _ in block(snap) }, withCancel: cancelBlock)
    }

    /// Observes one event, with the key of the child before it, and then stops (Firebase's
    /// `observeSingleEvent(of:andPreviousSiblingKeyWith:)`).
    public func observeSingleEvent(
        of eventType: DataEventType, on queue: DispatchQueue? = nil,
        andPreviousSiblingKeyWith block: @escaping @Sendable (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: (@Sendable (DatabaseError) -> Void)? = nil
    ) {
        let q = databaseQuery
        let database = q.ref.database
        let once = OnceBox()
        let handle = database.observe(
            q, eventType, queue: queue,
            handler: { snap, previous in
                guard once.fire() else { return }
                block(snap, previous)
                once.handle.map { database.removeObserver($0) }
            }, cancel: cancelBlock)
        if once.set(handle) { database.removeObserver(handle) }
    }

    /// The next `eventType` event and the key of the child before it (Firebase's `async`
    /// form). A cancelled listen (permission denied) throws its ``DatabaseError``.
    public func observeSingleEventAndPreviousSiblingKey(
        of eventType: DataEventType
    ) async throws(DatabaseError) -> (DataSnapshot, String?) {
        let result: Result<(DataSnapshot, String?), DatabaseError> = await withCheckedContinuation { continuation in
            let resumed = OnceBox()
            observeSingleEvent(
                of: eventType,
                andPreviousSiblingKeyWith: { snap, previous in
                    if resumed.fire() { continuation.resume(returning: .success((snap, previous))) }
                },
                withCancel: { error in if resumed.fire() { continuation.resume(returning: .failure(error)) } })
        }
        return try result.get()
    }

    /// Removes one observer.
    public func removeObserver(withHandle handle: DatabaseHandle) {
        databaseQuery.ref.database.removeObserver(handle)
    }

    /// Removes every observer of this location (on a reference: of every query at its path;
    /// on a query: of that query).
    public func removeAllObservers() {
        let q = databaseQuery
        q.ref.database.removeAllObservers(at: q.ref.path, query: self is DatabaseReference ? nil : q.spec)
    }

    /// Keeps this query's data synchronized and cached while the app runs and after it
    /// restarts, with or without observers (Firebase's `keepSynced`, persisted).
    ///
    /// As Firebase's, the call does not throw. What Firebase refuses with an exception (an
    /// invalid query, a location under `.info`), and a failure of the store, changes nothing
    /// and is reported through ``Database/Options/logHandler``.
    public func keepSynced(_ keepSynced: Bool) {
        do throws(DatabaseError) { try keepSyncedReportingErrors(keepSynced) } catch {
            let ref = databaseQuery.ref
            Database.logger(ref.database.options)("keepSynced(\(keepSynced)) at \(ref) did nothing: \(error)")
        }
    }

    /// ``keepSynced(_:)`` that throws what it would log, for callers that report it (the
    /// `hearth` tool).
    package func keepSyncedReportingErrors(_ keepSynced: Bool) throws(DatabaseError) {
        try databaseQuery.ref.database.keepSynced(databaseQuery, keepSynced)
    }

    /// The data, from the server when connected (and cached), else the complete cached
    /// data, else ``DatabaseError/offline``.
    public func getData() async throws(DatabaseError) -> DataSnapshot {
        try await databaseQuery.ref.database.getData(databaseQuery)
    }

    /// ``getData()`` with a completion handler, run on the database's callback queue.
    public func getData(completion: @escaping @Sendable (DatabaseError?, DataSnapshot?) -> Void) {
        let q = databaseQuery
        let callbacks = q.ref.database.callbacks
        Task {
            do throws(DatabaseError) {
                let snap = try await q.ref.database.getData(q)
                callbacks.async { completion(nil, snap) }
            } catch {
                callbacks.async { completion(error, nil) }
            }
        }
    }
}

/// Makes a single-event observer fire once, whichever comes first: the event or the handle.
final class OnceBox: Sendable {
    private let state = Mutex<(fired: Bool, handle: DatabaseHandle?)>((false, nil))
    /// True the first time only.
    func fire() -> Bool {
        state.withLock { s in
            defer { s.fired = true }; return !s.fired
        }
    }
    /// Records the handle; true when the event already fired (remove now).
    func set(_ h: DatabaseHandle) -> Bool {
        state.withLock { s in
            s.handle = h; return s.fired
        }
    }
    var handle: DatabaseHandle? { state.withLock { $0.handle } }
}
