#if HEARTH_NIO_TRANSPORT
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// The ``Transport`` on Linux: protocol v5 over a WebSocket on SwiftNIO, with TLS by NIOSSL
/// for secure endpoints. (On Apple platforms the client uses `URLSessionWebSocketTask` and
/// links no SwiftNIO; FoundationNetworking's on Linux has no WebSocket support.)
///
/// A thin adapter: it opens the connection (TCP, TLS with SNI and the system's trust roots
/// unless told otherwise, the HTTP/1.1 upgrade to a WebSocket at
/// ``ServerEndpoint/webSocketPath(lastSessionID:)``), splits outgoing messages into frames
/// (`FrameSplitter`), reassembles incoming ones (`FrameAssembler`), answers pings and close
/// frames, and reports what happened. Request numbers, authentication, keepalives and
/// reconnection belong to the protocol core.
///
/// Each connection runs on one event loop of ``group``, and its events are delivered on that
/// loop, one at a time and in order: the handler must not block. `send` and `close` may be
/// called from any thread (they hop to the loop, keeping their order); a message sent before
/// `.opened` or after `.closed` is dropped, as nothing could carry it.
public struct WebSocketTransport: Transport {
    /// The event loops connections run on.
    public let group: any EventLoopGroup
    /// How long the TCP connection, TLS handshake and WebSocket upgrade may take together
    /// before the attempt is abandoned with `.closed` (Firebase's clients wait 30 seconds).
    public let connectTimeout: TimeAmount
    /// The longest incoming message accepted, in UTF-8 bytes; a longer one closes the
    /// connection (code 1009) rather than being buffered.
    public let maxMessageBytes: Int
    /// The TLS settings for `wss://` endpoints; nil means NIOSSL's client defaults (full
    /// certificate verification against the system's trust roots).
    public let tlsConfiguration: TLSConfiguration?

    /// The default ``maxMessageBytes``: 256 MiB, at least Firebase's documented limit on the
    /// size of a single response served by the database (256 MB).
    public static let defaultMaxMessageBytes = InboundFrames.defaultMaxMessageBytes

    /// A transport.
    /// - Parameters:
    ///   - group: the event loops to run connections on.
    ///   - connectTimeout: the limit on opening a connection (30 seconds by default).
    ///   - maxMessageBytes: the longest incoming message, in UTF-8 bytes; clamped to
    ///     1 ... `UInt32.max` (the WebSocket decoder's limit).
    ///   - tlsConfiguration: TLS settings for secure endpoints (for a private certificate
    ///     authority, say); nil for the defaults.
    public init(
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        connectTimeout: TimeAmount = .seconds(30),
        maxMessageBytes: Int = WebSocketTransport.defaultMaxMessageBytes,
        tlsConfiguration: TLSConfiguration? = nil
    ) {
        self.group = group
        self.connectTimeout = connectTimeout
        self.maxMessageBytes = InboundFrames.clampedLimit(maxMessageBytes)
        self.tlsConfiguration = tlsConfiguration
    }

    /// Starts connecting to `endpoint`; see ``Transport/connect(to:lastSessionID:events:)``.
    /// `events` is called on the connection's event loop.
    public func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        let loop = group.next()
        let box = NIOLoopBoundBox.makeBoxSendingValue(
            WebSocketSession(events: events), as: WebSocketSession.self, eventLoop: loop)
        let connection = WebSocketConnection(box: box)
        let tls: NIOSSLContext?
        do {
            tls =
                endpoint.secure ? try NIOSSLContext(configuration: tlsConfiguration ?? .makeClientConfiguration()) : nil
        } catch {
            loop.execute { box.value.finish(reason: "TLS configuration refused: \(error)") }
            return connection
        }
        let timeout = connectTimeout
        loop.execute { [self] in
            let bootstrap = makeBootstrap(
                loop: loop, endpoint: endpoint, lastSessionID: lastSessionID, tls: tls, box: box)
            let timer = loop.scheduleTask(in: timeout) {
                guard box.value.phase == .connecting else { return }
                box.value.fail(reason: CloseReason.timedOut(milliseconds: timeout.nanoseconds / 1_000_000))
            }
            box.value.timer = timer
            bootstrap.connect(host: endpoint.host, port: endpoint.port).whenComplete { result in
                switch result {
                case .success(let channel):
                    box.value.connected(channel)
                    channel.closeFuture.whenComplete { _ in box.value.channelClosed(channel) }
                case .failure(let error):
                    box.value.finish(
                        reason: CloseReason.couldNotConnect(host: endpoint.host, port: endpoint.port, "\(error)"))
                }
            }
        }
        return connection
    }

    private func makeBootstrap(
        loop: any EventLoop, endpoint: ServerEndpoint, lastSessionID: String?, tls: NIOSSLContext?,
        box: NIOLoopBoundBox<WebSocketSession>
    ) -> ClientBootstrap {
        let maxMessageBytes = self.maxMessageBytes
        let serverName = EndpointParser.isIPAddress(endpoint.host) ? nil : endpoint.host
        let target = endpoint.webSocketPath(lastSessionID: lastSessionID)
        let hostHeader = endpoint.hostHeader
        return ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            // The server's FIN reaches the pipeline as an event (EndOfInputGuard) rather than
            // closing the channel at once; the guard closes it.
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tls {
                        try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    try sync.addHandler(EndOfInputGuard())
                    let requester = UpgradeRequester(box: box, target: target, host: hostHeader)
                    let upgrader = NIOWebSocketClientUpgrader(
                        maxFrameSize: maxMessageBytes,
                        automaticErrorHandling: true,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                let sync = channel.pipeline.syncOperations
                                try sync.addHandler(
                                    NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                        maxAccumulatedFrameSize: maxMessageBytes))
                                try sync.addHandler(FrameHandler(box: box, maxMessageBytes: maxMessageBytes))
                                box.value.opened(channel)
                            }
                        })
                    // .forwardBytes: frames the server sends right behind its 101 response
                    // (its hello, often in the same packet) must reach the WebSocket decoder.
                    try sync.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes,
                        withClientUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.syncOperations.removeHandler(requester, promise: nil)
                            }
                        ))
                    try sync.addHandler(requester)
                }
            }
    }
}
#endif
