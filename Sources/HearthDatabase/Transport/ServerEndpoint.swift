/// Where a database lives: parsed from a URL such as `ws://127.0.0.1:9000?ns=demo`,
/// `wss://example.firebaseio.com`, or `https://example.firebaseio.com`.
public struct ServerEndpoint: Sendable, Hashable {
    /// TLS (`wss://`, `https://`).
    public var secure: Bool
    /// Host name or address (lowercased; an IPv6 address without its brackets).
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

    /// Parses a database URL, as Firebase's `parseRepoInfo` does, but refusing what it would
    /// only warn about or misread.
    ///
    /// - `ws://` and `http://` connect in the clear, `wss://` and `https://` over TLS; the
    ///   default port is 80 or 443. (Firebase's JS SDK treats `http://` without a port as
    ///   secure; here `http://` always means `ws://`.)
    /// - The namespace is the `ns` query parameter when present, else the first label of a host
    ///   name with at least three labels (`example` for `example.firebaseio.com`, lowercased).
    ///   `localhost`, IP addresses and shorter names need `?ns=`. (Firebase's JS SDK would take
    ///   `127` as the namespace of `127.0.0.1`.)
    /// - A path must be empty or `/`: a database URL points to the root. Other query parameters
    ///   are ignored, as Firebase does.
    /// - An IPv6 address goes in brackets: `ws://[::1]:9000?ns=demo`.
    ///
    /// - Throws: ``EndpointError`` naming what is wrong.
    public init(url: String) throws(EndpointError) {
        self = try EndpointParser.parse(url)
    }

    /// This database served by an emulator at `hostAndPort` (`HOST:PORT`, an IPv6 address in
    /// brackets): in the clear, the same namespace — what Firebase's SDKs connect to after
    /// `useEmulator` or with `FIREBASE_DATABASE_EMULATOR_HOST` set (`http://HOST:PORT?ns=NAMESPACE`).
    ///
    /// - Throws: ``EndpointError`` for a host or port that is not valid.
    func emulated(by hostAndPort: String) throws(EndpointError) -> ServerEndpoint {
        let (host, port) = try EndpointParser.parseHostAndPort(hostAndPort)
        return ServerEndpoint(secure: false, host: host, port: port, namespace: namespace)
    }

    /// The request target of the WebSocket handshake: `/.ws?v=5`, then `&ls=SESSION` when a
    /// previous session is resumed, then `&ns=NAMESPACE` (the parameters and their order of
    /// firebase-js-sdk `WebSocketConnection.connectionURL_` and `repoInfoConnectionURL`, which
    /// appends `ns` last). Values are percent-encoded.
    public func webSocketPath(lastSessionID: String?) -> String {
        var path = "/.ws?v=5"
        if let lastSessionID { path += "&ls=" + PercentEncoding.encode(lastSessionID) }
        path += "&ns=" + PercentEncoding.encode(namespace)
        return path
    }

    /// The URL of the WebSocket handshake: `ws://` or `wss://` (for `http://` and `https://`
    /// database URLs too), ``hostHeader``, then ``webSocketPath(lastSessionID:)``. What a
    /// transport that takes a whole URL (`URLSessionWebSocketTask`) is given; the SwiftNIO one
    /// sends the same host and path.
    func webSocketURL(lastSessionID: String?) -> String {
        (secure ? "wss://" : "ws://") + hostHeader + webSocketPath(lastSessionID: lastSessionID)
    }

    /// This endpoint moved to `host` (`HOST[:PORT]`, as a server names it in a reset or a
    /// hello; an IPv6 address in brackets): the same scheme and namespace, the port the
    /// scheme's default when none is given. `nil` when `host` is not of that form.
    func redirected(to host: String) -> ServerEndpoint? {
        guard let (name, portText) = try? EndpointParser.splitAuthority(Substring(host)),
            let port = try? EndpointParser.parsePort(portText, secure: secure)
        else { return nil }
        return ServerEndpoint(secure: secure, host: name, port: port, namespace: namespace)
    }

    /// Whether `host` is a `HOST[:PORT]` a client may be redirected to (``redirected(to:)``).
    static func isValidHost(_ host: String) -> Bool {
        host.utf8.count <= 300
            && ServerEndpoint(secure: false, host: "", port: 80, namespace: "").redirected(to: host) != nil
    }

    /// The `Host` header's value: the host (an IPv6 address in brackets), with the port unless
    /// it is the scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}
