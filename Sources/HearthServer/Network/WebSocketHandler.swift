@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOWebSocket

/// One WebSocket connection: joins fragmented messages (RFC 6455 §5.4), hands each text
/// message that is valid UTF-8 to the ``ServerRuntime`` and sends the runtime's messages back.
///
/// What it refuses, with the close status RFC 6455 §7.4.1 gives: a text message that is not
/// UTF-8 (1007; it never reaches the core), a binary message (1003: protocol v5 is text), a
/// message over ``NetworkServer/maxFrameBytes`` or 1,024 fragments (1009), fragments out of
/// order (1002), a fragment the server's frame budget cannot take (1013).
final class WebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    static let maxFragments = 1_024

    let runtime: ServerRuntime
    let shared: NetworkShared
    let id: ConnectionID
    /// A fragmented message being received: its opcode and payload so far (reserved from the
    /// frame budget).
    var fragments: (opcode: WebSocketOpcode, data: ByteBuffer, count: Int)?
    var reserved = 0
    /// Closing (refused, or the client's close frame came): later frames are dropped unread.
    var closing = false

    /// The `Host` header of the upgrade request: where the client found the server.
    let requestHost: String?
    /// The upgrade URL's `ls`: the session a reconnecting client left.
    let lastSession: String?

    init(runtime: ServerRuntime, shared: NetworkShared, host: String?, lastSession: String? = nil) {
        self.lastSession = lastSession
        self.runtime = runtime
        self.shared = shared
        self.requestHost = host
        self.id = runtime.makeID()
    }

    /// The runtime's way to this connection: each message split into frames as Firebase does,
    /// counted against the outbound budgets.
    struct Sink: ConnectionSink {
        let channel: any Channel
        let budget: OutboundBudget

        func send(_ text: String) {
            for frame in FrameSplitter.frames(for: text) {
                let data = channel.allocator.buffer(string: frame)
                guard budget.write(WebSocketFrame(fin: true, opcode: .text, data: data), bytes: data.capacity) else {
                    return
                }
            }
        }

        func close() { WebSocketHandler.close(channel, status: 1000) }

        /// NIO's `autoRead` off: no more reads from the socket once the one under way ends.
        func setReading(_ reading: Bool) {
            let channel = self.channel
            channel.onEventLoop { try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: reading) }
        }
    }

    /// Sends a close frame with `status`, then closes the connection.
    static func close(_ channel: any Channel, status: UInt16) {
        channel.onEventLoop {
            var data = channel.allocator.buffer(capacity: 2)
            data.writeInteger(status)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let budget = OutboundBudget(
            channel: context.channel, ledger: shared.outbound, limit: shared.maxQueuedBytesPerConnection)
        runtime.connected(
            id, sink: Sink(channel: context.channel, budget: budget), host: requestHost, lastSession: lastSession)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        runtime.closed(id)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else { return refuse(context, status: 1002) }
            if frame.fin { return deliver(context, frame.opcode, frame.unmaskedData) }
            fragments = (frame.opcode, context.channel.allocator.buffer(capacity: 0), 0)
            append(context, frame)
        case .continuation:
            guard fragments != nil else { return refuse(context, status: 1002) }
            append(context, frame)
        case .ping:
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            closing = true
            WebSocketHandler.close(context.channel, status: 1000)
        case .pong:
            break
        default:
            refuse(context, status: 1002)
        }
    }

    func append(_ context: ChannelHandlerContext, _ frame: WebSocketFrame) {
        guard var message = fragments else { return }
        fragments = nil
        var payload = frame.unmaskedData
        let count = payload.readableBytes
        guard message.data.readableBytes + count <= NetworkServer.maxFrameBytes,
            message.count < WebSocketHandler.maxFragments
        else { return refuse(context, status: 1009) }
        let size = ByteBudget.bufferSize(message.data.readableBytes + count)
        if size > reserved {
            guard shared.frames.reserve(size - reserved) else { return refuse(context, status: 1013) }
            reserved = size
        }
        message.data.reserveCapacity(size)
        message.data.writeBuffer(&payload)
        message.count += 1
        if frame.fin {
            release()
            deliver(context, message.opcode, message.data)
        } else {
            fragments = message
        }
    }

    /// One whole message: text that is UTF-8 goes to the runtime; anything else closes.
    func deliver(_ context: ChannelHandlerContext, _ opcode: WebSocketOpcode, _ data: ByteBuffer) {
        guard opcode == .text else { return refuse(context, status: 1003) }
        guard let text = String(validating: data.readableBytesView, as: UTF8.self) else {
            return refuse(context, status: 1007)
        }
        runtime.received(id, text)
    }

    func refuse(_ context: ChannelHandlerContext, status: UInt16) {
        closing = true
        release()
        WebSocketHandler.close(context.channel, status: status)
    }

    func release() {
        fragments = nil
        shared.frames.release(reserved)
        reserved = 0
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Reserves, from the server's frame budget, the payload length each incoming WebSocket frame
/// announces while NIO's frame decoder — the next handler, which holds a frame's bytes until it
/// is whole — receives it, and returns it once the frame is through. A frame the budget cannot
/// take closes the connection (1013) before the decoder buffers any of it.
final class FrameMeter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let budget: ByteBudget
    var scanner = FrameBoundaryScanner(maxPayloadBytes: NetworkServer.maxFrameBytes)
    var reserved = 0
    /// Past a frame the decoder refuses (it closes the connection), or refused here: nothing is
    /// counted any more.
    var stopped = false
    var refused = false

    init(budget: ByteBudget) { self.budget = budget }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if !stopped {
            let buffer = unwrapInboundIn(data)
            do {
                try buffer.withUnsafeReadableBytes { bytes in try scanner.scan(bytes) }
            } catch {
                stopped = true
            }
            // The decoder's buffer for the frame: its header (at most 14 bytes) and payload, in a
            // power of two.
            let wanted = stopped ? 0 : scanner.announced.map { ByteBudget.bufferSize($0 + 14) } ?? 0
            if wanted > reserved, !budget.reserve(wanted - reserved) {
                refused = true
                release()
                return WebSocketHandler.close(context.channel, status: 1013)
            }
            if wanted < reserved { budget.release(reserved - wanted) }
            reserved = wanted
        }
        context.fireChannelRead(data)
    }

    func release() {
        budget.release(reserved)
        reserved = 0
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }
}
