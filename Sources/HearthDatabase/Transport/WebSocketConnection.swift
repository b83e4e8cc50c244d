#if HEARTH_NIO_TRANSPORT
@_spi(HearthInternals) import HearthWire
import NIOCore
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
#endif
