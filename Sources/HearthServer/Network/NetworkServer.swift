import Foundation
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The network side of `hearth serve`, on SwiftNIO: one port, HTTP/1.1 for REST and event
/// streams, upgraded to a WebSocket at `/.ws` for protocol v5. NIOHTTP1 parses HTTP and
/// NIOWebSocket does RFC 6455 framing; these files move bytes between them and the
/// ``ServerRuntime``, within the ``Limits``.
public final class NetworkServer: Sendable {
    /// The bound address's port.
    public let port: Int
    let channel: any Channel
    let group: MultiThreadedEventLoopGroup
    let databases: Databases
    let ticker: RepeatedTask
    let shared: NetworkShared

    /// The largest WebSocket frame accepted, and the largest message its fragments may make
    /// (Firebase's clients send at most 16,384 characters per frame).
    public static let maxFrameBytes = 1 << 20

    /// How each connection sizes the buffer it reads its socket into. NIO keeps a connection's
    /// last buffer for its next read for as long as the connection is open, so its first size is
    /// what every idle connection holds: 256 bytes (a WebSocket upgrade request fits, and so do
    /// most protocol messages) where NIO's default is 2,048. A connection receiving more doubles
    /// it on every read that fills it, up to 64 KiB, as NIO's default does.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 64 << 10)

    /// The connection cap in force: ``Limits/maxConnections``, or less to keep
    /// ``Limits/fileDescriptorReserve`` descriptors free under the open-file limit at start.
    public var connectionLimit: Int { shared.gate.cap }

    /// Binds `host:port` (port 0 picks a free one) and starts serving `runtime` within `limits`,
    /// one database under every namespace.
    public static func start(
        host: String, port: Int, runtime: ServerRuntime, limits: Limits = Limits(), threads: Int = System.coreCount
    ) async throws -> NetworkServer {
        try await start(host: host, port: port, databases: Databases(single: runtime), limits: limits, threads: threads)
    }

    /// Binds `host:port` (port 0 picks a free one) and starts serving `databases` within
    /// `limits`: each request reaches the database its `ns` parameter names.
    public static func start(
        host: String, port: Int, databases: Databases, limits: Limits = Limits(), threads: Int = System.coreCount
    ) async throws -> NetworkServer {
        try await start(
            listening: try BoundSocket.bind(host: host, port: port), databases: databases, limits: limits,
            threads: threads)
    }

    /// Starts serving `databases` within `limits` on a socket already bound.
    package static func start(
        listening socket: consuming BoundSocket, databases: Databases, limits: Limits = Limits(),
        threads: Int = System.coreCount
    ) async throws -> NetworkServer {
        let host = socket.host
        let shared = databases.primary.state.withLock { s in
            NetworkShared(
                limits: limits, maxBodyBytes: s.core.configuration.maxRESTBodyBytes,
                maxQueuedBytesPerConnection: s.core.configuration.maxBufferedBytesPerConnection)
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let upgrader = WebSocketUpgrader(databases: databases, shared: shared)
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.maxHeadBytes
        decoderLimits.maxHeaderListSize = limits.maxHeadBytes
        let headLimits = decoderLimits
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Out of descriptors after all (something else took them): accept again a
                    // second later instead of spinning on EMFILE.
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
                    try channel.pipeline.syncOperations.addHandler(ConnectionGate.Handler(gate: shared.gate))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.recvAllocator, value: receiveBuffers)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let http = HTTPHandler(databases: databases, shared: shared)
                    let upgraded = NIOLoopBound(http, eventLoop: channel.eventLoop)
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.syncOperations.removeHandler(upgraded.value, promise: nil)
                            }
                        ), withEncoderConfiguration: .init(), withDecoderLimitConfiguration: headLimits)
                    try channel.pipeline.syncOperations.addHandler(http)
                }
            }
        let descriptor = socket.release()
        let channel = try await bootstrap.withBoundSocket(descriptor).get()
        // NIO listens on an adopted socket with its default backlog (128) before any option
        // applies; listening again raises it for bursts of connections (a thousand listeners).
        _ = listen(descriptor, 256)
        let port = channel.localAddress?.port ?? 0
        databases.setHost("\(host):\(port)")
        let ticker = group.next().scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            for runtime in databases.all { runtime.tick() }
        }
        return NetworkServer(
            port: port, channel: channel, group: group, databases: databases,
            ticker: ticker, shared: shared)
    }

    init(
        port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, databases: Databases,
        ticker: RepeatedTask, shared: NetworkShared
    ) {
        self.port = port
        self.channel = channel
        self.group = group
        self.databases = databases
        self.ticker = ticker
        self.shared = shared
    }

    /// Stops accepting, closes every connection and waits for every database's commit thread.
    public func stop() async throws {
        ticker.cancel()
        try await channel.close()
        for runtime in databases.all { runtime.stop() }
        try await group.shutdownGracefully()
    }

    /// Waits until the listening socket closes.
    public func wait() async throws {
        try await channel.closeFuture.get()
    }
}

/// What the connections of one server share: its limits, and the totals they count against.
final class NetworkShared: Sendable {
    let limits: NetworkServer.Limits
    let gate: ConnectionGate
    /// REST bodies being read.
    let bodies: ByteBudget
    /// WebSocket frames and fragmented messages being received.
    let frames: ByteBudget
    /// Bytes queued to clients.
    let outbound: OutboundLedger
    /// The core's per-request and per-connection limits (its configuration does not change
    /// while the server runs).
    let maxBodyBytes: Int
    let maxQueuedBytesPerConnection: Int

    init(limits: NetworkServer.Limits, maxBodyBytes: Int, maxQueuedBytesPerConnection: Int) {
        self.limits = limits
        self.gate = ConnectionGate(cap: limits.connectionCap(fileLimit: NetworkServer.openFileLimit()))
        self.bodies = ByteBudget(limit: limits.maxBufferedBodyBytes)
        self.frames = ByteBudget(limit: limits.maxBufferedFrameBytes)
        self.outbound = OutboundLedger(limit: limits.maxQueuedBytes)
        self.maxBodyBytes = maxBodyBytes
        self.maxQueuedBytesPerConnection = maxQueuedBytesPerConnection
    }
}
