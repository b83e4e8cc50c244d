@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1

/// REST requests and event streams on plain HTTP/1.1, under the server's limits.
///
/// A request's head must arrive within ``NetworkServer/Limits/headTimeoutMs`` of the
/// connection's opening or of the previous response's end (the same timer bounds a WebSocket
/// upgrade: this handler leaves the pipeline when it completes), and its body at the rate
/// ``NetworkServer/Limits/minBodyBytesPerSecond`` after a grace period. The head is checked
/// before any of the body is read: its target (``RESTTarget``), then `Content-Length` against
/// the per-request limit (413) and the server's body budget (503); the check of its credential
/// starts then too, and a refused one is answered (401) without waiting for the body. A refusal
/// is answered at once with `Connection: close`; what the client still sends is read and dropped
/// for a short while (so the answer is not lost to a reset), then the connection closes.
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    enum State {
        /// Waiting for a request head (the head timer runs).
        case idle
        /// Reading the body of a request the core will answer (the body timer runs).
        case body(RESTTarget, keepAlive: Bool)
        /// A request without a body refused at its head, answered at its end.
        case refusedAtEnd(RESTResponse, keepAlive: Bool)
        /// The whole request arrived; its credential is being checked.
        case resolving(RESTTarget, body: String?, keepAlive: Bool)
        /// The request is with the runtime, or its answer is being written.
        case busy
        /// An event stream is open.
        case streaming
        /// Refused: the answer is sent; input is dropped until the connection closes.
        case closing
    }

    enum Timer { case head, body, linger }

    /// How long (ms) a refused connection keeps reading and dropping input after its answer.
    static let lingerMs: Int64 = 2_000

    /// The databases by namespace: each request goes to the one its `ns` names.
    let databases: Databases
    let shared: NetworkShared
    var state = State.idle
    var body: ByteBuffer?
    /// Body bytes received, and reserved from the body budget, for the current request.
    var received = 0
    var reserved = 0
    var bodyStarted = NIODeadline.now()
    var timer: Scheduled<Void>?
    /// Counts requests, so a response's completion arms the head timer only if no new request
    /// has started since.
    var generation = 0
    /// This connection's share of the outbound budget, made by ``outboundBudget(_:)`` at the first
    /// body or event stream: a connection upgraded to a WebSocket writes neither, and a budget
    /// stays in the ledger until its connection closes.
    var outbound: OutboundBudget?
    /// The current request's caller, once its credential and App Check token are checked (which
    /// starts at the head, so a refused one is answered without waiting for the body).
    var caller: Result<RESTCaller, RESTResponse>?

    init(databases: Databases, shared: NetworkShared) {
        self.databases = databases
        self.shared = shared
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context, .head, in: shared.limits.headTimeoutMs)
    }

    /// ``outbound``, made now if this is the connection's first use of it.
    func outboundBudget(_ context: ChannelHandlerContext) -> OutboundBudget {
        if let outbound { return outbound }
        let budget = OutboundBudget(channel: context.channel, ledger: shared.outbound, limit: Int.max)
        outbound = budget
        return budget
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        releaseBody()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        releaseBody()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard case .idle = state else { return }
            cancelTimer()
            generation += 1
            start(context, head)
        case .body(var chunk):
            guard case .body = state else { return }
            received += chunk.readableBytes
            guard received <= shared.maxBodyBytes else {
                return refuse(context, .error(413, "Request body is larger than \(shared.maxBodyBytes) bytes"))
            }
            if received > reserved {
                let size = ByteBudget.bufferSize(received)
                guard shared.bodies.reserve(size - reserved) else { return refuse(context, Self.busy) }
                reserved = size
            }
            if body == nil { body = context.channel.allocator.buffer(capacity: reserved) }
            body?.reserveCapacity(reserved)
            body?.writeBuffer(&chunk)
        case .end:
            switch state {
            case .body(let target, let keepAlive):
                cancelTimer()
                finish(context, target, keepAlive: keepAlive)
            case .refusedAtEnd(let response, let keepAlive):
                state = .busy
                respond(context, response, keepAlive: keepAlive)
            case .idle, .resolving, .busy, .streaming, .closing:
                break
            }
        }
    }

    static let busy: RESTResponse = {
        var response = RESTResponse.error(503, "The server is buffering too many request bodies; try again later")
        response.headers["Retry-After"] = "1"
        return response
    }()

    /// A request head: routed, and its announced body checked against the limits.
    func start(_ context: ChannelHandlerContext, _ head: HTTPRequestHead) {
        let keepAlive = head.isKeepAlive
        let length = head.headers.first(name: "content-length").flatMap { Int($0) }
        let hasBody = head.headers.contains(name: "transfer-encoding") || (length ?? 0) > 0
        let routing = RESTTarget.route(
            method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) })
        switch routing {
        case .answer(let response):
            if hasBody { refuse(context, response) } else { state = .refusedAtEnd(response, keepAlive: keepAlive) }
        case .request(let target):
            body = nil
            received = 0
            if let length, length > shared.maxBodyBytes {
                return refuse(context, .error(413, "Request body is larger than \(shared.maxBodyBytes) bytes"))
            }
            if let length, length > 0 {
                let size = ByteBudget.bufferSize(length)
                guard shared.bodies.reserve(size) else { return refuse(context, Self.busy) }
                reserved = size
            }
            state = .body(target, keepAlive: keepAlive)
            caller = nil
            if target.needsResolving { resolve(context, target) }
            if hasBody {
                bodyStarted = .now()
                arm(context, .body, in: shared.limits.bodyTimeoutMs)
            }
        }
    }

    // MARK: - Timers

    func arm(_ context: ChannelHandlerContext, _ kind: Timer, in ms: Int64) {
        arm(context, kind, at: .now() + Self.duration(ms))
    }

    /// `ms` as a time amount, within what a deadline can hold (about two years).
    static func duration(_ ms: Int64) -> TimeAmount { .milliseconds(min(max(ms, 0), 1 << 36)) }

    func arm(_ context: ChannelHandlerContext, _ kind: Timer, at deadline: NIODeadline) {
        timer?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.timer = nil
            handler.expired(context, kind)
        }
    }

    func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    func expired(_ context: ChannelHandlerContext, _ kind: Timer) {
        switch kind {
        case .head, .linger:
            context.close(promise: nil)
        case .body:
            // The grace, then one second per `minBodyBytesPerSecond` bytes received.
            let rate = max(1, shared.limits.minBodyBytesPerSecond)
            let (scaled, overflow) = received.multipliedReportingOverflow(by: 1_000)
            let earned = overflow ? Int64.max : Int64(scaled / rate)
            let deadline = bodyStarted + Self.duration(shared.limits.bodyTimeoutMs) + Self.duration(earned)
            if deadline > .now() { return arm(context, .body, at: deadline) }
            refuse(context, .error(408, "The request body arrived too slowly"))
        }
    }

    func releaseBody() {
        body = nil
        shared.bodies.release(reserved)
        reserved = 0
        received = 0
    }
}
