import Foundation
import HearthWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A raw WebSocket client for tests: sends text frames as given (so tests control the
/// protocol's own framing) and collects every text frame the server sends.
final class WebSocketTestClient: Sendable {
    let channel: any Channel
    let inbox: Inbox

    final class Inbox: Sendable {
        let frames = Mutex<[String]>([])
        let closed = Atomic<Bool>(false)
        let cursor = Mutex<Int>(0)

        /// The next frame, waiting up to `timeout` seconds.
        func next(timeout: Double = 5) -> String? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let got = cursor.withLock { c -> String? in
                    let all = frames.withLock { $0 }
                    guard c < all.count else { return nil }
                    c += 1
                    return all[c - 1]
                }
                if let got { return got }
                if closed.load(ordering: .relaxed) { return nil }
                usleep(2_000)
            }
            return nil
        }
    }

    final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        let inbox: Inbox
        init(inbox: Inbox) { self.inbox = inbox }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .text { inbox.frames.withLock { $0.append(String(buffer: frame.unmaskedData)) } }
            if frame.opcode == .connectionClose { inbox.closed.store(true, ordering: .relaxed) }
        }
        func channelInactive(context: ChannelHandlerContext) { inbox.closed.store(true, ordering: .relaxed) }
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
            context.write(wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }

    init(port: Int, group: any EventLoopGroup, path: String = "/.ws?v=5&ns=test") throws {
        let inbox = Inbox()
        let upgraded = group.next().makePromise(of: Void.self)
        let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
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
                try channel.pipeline.syncOperations.addHTTPClientHandlers(
                    withClientUpgrade: (upgraders: [upgrader], completionHandler: { context in
                        context.pipeline.syncOperations.removeHandler(requester, promise: nil)
                    }))
                try channel.pipeline.syncOperations.addHandler(requester)
            }
        }
        channel = try bootstrap.connect(host: "127.0.0.1", port: port).wait()
        try upgraded.futureResult.wait()
        self.inbox = inbox
    }

    /// Sends one text frame, exactly as given.
    func sendFrame(_ text: String) throws {
        var mask: WebSocketMaskingKey = [1, 2, 3, 4]
        mask = WebSocketMaskingKey.random()
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: mask, data: channel.allocator.buffer(string: text))
        try channel.writeAndFlush(frame).wait()
    }

    /// Sends a message with Firebase's framing (split over 16,384 characters).
    func send(_ message: String) throws {
        for f in FrameSplitter.frames(for: message) { try sendFrame(f) }
    }

    /// The next whole message, reassembled from frames.
    func receive(timeout: Double = 5) -> ServerMessage? {
        var assembler = FrameAssembler(maxMessageLength: 64 << 20)
        while let frame = inbox.next(timeout: timeout) {
            if let text = try? assembler.receive(frame) { return try? ServerMessage.decode(text) }
        }
        return nil
    }

    /// Messages until one answers request `number`.
    func response(_ number: Int, timeout: Double = 5) -> (pushes: [ServerMessage], status: String?, data: JSONValue?) {
        var pushes: [ServerMessage] = []
        while let m = receive(timeout: timeout) {
            if case let .response(n, s, d) = m, n == number { return (pushes, s, d) }
            pushes.append(m)
        }
        return (pushes, nil, nil)
    }

    var isClosed: Bool { inbox.closed.load(ordering: .relaxed) }

    func close() { try? channel.close().wait() }
}
