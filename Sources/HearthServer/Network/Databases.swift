import Synchronization

/// The databases one server serves, one per namespace, as Firebase's emulator does: a
/// request's `ns` query parameter (on the WebSocket upgrade `/.ws?v=5&ns=NAME` and on every REST
/// request and event stream) picks the database, each with its own data, rules, sessions and
/// onDisconnect operations.
///
/// - A request without `ns`, or with the default database's own name (``defaultName``), reaches
///   the default database.
/// - Any other namespace reaches its own database, opened (created when missing) by the
///   factory the first time a request names it, and kept open until the server stops — at most
///   ``maxNamespaces`` of them besides the default one; a request naming one more is answered
///   503 (a WebSocket upgrade is refused the same way), so clients cannot grow the server's
///   open stores and threads without bound.
/// - A server made without a factory serves one database under every name
///   (``init(single:)``), as embedders of ``NetworkServer`` had before namespaces.
///
/// Names are 1…63 characters of lowercase ASCII letters, digits and `-` (Firebase's database
/// names); `hearth serve` keeps each one's store in `namespaces/NAME/` inside its data
/// directory. Anything else is refused (400) before a store is touched.
public final class Databases: Sendable {
    /// The database a request without `ns` reaches.
    public let primary: ServerRuntime
    /// The default database's name, if it has one: `ns` equal to it reaches ``primary``.
    public let defaultName: String?
    /// How many databases besides the default one may be open at once.
    public let maxNamespaces: Int
    let factory: (@Sendable (String) throws -> ServerRuntime)?
    let opened = Mutex<[String: ServerRuntime]>([:])
    /// Held while a database is being opened (one at a time).
    let opening = Mutex<Void>(())
    /// The host the hello names (`h`), once the port is known; given to databases opened later.
    let host = Mutex<String?>(nil)
    /// Namespaces served by other instances: their clients are sent there.
    public let redirects: Redirects

    /// The default number of namespaces besides the default database (``maxNamespaces``).
    public static let defaultMaxNamespaces = 100

    /// Databases by namespace.
    /// - Parameters:
    ///   - primary: the default database.
    ///   - defaultName: the default database's name, if `ns` may name it.
    ///   - maxNamespaces: how many other databases may be open at once.
    ///   - redirects: namespaces other instances serve (never opened here).
    ///   - factory: opens (or creates) the database of a namespace; called at most once per
    ///     name, under a lock, on the thread of the first request naming it.
    public init(
        primary: ServerRuntime, defaultName: String? = nil, maxNamespaces: Int = defaultMaxNamespaces,
        redirects: Redirects = Redirects(), factory: @escaping @Sendable (String) throws -> ServerRuntime
    ) {
        self.primary = primary
        self.redirects = redirects
        self.defaultName = defaultName
        self.maxNamespaces = max(0, maxNamespaces)
        self.factory = factory
    }

    /// One database for every namespace.
    public init(single runtime: ServerRuntime) {
        primary = runtime
        defaultName = nil
        maxNamespaces = 0
        redirects = Redirects()
        factory = nil
    }

    /// Why a request's namespace cannot be served.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a database name (400).
        case invalidName(String)
        /// The server has as many databases open as it may (503).
        case tooMany(Int)
        /// The database could not be opened (500).
        case unavailable(String)
        /// Another instance serves the namespace, at this host (421, Misdirected Request).
        case redirected(String)

        /// The HTTP status that answers it.
        public var status: Int {
            switch self {
            case .invalidName: 400
            case .tooMany: 503
            case .unavailable: 500
            case .redirected: 421
            }
        }

        public var description: String {
            switch self {
            case .invalidName(let name):
                "Invalid namespace \(Self.quoted(name)): 1 to 63 lowercase letters, digits and '-'"
            case .tooMany(let n): "This server serves at most \(n) namespaces besides its default database"
            case .unavailable(let why): "The namespace's database could not be opened: \(why)"
            case .redirected(let host): "This namespace is served at \(host)"
            }
        }

        static func quoted(_ name: String) -> String {
            "\"" + String(name.unicodeScalars.prefix(80).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
                + "\""
        }
    }

    /// Whether `name` is a namespace this server can hold (what Firebase allows in a database
    /// name; also a safe directory name on every file system, case-insensitive ones included).
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return (1...63).contains(bytes.count)
            && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// The database `namespace` names (`nil`: no `ns` parameter), opened if need be.
    public func runtime(for namespace: String?) -> Result<ServerRuntime, Refusal> {
        guard let namespace, namespace != defaultName else { return .success(primary) }
        guard Self.isValidName(namespace) else { return .failure(.invalidName(namespace)) }
        if let host = redirects.host(for: namespace) { return .failure(.redirected(host)) }
        guard let factory else { return .success(primary) }
        if let runtime = opened.withLock({ $0[namespace] }) { return .success(runtime) }
        // One database is opened at a time, outside `opened`'s lock: requests for databases
        // already open (and the ticker's `all`) never wait for a store being opened.
        return opening.withLock { _ -> Result<ServerRuntime, Refusal> in
            let (existing, count) = opened.withLock { ($0[namespace], $0.count) }
            if let existing { return .success(existing) }
            guard count < maxNamespaces else { return .failure(.tooMany(maxNamespaces)) }
            let runtime: ServerRuntime
            do { runtime = try factory(namespace) } catch { return .failure(.unavailable("\(error)")) }
            if let host = host.withLock({ $0 }) { runtime.setHost(host) }
            opened.withLock { $0[namespace] = runtime }
            return .success(runtime)
        }
    }

    /// Every open database, the default one first.
    public var all: [ServerRuntime] {
        [primary] + opened.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
    }

    /// Sets the host every database's hello names.
    func setHost(_ value: String) {
        host.withLock { $0 = value }
        for runtime in all { runtime.setHost(value) }
    }
}
