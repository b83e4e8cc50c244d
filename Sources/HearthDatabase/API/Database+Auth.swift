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
    public var writesPaused: Bool { state.withLock { $0.writesPaused } }

    /// Observes ``writesPaused``: `handler` runs with the current value at once, then on
    /// every change.
    @discardableResult
    public func observeWritesPaused(
        on queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (Bool) -> Void
    ) -> DatabaseHandle {
        startIfNeeded()
        let q = queue ?? callbacks
        let (handle, now) = state.withLock { s in
            let h = s.newHandle()
            s.writesPausedObservers[h] = (q, handler)
            return (h, s.writesPaused)
        }
        q.async { handler(now) }
        return handle
    }

    /// Stops a ``observeWritesPaused(on:_:)`` observer.
    public func removeWritesPausedObserver(withHandle handle: DatabaseHandle) {
        _ = state.withLock { $0.writesPausedObservers.removeValue(forKey: handle) }
    }
}
