@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1

// Answers and event streams: every body byte written is counted against the outbound budgets.
extension HTTPHandler {
    /// Writes `response`; afterwards the connection waits for its next request (keep-alive,
    /// the head timer armed once the response is on the wire) or closes.
    func respond(_ context: ChannelHandlerContext, _ response: RESTResponse, keepAlive: Bool) {
        releaseBody()
        write(context, response, keepAlive: keepAlive)
        state = keepAlive ? .idle : .closing
        let generation = self.generation
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            let (handler, context) = bound.value
            guard keepAlive else { return context.close(promise: nil) }
            if case .idle = handler.state, handler.generation == generation, handler.timer == nil,
                context.channel.isActive
            {
                handler.arm(context, .head, in: handler.shared.limits.headTimeoutMs)
            }
        }
    }

    /// Refuses the request at once: answers with `Connection: close`, stops sending, drops
    /// what the client still sends for ``lingerMs``, then closes.
    func refuse(_ context: ChannelHandlerContext, _ response: RESTResponse) {
        releaseBody()
        cancelTimer()
        state = .closing
        write(context, response, keepAlive: false)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        arm(context, .linger, in: Self.lingerMs)
    }

    /// The response's head and body (not its end).
    func write(_ context: ChannelHandlerContext, _ response: RESTResponse, keepAlive: Bool) {
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
            let data = context.channel.allocator.buffer(string: response.body)
            outboundBudget(context).write(HTTPServerResponsePart.body(.byteBuffer(data)), bytes: data.capacity)
        }
    }

    /// The runtime's way to an event stream: each event counted against the outbound budgets.
    struct StreamSink: ConnectionSink {
        let channel: any Channel
        let budget: OutboundBudget

        func send(_ text: String) {
            let data = channel.allocator.buffer(string: text)
            budget.write(HTTPServerResponsePart.body(.byteBuffer(data)), bytes: data.capacity)
        }

        func close() {
            let channel = self.channel
            channel.onEventLoop {
                channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
            }
        }

        /// An event stream sends no messages to the core, so it never waits for the commit queue.
        func setReading(_ reading: Bool) {}
    }

    func openStream(_ context: ChannelHandlerContext, _ request: RESTRequest, runtime: ServerRuntime) {
        let outbound = outboundBudget(context)
        state = .streaming
        outbound.setLimit(shared.maxQueuedBytesPerConnection)
        var headers = HTTPHeaders()
        // The charset is said: clients such as firebase-admin (requests) decode a text/* body
        // without one as ISO-8859-1.
        headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-cache")
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        let channel = context.channel
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        // The head goes first, on the loop; the runtime's events follow through the sink.
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        let id = runtime.openStream(request, sink: StreamSink(channel: channel, budget: outbound)) { response in
            // Refused: the head was already sent, so the refusal is an event, then the end.
            loop.execute {
                let (handler, context) = bound.value
                let event = context.channel.allocator.buffer(string: "event: cancel\ndata: \(response.body)\n\n")
                context.write(handler.wrapOutboundOut(.body(.byteBuffer(event))), promise: nil)
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil))).whenComplete { _ in
                    channel.close(promise: nil)
                }
            }
        }
        if let id {
            channel.closeFuture.whenComplete { _ in runtime.closed(id) }
        }
    }
}
