/// What a connection reports, in order, one at a time.
public enum TransportEvent: Sendable, Equatable {
    /// The WebSocket handshake finished; messages may be sent.
    case opened
    /// One whole protocol message (frames already reassembled), as JSON text.
    case message(String)
    /// The connection is gone (never opened, closed by either side, or failed); nothing more
    /// follows. `reason` is for logs.
    case closed(reason: String)
}

/// One connection to a server.
public protocol TransportConnection: Sendable {
    /// Sends one protocol message (split into frames as protocol v5 requires). Ignored once
    /// the connection is closed.
    func send(_ message: String)
    /// Closes the connection; a `.closed` event follows unless one already did.
    func close()
    /// Stops (false) or resumes (true) reading from the network: the database stops a
    /// connection whose messages arrive faster than it applies them (``Database/Options/maxInboxBytes``),
    /// so what the server sends meanwhile waits in the network, not in memory. Messages already
    /// read when reading stops are still delivered; none may be dropped. A transport that pulls
    /// messages one at a time stops pulling.
    func setReading(_ reading: Bool)
}

/// Opens connections. The seam between the database runtime and the network: the real ones are
/// ``WebSocketTransport`` (SwiftNIO, on Linux) and `URLSessionTransport` (Apple platforms);
/// tests may supply their own.
public protocol Transport: Sendable {
    /// Starts connecting to `endpoint`. `events` receives `.opened`, then messages, then exactly
    /// one `.closed` (or only `.closed` when the connection fails), one call at a time.
    func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection
}
