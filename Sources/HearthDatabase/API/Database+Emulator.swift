import Foundation

extension Database {
    /// Connects this database to an emulator (or a local `hearth serve --emulator`) at `host`
    /// and `port` instead of the URL's host: in the clear, the URL's namespace kept —
    /// Firebase's `useEmulator(withHost:port:)`.
    ///
    /// Call it before the database's first use, as Firebase requires: the first
    /// ``reference()``, ``goOnline()``, ``goOffline()``, ``updateAuthToken(_:)``,
    /// ``registerTransactionFunction(_:_:)`` or `observe…` call. Reading a property is not a use.
    /// Calling it later, or with a host that is not a host, is a programming error: like
    /// Firebase's SDKs, which raise an exception, it stops the program, with the message
    /// ``useEmulator(host:port:)`` would throw. Use that form to handle the error instead.
    /// Calling it again with the emulator already in use changes nothing.
    public func useEmulator(withHost host: String, port: Int) {
        do { try useEmulator(host: host, port: port) } catch { preconditionFailure(error.description) }
    }

    /// ``useEmulator(withHost:port:)`` reporting misuse as an error.
    ///
    /// - Throws: ``DatabaseError/alreadyInUse(_:)`` once the database has been used with another
    ///   endpoint; ``DatabaseError/invalidValue(_:)`` for a host or port that is not valid.
    public func useEmulator(host: String, port: Int) throws(DatabaseError) {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let hostAndPort = "\(bracketed):\(port)"
        try state.withLock { (s: inout RuntimeState) throws(DatabaseError) in
            let emulated: ServerEndpoint
            do { emulated = try s.endpoint.emulated(by: hostAndPort) } catch { throw .invalidValue("\(error)") }
            guard emulated != s.endpoint else { return }
            guard !s.started else {
                throw .alreadyInUse(
                    "call useEmulator(withHost:port:) before creating a database reference or going online")
            }
            s.endpoint = emulated
            // The emulator's redirects are its own: not the URL's host's, kept under its key.
            // A redirect an earlier run kept for it is not read here (that is I/O on the
            // caller's thread); it costs the first connection one redirect.
            s.hostCache = s.hostCache.map { HostCache(fs: $0.fs, directory: $0.directory, endpoint: emulated) }
            s.core.reconfigure(host: emulated.hostHeader)
        }
    }

    /// `endpoint` served by the emulator at `hostAndPort`, or `endpoint` itself for `nil`.
    static func emulated(_ endpoint: ServerEndpoint, by hostAndPort: String?) throws(EndpointError) -> ServerEndpoint {
        guard let hostAndPort else { return endpoint }
        return try endpoint.emulated(by: hostAndPort)
    }

    /// The emulator a new database connects to: the option when set, else
    /// `FIREBASE_DATABASE_EMULATOR_HOST` from `environment` (Firebase's SDKs read it to point
    /// every database at an emulator); `nil` when neither is set or the variable is empty.
    static func emulatorHost(option: String?, environment: [String: String]) -> String? {
        if let option { return option }
        guard let value = environment["FIREBASE_DATABASE_EMULATOR_HOST"], !value.isEmpty else { return nil }
        return value
    }

    /// Marks the database as used and, the first time, connects unless
    /// ``Options/connectAtOpen`` is false. Asynchronous on ``work`` — callable from any
    /// thread, including a handler — and ordered before whatever the caller does next there.
    func startIfNeeded() {
        let connect: Bool = state.withLock { s in
            guard !s.started else { return false }
            s.started = true
            return options.connectAtOpen && !s.closed
        }
        guard connect else { return }
        work.async { self.step { (core, now) in core.goOnline(now: now) } }
    }
}
