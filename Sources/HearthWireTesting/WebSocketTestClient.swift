import Dispatch
import Foundation
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A raw WebSocket client for tests and benchmarks of `hearth serve`: sends text frames as
/// given (so a test controls the protocol's own framing) and collects every text frame the
/// server sends. Blocking calls: use it from test code, never from an event loop.
public final class WebSocketTestClient: Sendable {
    /// The connection (a test may stop reading it with `ChannelOptions.autoRead`).
    public let channel: any Channel
    /// What arrived, in order.
    public let inbox: Inbox

    /// The frames received, with a cursor for ``next(timeout:)``.
    public final class Inbox: Sendable {
        /// Every text frame received so far.
        public let frames = Mutex<[String]>([])
        /// The total UTF-8 bytes of text frames received.
        public let bytes = Atomic<Int>(0)
        let closed = Atomic<Bool>(false)
        let cursor = Mutex<Int>(0)
        let arrived = DispatchSemaphore(value: 0)

        func append(_ frame: String) {
            frames.withLock { $0.append(frame) }
            bytes.add(frame.utf8.count, ordering: .relaxed)
            arrived.signal()
        }

        func markClosed() {
            closed.store(true, ordering: .relaxed)
            arrived.signal()
        }

        /// The next frame, waiting up to `timeout` seconds; nil on timeout or close.
        public func next(timeout: Double = 5) -> String? {
            let deadline = DispatchTime.now() + timeout
            while true {
                let got = cursor.withLock { c -> String? in
                    let all = frames.withLock { $0 }
                    guard c < all.count else { return nil }
                    c += 1
                    return all[c - 1]
                }
                if let got { return got }
                if closed.load(ordering: .relaxed) { return nil }
                if arrived.wait(timeout: deadline) == .timedOut { return nil }
            }
        }
    }

    final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        let inbox: Inbox
        init(inbox: Inbox) { self.inbox = inbox }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .text { inbox.append(String(buffer: frame.unmaskedData)) }
            if frame.opcode == .connectionClose { inbox.markClosed() }
        }
        func channelInactive(context: ChannelHandlerContext) { inbox.markClosed() }
    }

    final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let host: String
        let uri: String
        init(host: String, uri: String) { self.host = host; self.uri = uri }
        func channelActive(context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: host)
            headers.add(name: "Content-Length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers))),
                promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }

    /// Connects to `ws://127.0.0.1:port/path` and waits for the upgrade. With `source`, the
    /// socket is bound to that local address first (port 0): each loopback address has its own
    /// ephemeral ports, so a benchmark holding more connections than one address has ports
    /// spreads them over 127.0.0.2, 127.0.0.3, …
    public init(
        port: Int, group: any EventLoopGroup, path: String = "/.ws?v=5&ns=test", source: String? = nil
    ) throws {
        let inbox = Inbox()
        // One loop for the promise and the channel: `group.next()` twice would put every
        // connection of a two-loop group on the same loop (the benchmarks spread them).
        let loop = group.next()
        let upgraded = loop.makePromise(of: Void.self)
        let bootstrap = ClientBootstrap(group: loop).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let requester = UpgradeRequester(host: "127.0.0.1:\(port)", uri: path)
                let upgrader = NIOWebSocketClientUpgrader(
                    requestKey: "dGhlIHNhbXBsZSBub25jZQ==", maxFrameSize: 1 << 20,
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(Handler(inbox: inbox))
                            upgraded.succeed(())
                        }
                    })
                // Frames that arrive in the same read as the 101 (often the hello) must be
                // forwarded to the WebSocket handlers, not dropped (NIOHTTP1's default).
                try channel.pipeline.syncOperations.addHTTPClientHandlers(
                    leftOverBytesStrategy: .forwardBytes,
                    withClientUpgrade: (
                        upgraders: [upgrader],
                        completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(requester, promise: nil)
                        }
                    ))
                try channel.pipeline.syncOperations.addHandler(requester)
            }
        }
        let bound = try source.map { try bootstrap.bind(to: SocketAddress(ipAddress: $0, port: 0)) } ?? bootstrap
        channel = try bound.connect(host: "127.0.0.1", port: port).wait()
        try upgraded.futureResult.wait()
        self.inbox = inbox
    }

    /// Sends one text frame, exactly as given.
    public func sendFrame(_ text: String) throws {
        let frame = WebSocketFrame(
            fin: true, opcode: .text, maskKey: .random(), data: channel.allocator.buffer(string: text))
        try channel.writeAndFlush(frame).wait()
    }

    /// Sends a message with Firebase's framing (split over 16,384 characters).
    public func send(_ message: String) throws {
        for f in FrameSplitter.frames(for: message) { try sendFrame(f) }
    }

    /// The next whole message, reassembled from frames; nil on timeout or close.
    @_spi(HearthInternals) public func receive(timeout: Double = 5) -> ServerMessage? {
        var assembler = FrameAssembler(maxMessageLength: 64 << 20)
        while let frame = inbox.next(timeout: timeout) {
            if let text = try? assembler.receive(frame) { return try? ServerMessage.decode(text) }
        }
        return nil
    }

    /// Messages until one answers request `number`: the pushes before it, its status and data.
    @_spi(HearthInternals) public func response(
        _ number: Int, timeout: Double = 5
    ) -> (pushes: [ServerMessage], status: String?, data: JSONValue?) {
        var pushes: [ServerMessage] = []
        while let m = receive(timeout: timeout) {
            if case let .response(n, s, d) = m, n == number { return (pushes, s, d) }
            pushes.append(m)
        }
        return (pushes, nil, nil)
    }

    /// Whether the server closed the connection.
    public var isClosed: Bool { inbox.closed.load(ordering: .relaxed) }

    /// Closes the connection (without a close frame: as a dropped socket).
    public func close() { try? channel.close().wait() }
}
