import Foundation
import HearthWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// The network side of `hearth serve`, on SwiftNIO: one port, HTTP/1.1 for REST and event
/// streams, upgraded to a WebSocket at `/.ws` for protocol v5. NIOHTTP1 parses HTTP and
/// NIOWebSocket does RFC 6455 framing; this file only moves bytes between them and the
/// ``ServerRuntime``.
public final class NetworkServer: Sendable {
    /// The bound address's port.
    public let port: Int
    let channel: any Channel
    let group: MultiThreadedEventLoopGroup
    let runtime: ServerRuntime
    let ticker: RepeatedTask

    /// The largest WebSocket frame accepted (Firebase's clients send at most 16,384 characters
    /// per frame).
    public static let maxFrameBytes = 1 << 20

    /// Binds `host:port` (port 0 picks a free one) and starts serving `runtime`.
    public static func start(
        host: String, port: Int, runtime: ServerRuntime, threads: Int = System.coreCount
    ) async throws -> NetworkServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maxFrameBytes,
            automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
                return channel.eventLoop.makeSucceededFuture(path == "/.ws" || path == "/.ws/" ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    let handler = WebSocketHandler(runtime: runtime)
                    try channel.pipeline.syncOperations.addHandler(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1024,
                            maxAccumulatedFrameSize: maxFrameBytes))
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            })
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let http = HTTPHandler(runtime: runtime)
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.syncOperations.removeHandler(http, promise: nil)
                            }
                        ))
                    try channel.pipeline.syncOperations.addHandler(http)
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        runtime.setHost("\(host):\(channel.localAddress?.port ?? port)")
        let ticker = group.next().scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            runtime.tick()
        }
        return NetworkServer(
            port: channel.localAddress?.port ?? port, channel: channel, group: group, runtime: runtime, ticker: ticker)
    }

    init(
        port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, runtime: ServerRuntime,
        ticker: RepeatedTask
    ) {
        self.port = port
        self.channel = channel
        self.group = group
        self.runtime = runtime
        self.ticker = ticker
    }

    /// Stops accepting, closes every connection and waits for the commit thread.
    public func stop() async throws {
        ticker.cancel()
        try await channel.close()
        runtime.stop()
        try await group.shutdownGracefully()
    }

    /// Waits until the listening socket closes.
    public func wait() async throws {
        try await channel.closeFuture.get()
    }
}

/// Counts bytes written but not yet on the wire; over the limit, the peer is not reading.
final class OutboundBudget: Sendable {
    let queued = Synchronization.Atomic<Int>(0)
    let limit: Int
    init(limit: Int) { self.limit = limit }
    func add(_ n: Int) -> Bool { queued.add(n, ordering: .relaxed).newValue <= limit }
    func done(_ n: Int) { queued.subtract(n, ordering: .relaxed) }
}

