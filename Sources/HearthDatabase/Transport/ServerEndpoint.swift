/// Where a database lives: parsed from a URL such as `ws://127.0.0.1:9000?ns=demo`,
/// `wss://example.firebaseio.com`, or `https://example.firebaseio.com`.
///
/// (Skeleton: the transport helper fills in parsing and the WebSocket URL.)
public struct ServerEndpoint: Sendable, Hashable {
    /// TLS (`wss://`, `https://`).
    public var secure: Bool
    /// Host name or address.
    public var host: String
    /// Port (443/80 by default).
    public var port: Int
    /// The database namespace (`ns`), from `?ns=` or the host's first label.
    public var namespace: String

    /// An endpoint from its parts.
    public init(secure: Bool, host: String, port: Int, namespace: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.namespace = namespace
    }
}
