@_spi(HearthInternals) import HearthWire

/// Namespaces a front instance does not serve itself but sends elsewhere, as Firebase's front
/// ends do: a WebSocket client that names one (`/.ws?v=5&ns=NAME`) gets a reset,
/// `{"t":"c","d":{"t":"r","d":"HOST:PORT"}}`, in place of the hello, and the connection closes;
/// the client connects to that host (and Firebase's clients, and Hearth's, keep it for their
/// next start). A REST request naming one is answered 421 (Misdirected Request) with the host
/// to use — Firebase's REST API has no redirect to copy.
///
/// `hearth serve --redirect NAME=HOST:PORT` fills it; the instances that own the namespaces are
/// ordinary `hearth serve` processes.
public struct Redirects: Sendable, Equatable {
    /// The host each redirected namespace is served at, by namespace.
    public private(set) var hosts: [String: String] = [:]

    /// No namespace redirected.
    public init() {}

    /// Why a redirect cannot be taken.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not `NAME=HOST[:PORT]`.
        case malformed(String)
        /// The name is not a database name.
        case invalidName(String)
        /// The host is not a host name or address with an optional port.
        case invalidHost(String)
        /// The namespace is redirected twice.
        case duplicate(String)

        public var description: String {
            switch self {
            case .malformed(let text): "\(text) is not NAMESPACE=HOST[:PORT]"
            case .invalidName(let name): "\(name) is not a namespace (1 to 63 lowercase letters, digits and '-')"
            case .invalidHost(let host): "\(host) is not a host name or address with an optional port"
            case .duplicate(let name): "the namespace \(name) is redirected twice"
            }
        }
    }

    /// Redirects from `NAME=HOST[:PORT]` arguments.
    /// - Throws: ``Refusal`` naming the first argument refused.
    public init(arguments: [String]) throws(Refusal) {
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "=") else { throw .malformed(argument) }
            let name = String(argument[..<equals])
            let host = String(argument[argument.index(after: equals)...])
            try add(name, to: host)
        }
    }

    /// Sends `namespace` to `host`.
    /// - Throws: ``Refusal``.
    public mutating func add(_ namespace: String, to host: String) throws(Refusal) {
        let bytes = Array(namespace.utf8)
        let isName =
            (1...63).contains(bytes.count)
            && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
        guard isName else { throw .invalidName(namespace) }
        guard !host.isEmpty, ServerCore.reconnectHost(host) != nil else { throw .invalidHost(host) }
        guard hosts[namespace] == nil else { throw .duplicate(namespace) }
        hosts[namespace] = host
    }

    /// Whether no namespace is redirected.
    public var isEmpty: Bool { hosts.isEmpty }

    /// Where a request naming `namespace` (`nil`: no `ns`) must go, if not here.
    public func host(for namespace: String?) -> String? {
        namespace.flatMap { hosts[$0] }
    }

    /// The message a WebSocket client naming `namespace` gets instead of the hello, if it is
    /// redirected.
    package func reset(for namespace: String?) -> ServerMessage? {
        host(for: namespace).map { ServerMessage.reset(host: $0) }
    }
}
