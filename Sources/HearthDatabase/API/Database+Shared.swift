import Dispatch
import Foundation
import Synchronization

/// The instances ``Database/database(url:)`` shares, one per database (normalized URL), the
/// options each opens with, and the default URL.
struct SharedDatabases: Sendable {
    var defaultURL: String?
    var options: [ServerEndpoint: Database.Options] = [:]
    var instances: [ServerEndpoint: Database] = [:]

    static let registry = Mutex(SharedDatabases())

    /// The environment variable read when no default URL was set.
    static let urlVariable = "FIREBASE_DATABASE_URL"

    /// The database a URL names: its endpoint, with the host's case folded (`Demo.example.com`
    /// and `demo.example.com` are one database), a default port made explicit, and `http(s)`
    /// and `ws(s)` alike.
    static func key(_ url: String) throws(DatabaseError) -> ServerEndpoint {
        var endpoint: ServerEndpoint
        do { endpoint = try ServerEndpoint(url: url) } catch { throw .invalidValue("\(error)") }
        endpoint.host = endpoint.host.lowercased()
        return endpoint
    }

    /// The URL `database()` opens: the one set, else the environment's.
    func resolvedDefaultURL(environment: [String: String]) -> String? {
        if let defaultURL { return defaultURL }
        guard let value = environment[Self.urlVariable], !value.isEmpty else { return nil }
        return value
    }
}

extension Database {
    /// Sets the URL ``database()`` opens — what Firebase reads from the app's
    /// `FirebaseOptions.databaseURL`. `nil` clears it; then ``database()`` reads the environment
    /// variable `FIREBASE_DATABASE_URL`.
    public static func setDefaultURL(_ url: String?) {
        SharedDatabases.registry.withLock { $0.defaultURL = url }
    }

    /// Sets the options the shared instance for `url` (`nil`: the default URL) opens with —
    /// Firebase's `isPersistenceEnabled` (``Options/storeDirectory``), `persistenceCacheSizeBytes`
    /// (``Options/cacheSizeBytes``) and `callbackQueue` (``Options/callbackQueue``) — before the
    /// instance exists. Without a call, a shared instance opens with `Options()`: memory only,
    /// as Firebase's default (persistence disabled).
    ///
    /// Firebase's settings are properties set on the instance before its first use, and raise
    /// an exception afterwards. A Hearth database opens its store when it is created, so its
    /// settings come first, here, and the instance's properties (``isPersistenceEnabled``,
    /// ``persistenceCacheSizeBytes``, ``callbackQueue``) are read-only: changing one later is a
    /// compile-time error instead of a runtime one.
    ///
    /// - Throws: ``DatabaseError/alreadyInUse(_:)`` once the shared instance for the URL
    ///   exists; ``DatabaseError/invalidValue(_:)`` for a URL that is not a database's, or no
    ///   URL at all.
    public static func setOptions(_ options: Options, forURL url: String? = nil) throws(DatabaseError) {
        let key = try SharedDatabases.key(try sharedURL(url))
        try SharedDatabases.registry.withLock { (r: inout SharedDatabases) throws(DatabaseError) in
            guard r.instances[key] == nil else {
                throw .alreadyInUse(
                    "set the options of a shared database before the first Database.database(url:) call")
            }
            r.options[key] = options
        }
    }

    /// The shared instance for the default URL (``setDefaultURL(_:)``, else the environment
    /// variable `FIREBASE_DATABASE_URL`) — Firebase's `Database.database()`.
    ///
    /// Without a default URL, or when the database cannot be opened, it stops the program, as
    /// Firebase's raises an exception when no app is configured; ``shared(url:)`` reports the
    /// error instead.
    public static func database() -> Database {
        do { return try shared() } catch { preconditionFailure(error.description) }
    }

    /// The shared instance for `url` — Firebase's `Database.database(url:)`: one per database,
    /// the same instance for every URL that names it (the host's case aside). It opens with the
    /// options set by ``setOptions(_:forURL:)``.
    ///
    /// A URL that is not a database's (Firebase's `FValidation` raises for it), or a store that
    /// cannot be opened, stops the program; ``shared(url:)`` reports the error instead.
    public static func database(url: String) -> Database {
        do { return try shared(url: url) } catch { preconditionFailure(error.description) }
    }

    /// ``database(url:)`` (``database()`` for `nil`) reporting failures as errors.
    ///
    /// - Throws: ``DatabaseError/invalidValue(_:)`` for no URL or an invalid one;
    ///   ``DatabaseError/storage(_:)`` when the store cannot be opened.
    public static func shared(url: String? = nil) throws(DatabaseError) -> Database {
        let url = try sharedURL(url)
        let key = try SharedDatabases.key(url)
        return try SharedDatabases.registry.withLock { (r: inout SharedDatabases) throws(DatabaseError) in
            // A closed instance is replaced: the next call opens the database again.
            if let existing = r.instances[key], !existing.state.withLock({ $0.closed }) { return existing }
            let database = try Database(url: url, options: r.options[key] ?? Options())
            r.instances[key] = database
            return database
        }
    }

    /// `url`, or the default URL.
    private static func sharedURL(_ url: String?) throws(DatabaseError) -> String {
        if let url { return url }
        let resolved = SharedDatabases.registry.withLock {
            $0.resolvedDefaultURL(environment: ProcessInfo.processInfo.environment)
        }
        guard let resolved else {
            throw .invalidValue(
                "no default database URL: call Database.setDefaultURL(_:) or set \(SharedDatabases.urlVariable)"
                    + " before Database.database()")
        }
        return resolved
    }

    /// Whether the store is kept on disk (a ``Options/storeDirectory`` was given) — Firebase's
    /// `isPersistenceEnabled`. Set it with the options (``setOptions(_:forURL:)``).
    public var isPersistenceEnabled: Bool { options.storeDirectory != nil }

    /// The cap on the store's size — Firebase's `persistenceCacheSizeBytes`
    /// (``Options/cacheSizeBytes``).
    public var persistenceCacheSizeBytes: UInt { UInt(options.cacheSizeBytes) }

    /// Where handlers run when a call names no queue — Firebase's `callbackQueue`: the main
    /// queue unless ``Options/callbackQueue`` names another.
    public var callbackQueue: DispatchQueue { callbacks }
}

extension DatabaseReference {
    /// Disconnects every shared database (``Database/database(url:)``) and keeps it offline until
    /// ``goOnline()`` — Firebase's class method `DatabaseReference.goOffline()`, which does so for
    /// every database of the app. A database the app created itself (`Database(url:options:)`)
    /// is the app's to take offline: ``Database/goOffline()``.
    public static func goOffline() {
        for database in SharedDatabases.open() { database.goOffline() }
    }

    /// Reconnects every shared database that ``goOffline()`` (or ``Database/goOffline()``)
    /// disconnected — Firebase's class method `DatabaseReference.goOnline()`.
    public static func goOnline() {
        for database in SharedDatabases.open() { database.goOnline() }
    }
}

extension SharedDatabases {
    /// The shared instances not closed, taken under the registry's lock and used after it: a
    /// database's calls take its own locks and must not nest inside this one.
    static func open() -> [Database] {
        registry.withLock { r in r.instances.values.filter { !$0.state.withLock { $0.closed } } }
    }
}
