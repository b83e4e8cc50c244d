import Dispatch
import Observation
import Synchronization

/// A query's data as an `@Observable` value for SwiftUI (and anything that tracks
/// Observation): ``snapshot`` is the data after every change, ``isLoading`` is true until it
/// is first known, ``error`` says why the listen ended. Made by
/// ``DatabaseQueryConvertible/live()``.
///
/// It listens while it exists: releasing it, or ``cancel()``, removes its observer. Its
/// properties change on the main actor, where a view reads them; the main queue must be
/// serviced (as an app's is).
@MainActor @Observable
public final class LiveSnapshot {
    /// The query's data: `nil` until it is first known (from the cache when offline), then the
    /// data after every change, local writes included.
    public private(set) var snapshot: DataSnapshot?
    /// Why the listen ended (the server revoked it with `permission_denied`, the query is
    /// invalid, the database closed); `nil` while it listens.
    public private(set) var error: DatabaseError?
    /// True until the data is first known or the listen fails.
    public var isLoading: Bool { snapshot == nil && error == nil }

    /// The observer, removed when this value goes.
    @ObservationIgnored private let registration: LiveRegistration

    init(_ query: DatabaseQuery) {
        registration = LiveRegistration(database: query.ref.database)
        let handle = query.ref.database.observe(
            query, .value, queue: .main,
            handler: { [weak self] snapshot, _ in
                MainActor.assumeIsolated { self?.snapshot = snapshot }
            },
            cancel: { [weak self] error in
                MainActor.assumeIsolated { self?.error = error }
            })
        registration.set(handle)
    }

    /// Stops listening: ``snapshot`` keeps the last data.
    public func cancel() { registration.remove() }
}

/// A live snapshot's observer: removed once, by ``LiveSnapshot/cancel()`` or when the snapshot
/// is released (this object's deinit, which needs no actor).
final class LiveRegistration: Sendable {
    let database: Database
    private let handle = Mutex<DatabaseHandle?>(nil)

    init(database: Database) { self.database = database }

    func set(_ h: DatabaseHandle) { handle.withLock { $0 = h } }

    func remove() {
        if let h = handle.withLock({ h in
            defer { h = nil }; return h
        }) {
            database.removeObserver(h)
        }
    }

    deinit { remove() }
}

extension DatabaseQueryConvertible {
    /// The query's data as an `@Observable` ``LiveSnapshot``, listening until it is released
    /// or cancelled — for a SwiftUI view to read (or the `LiveQuery` property wrapper, where
    /// SwiftUI is).
    @MainActor public func live() -> LiveSnapshot { LiveSnapshot(databaseQuery) }
}
