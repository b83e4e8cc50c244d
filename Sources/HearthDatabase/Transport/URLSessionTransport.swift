#if !HEARTH_NIO_TRANSPORT && canImport(Darwin)
import Foundation
@_spi(HearthInternals) import HearthWire

/// The ``Transport`` on Apple platforms: protocol v5 over `URLSessionWebSocketTask`, with the
/// system's TLS and trust settings for `wss://` (and `https://`) endpoints; no SwiftNIO.
///
/// A thin adapter, as the SwiftNIO one on Linux is: it opens the WebSocket at
/// ``ServerEndpoint/webSocketPath(lastSessionID:)``, splits outgoing messages into frames
/// (`FrameSplitter`), reassembles incoming ones, and reports what happened in the same words as
/// the SwiftNIO transport: the logic for all three is shared with it and tested on Linux. URLSession
/// answers pings and close frames itself. Keepalives and reconnection belong to the protocol
/// core.
///
/// Each connection's events are delivered on a serial queue of its own, one at a time and in
/// order: the handler must not block. `send` and `close` may be called from any thread.
public struct URLSessionTransport: Transport {
    /// How long the connection, TLS handshake and WebSocket upgrade may take together before
    /// the attempt is abandoned with `.closed`.
    public let connectTimeout: Duration
    /// The longest incoming message accepted, in UTF-8 bytes; a longer one closes the
    /// connection (code 1009) rather than being buffered.
    public let maxMessageBytes: Int

    /// The default ``maxMessageBytes``: 256 MiB, at least Firebase's documented limit on the
    /// size of a single response served by the database (256 MB).
    public static let defaultMaxMessageBytes = InboundFrames.defaultMaxMessageBytes

    /// A transport.
    /// - Parameters:
    ///   - connectTimeout: the limit on opening a connection (30 seconds by default).
    ///   - maxMessageBytes: the longest incoming message, in UTF-8 bytes; clamped to
    ///     1 ... `UInt32.max`.
    public init(
        connectTimeout: Duration = .seconds(30), maxMessageBytes: Int = URLSessionTransport.defaultMaxMessageBytes
    ) {
        self.connectTimeout = connectTimeout
        self.maxMessageBytes = InboundFrames.clampedLimit(maxMessageBytes)
    }

    /// Starts connecting to `endpoint`; see ``Transport/connect(to:lastSessionID:events:)``.
    public func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        let connection = URLSessionConnection(endpoint: endpoint, maxMessageBytes: maxMessageBytes, events: events)
        connection.start(url: endpoint.webSocketURL(lastSessionID: lastSessionID), timeout: connectTimeout)
        return connection
    }
}

