/// The reasons a connection reports with `.closed`, in the same words from every transport, so
/// logs and tests read alike whichever one runs.
enum CloseReason {
    /// ``TransportConnection/close()`` was called.
    static let closedByClient = "closed by the client"
    /// The open connection ended without a more specific reason.
    static let lost = "the connection was lost"
    /// The socket closed before the server accepted the upgrade, for no more specific reason.
    static let closedBeforeHandshake = "the connection closed before the WebSocket handshake finished"

    /// No TCP connection could be made (refused, unreachable, no such host).
    static func couldNotConnect(host: String, port: Int, _ error: String) -> String {
        "could not connect to \(host):\(port): \(error)"
    }

    /// The TCP connection was made but TLS or the HTTP exchange failed.
    static func openingFailed(_ error: String) -> String { "opening the connection failed: \(error)" }

    /// The server answered the upgrade request with a status other than 101.
    static func refusedUpgrade(status: Int, phrase: String) -> String {
        "the server refused the WebSocket upgrade: HTTP \(status) \(phrase)"
    }

    /// The connection did not open within the connect timeout.
    static func timedOut(milliseconds: Int64) -> String {
        "timed out after \(milliseconds) ms opening the connection"
    }

    /// The server sent a close frame, with its status code when it carried one.
    static func serverClosed(code: UInt16?, text: String) -> String {
        let described = code.map { " (code \($0)\(text.isEmpty ? "" : ": \(text)"))" } ?? ""
        return "the server closed the connection\(described)"
    }

    /// The open connection failed (a protocol violation, a reset socket).
    static func failed(_ error: String) -> String { "the connection failed: \(error)" }

    /// Foundation's `NSURLErrorDomain` codes meaning that no connection to the host was made:
    /// unknown host, DNS failure, refused, unreachable, no network.
    static let connectFailureCodes: Set<Int> = [-1003, -1004, -1006, -1009]

    /// The reason for a connection that `URLSessionWebSocketTask` ended on its own: what the
    /// SwiftNIO transport reports at the same point. `status` is the HTTP response's status, if
    /// one came; `urlErrorCode` the error's code when its domain is `NSURLErrorDomain`.
    static func ended(
        upgraded: Bool, host: String, port: Int, status: Int?, phrase: String, urlErrorCode: Int?, error: String?
    ) -> String {
        if upgraded { return error.map(failed) ?? lost }
        if let status, status != 101 { return refusedUpgrade(status: status, phrase: phrase) }
        guard let error else { return closedBeforeHandshake }
        if let code = urlErrorCode, connectFailureCodes.contains(code) {
            return couldNotConnect(host: host, port: port, error)
        }
        return openingFailed(error)
    }
}