/// One WebSocket connection.
final class WebSocketHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let runtime: ServerRuntime
    let id: ConnectionID

    init(runtime: ServerRuntime) {
        self.runtime = runtime
        self.id = runtime.makeID()
    }

    struct Sink: ConnectionSink {
        let channel: any Channel
        let budget: OutboundBudget

        func send(_ text: String) {
            for frame in FrameSplitter.frames(for: text) {
                let bytes = frame.utf8.count
                guard budget.add(bytes) else {
                    channel.close(promise: nil)  // the client is not reading its socket
                    return
                }
                let buffer = channel.allocator.buffer(string: frame)
                let promise = channel.eventLoop.makePromise(of: Void.self)
                let budget = self.budget
                promise.futureResult.whenComplete { _ in budget.done(bytes) }
                channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: promise)
            }
        }

        func close() {
            let close = WebSocketFrame(
                fin: true, opcode: .connectionClose, data: channel.allocator.buffer(bytes: [0x03, 0xE8]))
            let channel = self.channel
            channel.writeAndFlush(close).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        runtime.connected(
            id, sink: Sink(channel: context.channel, budget: OutboundBudget(limit: runtime.maxBufferedBytes)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        runtime.closed(id)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            runtime.received(id, String(buffer: frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            let reply = WebSocketFrame(
                fin: true, opcode: .connectionClose, data: context.channel.allocator.buffer(bytes: [0x03, 0xE8]))
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in channel.close(promise: nil) }
        case .binary:
            // Protocol v5 is text only.
            context.close(promise: nil)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// REST requests and event streams on plain HTTP/1.1.
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    // @unchecked: the mutable request state is touched only on the channel's event loop.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let runtime: ServerRuntime
    var head: HTTPRequestHead?
    var body: ByteBuffer?
    var refused = false

    /// The REST body limit, read once (it does not change while the server runs).
    let maxBodyBytes: Int

    init(runtime: ServerRuntime) {
        self.runtime = runtime
        self.maxBodyBytes = runtime.state.withLock { $0.core.configuration.maxRESTBodyBytes }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = nil
            refused = false
        case .body(var chunk):
            guard !refused else { return }
            if (body?.readableBytes ?? 0) + chunk.readableBytes > maxBodyBytes {
                refused = true
                body = nil
                respond(context: context, .error(413, "Request body is too large"), keepAlive: false)
                return
            }
            if body == nil { body = chunk } else { body!.writeBuffer(&chunk) }
        case .end:
            guard let head, !refused else { return }
            self.head = nil
            let text = body.map { String(buffer: $0) }
            body = nil
            handle(context: context, head: head, body: text)
        }
    }

    func handle(context: ChannelHandlerContext, head: HTTPRequestHead, body: String?) {
        let keepAlive = head.isKeepAlive
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = String(parts.first ?? "")
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = HTTPHandler.decode(kv[0])
                query[key] = kv.count > 1 ? HTTPHandler.decode(kv[1]) : ""
            }
        }
        let parameters = query
        guard let decodedPath = rawPath.removingPercentEncoding, decodedPath.hasSuffix(".json") else {
            respond(
                context: context, .error(404, "Not found: REST paths end in .json, the WebSocket is at /.ws"),
                keepAlive: keepAlive)
            return
        }
        let path: Path
        do { path = try Path(validating: String(decodedPath.dropLast(5))) } catch {
            respond(context: context, .error(400, "Invalid path: \(error)"), keepAlive: keepAlive)
            return
        }
        let method: RESTRequest.Method
        switch head.method {
        case .GET: method = .get
        case .PUT: method = .put
        case .PATCH: method = .patch
        case .POST: method = .post
        case .DELETE: method = .delete
        case .OPTIONS:
            respond(context: context, RESTResponse(status: 204, body: ""), keepAlive: keepAlive)
            return
        default:
            respond(context: context, .error(405, "Method not allowed"), keepAlive: keepAlive)
            return
        }
        var credential = parameters["auth"]
        if let authorization = head.headers.first(name: "authorization") {
            let lower = authorization.lowercased()
            if lower.hasPrefix("bearer ") { credential = String(authorization.dropFirst(7)) }
        }
        let wantsETag = head.headers.first(name: "x-firebase-etag")?.lowercased() == "true"
        let ifMatch = head.headers.first(name: "if-match")
        let ifNoneMatch = head.headers.first(name: "if-none-match")
        let stream =
            method == .get
            && head.headers[canonicalForm: "accept"].contains { $0.lowercased().hasPrefix("text/event-stream") }
        let override = parameters["auth_variable_override"]
        let runtime = self.runtime
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        Task {
            let principal = await runtime.principal(credential: credential, override: override)
            loop.execute {
                let (handler, context) = bound.value
                switch principal {
                case .failure(let r):
                    handler.respond(context: context, r, keepAlive: keepAlive)
                case .success(let principal):
                    var request = RESTRequest(
                        method: method, path: path, parameters: parameters, body: body, principal: principal)
                    request.wantsETag = wantsETag
                    request.ifMatch = ifMatch
                    request.ifNoneMatch = ifNoneMatch
                    if stream {
                        handler.openStream(context: context, request)
                    } else {
                        runtime.rest(request) { response in
                            loop.execute {
                                bound.value.0.respond(context: bound.value.1, response, keepAlive: keepAlive)
                            }
                        }
                    }
                }
            }
        }
    }

    struct StreamSink: ConnectionSink {
        let channel: any Channel
        let budget: OutboundBudget
        func send(_ text: String) {
            let bytes = text.utf8.count
            guard budget.add(bytes) else {
                channel.close(promise: nil)
                return
            }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            let budget = self.budget
            promise.futureResult.whenComplete { _ in budget.done(bytes) }
            channel.writeAndFlush(
                HTTPServerResponsePart.body(.byteBuffer(channel.allocator.buffer(string: text))), promise: promise)
        }
        func close() {
            let channel = self.channel
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func openStream(context: ChannelHandlerContext, _ request: RESTRequest) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream")
        headers.add(name: "Cache-Control", value: "no-cache")
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        let channel = context.channel
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        // The head goes first, on the loop; the runtime's events follow through the sink.
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        let id = runtime.openStream(
            request, sink: StreamSink(channel: channel, budget: OutboundBudget(limit: runtime.maxBufferedBytes))
        ) { response in
            // Refused: the head was already sent, so the refusal is an event, then the end.
            loop.execute {
                let (handler, context) = bound.value
                let channel = context.channel
                let event = "event: cancel\ndata: \(response.body)\n\n"
                context.write(
                    handler.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: event)))),
                    promise: nil)
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil))).whenComplete { _ in
                    channel.close(promise: nil)
                }
            }
        }
        if let id {
            let runtime = self.runtime
            channel.closeFuture.whenComplete { _ in runtime.closed(id) }
        }
    }

    func respond(context: ChannelHandlerContext, _ response: RESTResponse, keepAlive: Bool) {
        var headers = HTTPHeaders()
        if !response.body.isEmpty { headers.add(name: "Content-Type", value: "application/json; charset=utf-8") }
        headers.add(name: "Content-Length", value: String(response.body.utf8.count))
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        for (k, v) in response.headers { headers.add(name: k, value: v) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if !response.body.isEmpty {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: response.body)))),
                promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }

    static func decode(_ s: Substring) -> String {
        let plus = s.replacingOccurrences(of: "+", with: " ")
        return plus.removingPercentEncoding ?? plus
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
