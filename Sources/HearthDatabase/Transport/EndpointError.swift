/// Why a database URL was refused by ``ServerEndpoint/init(url:)``.
public enum EndpointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The scheme is not `ws`, `wss`, `http` or `https` (empty when the URL has none).
    case unsupportedScheme(String)
    /// The host is empty or holds characters a host name cannot (user info, spaces, …).
    case invalidHost(String)
    /// The port is not a number from 1 to 65535.
    case invalidPort(String)
    /// The URL names a child path; a database URL points to the root (Firebase refuses these
    /// too: "Database URL must point to the root of a Firebase Database").
    case pathNotRoot(String)
    /// No `?ns=` and the host cannot name the namespace: `localhost`, an IP address, or a
    /// name of fewer than three labels.
    case missingNamespace(host: String)
    /// The namespace is empty, holds `.` `#` `$` `[` `]` `/` or control characters (Firebase's
    /// key rules), or is not valid percent-encoding.
    case invalidNamespace(String)

    /// What is wrong, for people.
    public var description: String {
        switch self {
        case .unsupportedScheme(let s):
            s.isEmpty
                ? "the URL has no scheme (use ws://, wss://, http:// or https://)"
                : "unsupported scheme \(s) (use ws://, wss://, http:// or https://)"
        case .invalidHost(let h): "invalid host \"\(h)\""
        case .invalidPort(let p): "invalid port \"\(p)\""
        case .pathNotRoot(let p): "the URL must point to the root of the database, not \(p)"
        case .missingNamespace(let h): "\(h) does not name a namespace: add ?ns=NAME"
        case .invalidNamespace(let n): "invalid namespace \"\(n)\""
        }
    }
}
