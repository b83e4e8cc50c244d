import Dispatch
import Hearth

extension Database {
    /// Gives the database a new token (`nil`: sign out) without waiting for the next
    /// connection: it is kept in the store, sent at once when connected, and writes held while
    /// the old one was expired go out, in order. It is newer than any answer still due from
    /// the ``Options/tokenProvider``: such an answer is dropped. Apps with a provider rarely
    /// need this: the provider is asked before every connection and when a token expires.
    public func updateAuthToken(_ token: String?) {
        startIfNeeded()
        let auth = token.map { AuthToken(token: $0, expiresAt: Database.expiry(ofJWT: $0) ?? Int64.max) }
        work.sync { step { (core, now) in core.authTokenUpdated(auth, now: now) } }
    }

    /// Gives the database a new App Check token (`nil`: none) — what an App Check token
    /// listener calls when the token changes: it is sent at once when connected (`appcheck`,
    /// or `unappcheck` for none) and used for the connections that follow. It is newer than
    /// any answer still due from the ``Options/appCheckTokenProvider``.
    public func updateAppCheckToken(_ token: String?) {
        startIfNeeded()
        work.sync { step { (core, now) in core.appCheckTokenUpdated(token.map(Database.appCheckToken), now: now) } }
    }

    /// Whether writes are held because the auth token expired (until a new token arrives).
    public var writesPaused: Bool { pauseSignal.withLock { $0.paused } }

    /// Observes ``writesPaused``: `handler` runs with the current value at once, then on
    /// every change.
    @discardableResult
    public func observeWritesPaused(
        on queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (Bool) -> Void
    ) -> DatabaseHandle {
        startIfNeeded()
        let q = queue ?? callbacks
        let handle = state.withLock { $0.newHandle() }
        let now = pauseSignal.withLock { $0.add((q, handler), as: handle) }
        q.async { handler(now) }
        return handle
    }

    /// Stops a ``observeWritesPaused(on:_:)`` observer.
    public func removeWritesPausedObserver(withHandle handle: DatabaseHandle) {
        pauseSignal.withLock { $0.remove(handle) }
    }
}

/// Whether writes are held for an expired token, and the observers of it.
///
/// Invariant: the value and the observers change under one lock, so an observer hears the value
/// current when it registered and then every change after, none twice.
struct WritesPausedSignal: Sendable {
    typealias Observer = (queue: DispatchQueue, handler: @Sendable (Bool) -> Void)

    private(set) var paused = false
    private var observers: [DatabaseHandle: Observer] = [:]

    /// Registers `observer` as `handle`; returns the value it hears first.
    mutating func add(_ observer: Observer, as handle: DatabaseHandle) -> Bool {
        precondition(observers[handle] == nil, "a handle names one observer")
        observers[handle] = observer
        return paused
    }

    mutating func remove(_ handle: DatabaseHandle) {
        observers.removeValue(forKey: handle)
    }

    /// The value is now `paused`; returns the observers to tell.
    mutating func set(_ paused: Bool) -> [Observer] {
        self.paused = paused
        return Array(observers.values)
    }
}
