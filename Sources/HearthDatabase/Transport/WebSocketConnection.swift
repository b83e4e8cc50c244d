#if HEARTH_NIO_TRANSPORT
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A ``TransportConnection`` on a NIO channel: every call hops to the connection's event loop,
/// where ``WebSocketSession`` keeps the state, so calls from any thread stay in order and a
/// split message's frames are never interleaved with another message's.
final class WebSocketConnection: TransportConnection {
    let box: NIOLoopBoundBox<WebSocketSession>

    init(box: NIOLoopBoundBox<WebSocketSession>) { self.box = box }

    func send(_ message: String) {
        let box = self.box
        box.eventLoop.execute { box.value.send(message) }
    }

    func close() {
        let box = self.box
        box.eventLoop.execute { box.value.closeLocally() }
    }

    func setReading(_ reading: Bool) {
        let box = self.box
        box.eventLoop.execute { box.value.setReading(reading) }
    }
}

/// One connection on its event loop: the ``ConnectionState``, the channel once connected, and
/// the connect timeout.
final class WebSocketSession {
    private let events: @Sendable (TransportEvent) -> Void
    private var state = ConnectionState()
    var phase: ConnectionState.Phase { state.phase }
    /// The connected channel (nil while connecting).
    private var channel: (any Channel)?
    /// The connect timeout, cancelled once the connection opens or ends.
    var timer: Scheduled<Void>?

    init(events: @escaping @Sendable (TransportEvent) -> Void) { self.events = events }

    /// Whether a report from `channel` concerns this connection (ClientBootstrap may try
    /// several addresses; only the one that connected counts).
    private func owns(_ channel: any Channel) -> Bool { self.channel === channel }

    /// The TCP connection is up (the handshake follows).
    func connected(_ channel: any Channel) {
        guard state.phase != .finished else {
            channel.close(promise: nil)  // closed or timed out meanwhile
            return
        }
        self.channel = channel
    }

    /// The WebSocket handshake finished.
    func opened(_ channel: any Channel) {
        guard owns(channel), let event = state.open() else { return }
        timer?.cancel()
        timer = nil
        events(event)
    }

    /// A whole message arrived.
    func received(_ message: String, on channel: any Channel) {
        guard owns(channel), let event = state.deliver(message) else { return }
        events(event)
    }

    /// Something went wrong on `channel` (or, with nil, before there was one): remember why and
    /// close it; `.closed` follows when it has closed.
    func fail(reason: String, on channel: (any Channel)? = nil) {
        if let channel, !owns(channel) {
            channel.close(promise: nil)  // an address ClientBootstrap tried and gave up on
            return
        }
        state.recordFailure(reason)
        if let open = self.channel {
            open.close(promise: nil)
        } else {
            finish(reason: reason)
        }
    }

    /// The channel closed: report why.
    func channelClosed(_ channel: any Channel) {
        guard owns(channel) else { return }
        finish(reason: state.closingReason)
    }

    /// Delivers `.closed` unless it already was.
    func finish(reason: String) {
        guard let event = state.finish(reason: reason) else { return }
        timer?.cancel()
        timer = nil
        events(event)
    }

    /// Writes one message, split into frames, if the connection is open.
    func send(_ message: String) {
        guard state.phase == .open, let channel else { return }
        for frame in FrameSplitter.frames(for: message) {
            let data = channel.allocator.buffer(string: frame)
            channel.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: data), promise: nil)
        }
        channel.flush()
    }

    /// Turns NIO's `autoRead` off or on: off, the socket is not read after the read under way.
    func setReading(_ reading: Bool) {
        guard let channel else { return }
        try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: reading)
    }

    /// `close()`: reports `.closed` now, sends a close frame if the WebSocket is open, and
    /// closes the socket.
    func closeLocally() {
        guard state.phase != .finished else { return }
        finish(reason: CloseReason.closedByClient)
        guard let channel else { return }  // still connecting: connected(_:) closes it
        if state.upgraded { Self.writeCloseFrame(code: .normalClosure, on: channel) }
        channel.close(promise: nil)
    }

    /// Writes a close frame (best effort: the socket is closed right after).
    static func writeCloseFrame(code: WebSocketErrorCode, on channel: any Channel) {
        var data = channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        channel.writeAndFlush(
            WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data), promise: nil)
    }
}