/// One connection. Every mutable field is touched only on `queue`: URLSession's callbacks and
/// the public calls hop there, so events leave in order and one at a time (hence `@unchecked`).
final class URLSessionConnection: NSObject, TransportConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
    /// What a receive produced, made `Sendable` before it leaves URLSession's queue.
    private enum Received: Sendable {
        case text(String)
        case binary
        case failed(String)
    }

    private let queue = DispatchQueue(label: "hearth.database.transport")
    private let endpoint: ServerEndpoint
    private let maxMessageBytes: Int
    private let events: @Sendable (TransportEvent) -> Void
    private var state = ConnectionState()
    private var inbound: InboundFrames
    private var session: URLSession?
    private var task: URLSessionWebSocketTask?
    private var timer: DispatchWorkItem?
    /// Frames not yet handed to the task; the first is being sent. One send at a time keeps
    /// their order without relying on the task to.
    private var outbox: [String] = []
    /// Whether the database asked reading to stop (``setReading(_:)``): no receive is started.
    private var paused = false
    /// Whether a receive is under way: at most one, so messages stay in order.
    private var receiving = false

    init(endpoint: ServerEndpoint, maxMessageBytes: Int, events: @escaping @Sendable (TransportEvent) -> Void) {
        self.endpoint = endpoint
        self.maxMessageBytes = maxMessageBytes
        self.events = events
        self.inbound = InboundFrames(maxMessageBytes: maxMessageBytes)
    }

    func start(url text: String, timeout: Duration) {
        queue.async { [self] in
            guard let url = URL(string: text) else {
                end(CloseReason.openingFailed("not a URL: \(text)"), code: nil)
                return
            }
            let delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
            // The session keeps its delegate (self) until invalidated: end(_:code:) invalidates it.
            let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: delegateQueue)
            let task = session.webSocketTask(with: url)
            task.maximumMessageSize = maxMessageBytes
            self.session = session
            self.task = task
            let (seconds, attoseconds) = timeout.components
            let timer = DispatchWorkItem { [self] in
                guard state.phase == .connecting else { return }
                end(CloseReason.timedOut(milliseconds: seconds * 1000 + attoseconds / 1_000_000_000_000_000), code: nil)
            }
            self.timer = timer
            queue.asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) * 1e-18, execute: timer)
            task.resume()
        }
    }

    func send(_ message: String) {
        queue.async { [self] in
            guard state.phase == .open else { return }
            let idle = outbox.isEmpty
            outbox += FrameSplitter.frames(for: message)
            if idle { sendNext() }
        }
    }

    func close() {
        queue.async { [self] in end(CloseReason.closedByClient, code: .normalClosure) }
    }

    /// URLSession delivers a message only when asked (`receive`): stopping is not asking for
    /// the next one; the one under way is still delivered.
    func setReading(_ reading: Bool) {
        queue.async { [self] in
            paused = !reading
            if reading, state.phase == .open { receiveNext() }
        }
    }

    private func sendNext() {
        guard let frame = outbox.first, let task else { return }
        task.send(.string(frame)) { [self] error in
            let failure = error.map { "\($0)" }
            queue.async { [self] in
                guard state.phase == .open else { return }
                if let failure { return end(CloseReason.failed(failure), code: nil) }
                outbox.removeFirst()
                sendNext()
            }
        }
    }

    private func receiveNext() {
        guard !paused, !receiving, let task else { return }
        receiving = true
        task.receive { [self] result in
            let received: Received
            switch result {
            case .success(let message):
                if case .string(let text) = message { received = .text(text) } else { received = .binary }
            case .failure(let error):
                received = .failed("\(error)")
            }
            queue.async { [self] in
                receiving = false
                handle(received)
            }
        }
    }

    private func handle(_ received: Received) {
        guard state.phase == .open else { return }
        do throws(InboundFrames.Refusal) {
            switch received {
            case .text(let frame):
                if let message = try inbound.text(frame), let event = state.deliver(message) { events(event) }
            case .binary:
                throw InboundFrames.binaryRefusal
            case .failed(let error):
                return end(CloseReason.failed(error), code: nil)
            }
            receiveNext()
        } catch {
            end(error.reason, code: URLSessionWebSocketTask.CloseCode(rawValue: Int(error.code)) ?? .protocolError)
        }
    }

    /// Reports `.closed` once, cancels the task (with a close frame carrying `code` if the
    /// WebSocket is open) and lets the session go.
    private func end(_ reason: String, code: URLSessionWebSocketTask.CloseCode?) {
        guard let event = state.finish(reason: reason) else { return }
        timer?.cancel()
        timer = nil
        outbox = []
        if let code, state.upgraded { task?.cancel(with: code, reason: nil) } else { task?.cancel() }
        session?.finishTasksAndInvalidate()
        task = nil
        session = nil
        events(event)
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        queue.async { [self] in
            guard let event = state.open() else { return }
            timer?.cancel()
            timer = nil
            events(event)
            receiveNext()
        }
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        // URLSession answers the close frame itself; these codes are never sent on the wire.
        let unsent: [URLSessionWebSocketTask.CloseCode] = [.invalid, .noStatusReceived, .abnormalClosure]
        let code = unsent.contains(closeCode) ? nil : UInt16(clamping: closeCode.rawValue)
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        queue.async { [self] in end(CloseReason.serverClosed(code: code, text: text), code: nil) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let response = task.response as? HTTPURLResponse
        let status = response?.statusCode
        let phrase = status.map { HTTPURLResponse.localizedString(forStatusCode: $0) } ?? ""
        let urlErrorCode = error.flatMap { ($0 as NSError).domain == NSURLErrorDomain ? ($0 as NSError).code : nil }
        let description = error.map { "\($0)" }
        queue.async { [self] in
            let reason = CloseReason.ended(
                upgraded: state.upgraded, host: endpoint.host, port: endpoint.port, status: status, phrase: phrase,
                urlErrorCode: urlErrorCode, error: description)
            end(reason, code: nil)
        }
    }
}
#endif
