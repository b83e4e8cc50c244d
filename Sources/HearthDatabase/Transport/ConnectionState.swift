/// Where one connection stands, without I/O. Each transport keeps one per connection, touched
/// only on that connection's serial executor (SwiftNIO's event loop, the URLSession transport's
/// queue), and reports only what it returns: `.opened` at most once and only while connecting,
/// messages only while open, exactly one `.closed`, nothing after it.
struct ConnectionState {
    /// The connection's phase.
    enum Phase: Equatable { case connecting, open, finished }

    private(set) var phase = Phase.connecting
    /// Whether the WebSocket handshake finished (frames may be written).
    private(set) var upgraded = false
    /// The first specific reason the connection failed, reported when the socket closes.
    private var failure: String?

    /// The handshake finished: `.opened` to report, or nil when the connection already ended.
    mutating func open() -> TransportEvent? {
        guard phase == .connecting else { return nil }
        phase = .open
        upgraded = true
        return .opened
    }

    /// A whole message arrived: `.message` to report while open, else nil.
    func deliver(_ message: String) -> TransportEvent? {
        phase == .open ? .message(message) : nil
    }

    /// Remembers why the connection is failing; the first reason wins.
    mutating func recordFailure(_ reason: String) {
        if failure == nil { failure = reason }
    }

    /// What to report when the socket closes: the first recorded failure, else what a close
    /// at this point means.
    var closingReason: String {
        failure ?? (upgraded ? CloseReason.lost : CloseReason.closedBeforeHandshake)
    }

    /// Ends the connection: `.closed` to report, or nil when it already ended.
    mutating func finish(reason: String) -> TransportEvent? {
        guard phase != .finished else { return nil }
        phase = .finished
        return .closed(reason: reason)
    }
}