/// Before the upgrade: sends the handshake request (NIOHTTP1's upgrade handler adds the
/// WebSocket headers) and turns a refusal or an error into a reason and a closed socket.
/// Removed once the server accepts the upgrade.
final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let box: NIOLoopBoundBox<WebSocketSession>
    private let target: String
    private let host: String

    init(box: NIOLoopBoundBox<WebSocketSession>, target: String, host: String) {
        self.box = box
        self.target = target
        self.host = host
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Only a response that refused the upgrade gets here.
        if case .head(let head) = unwrapInboundIn(data) {
            box.value.fail(
                reason: CloseReason.refusedUpgrade(status: Int(head.status.code), phrase: head.status.reasonPhrase),
                on: context.channel)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        box.value.fail(reason: CloseReason.openingFailed("\(error)"), on: context.channel)
    }
}

/// Holds back the end of the server's input by one turn of the event loop, then passes it on
/// and closes the channel.
///
/// A server may send its 101 response, a first frame and its FIN together — a front's reset
/// (`r`) and close, say. The upgrade removes the HTTP decoder, and NIO finishes that removal one
/// turn later (`ByteToMessageHandler` defers it with `execute`); only then does the decoder hand
/// on the bytes behind the 101, and only if it has not seen the end of input: told of the FIN
/// first, it drops them (`HTTPDecoder.decodeLast` forwards left-over bytes only without EOF).
/// Passed on one turn later, the end of input reaches a pipeline whose removal has finished and
/// whose frames have been delivered; before an upgrade it completes a refusal read to its end.
final class EndOfInputGuard: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .inputClosed? = event as? ChannelEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        let loop = context.eventLoop.assumeIsolated()
        loop.execute {
            context.fireUserInboundEventTriggered(event)
            context.close(promise: nil)
        }
    }
}

/// After the upgrade: whole WebSocket messages (fragments joined by NIOWebSocketFrameAggregator)
/// in; protocol v5 messages (count-prefixed frames joined by ``FrameAssembler``) out to the
/// session. Answers pings and close frames.
final class FrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let box: NIOLoopBoundBox<WebSocketSession>
    private var inbound: InboundFrames
    private var closing = false

    init(box: NIOLoopBoundBox<WebSocketSession>, maxMessageBytes: Int) {
        self.box = box
        self.inbound = InboundFrames(maxMessageBytes: maxMessageBytes)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !closing else { return }
        switch frame.opcode {
        case .text:
            do throws(InboundFrames.Refusal) {
                if let message = try inbound.text(utf8: frame.unmaskedData.readableBytesView) {
                    box.value.received(message, on: context.channel)
                }
            } catch {
                refuse(context: context, error)
            }
        case .binary:
            refuse(context: context, InboundFrames.binaryRefusal)
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode()
            let text = data.readString(length: data.readableBytes) ?? ""
            closing = true
            // Echo the code (RFC 6455 section 5.5.1), then close the socket.
            WebSocketSession.writeCloseFrame(code: code ?? .normalClosure, on: context.channel)
            box.value.fail(
                reason: CloseReason.serverClosed(code: code.map { UInt16(webSocketErrorCode: $0) }, text: text),
                on: context.channel)
        default:
            break  // pong: nothing to do; continuation: joined by the aggregator
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketFrameAggregator.Error {
            let code: WebSocketErrorCode =
                switch error {
                case .accumulatedFrameSizeIsTooLarge, .tooManyFragments: .messageTooLarge
                default: .protocolError
                }
            refuse(
                context: context,
                .init(
                    code: UInt16(webSocketErrorCode: code),
                    reason: "the server sent an unacceptable fragmented message: \(error)"))
        } else {
            // NIOWebSocketError: WebSocketProtocolErrorHandler already sent the close frame.
            closing = true
            box.value.fail(reason: CloseReason.failed("\(error)"), on: context.channel)
        }
    }

    /// Fails the connection with a close frame carrying the refusal's code.
    private func refuse(context: ChannelHandlerContext, _ refusal: InboundFrames.Refusal) {
        guard !closing else { return }
        closing = true
        WebSocketSession.writeCloseFrame(code: WebSocketErrorCode(codeNumber: Int(refusal.code)), on: context.channel)
        box.value.fail(reason: refusal.reason, on: context.channel)  // closes the socket
    }
}
#endif
