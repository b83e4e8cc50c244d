@_spi(HearthInternals) import HearthWire
import NIOCore

/// One WebSocket connection, the only handler in its pipeline once upgraded: it cuts the bytes
/// received into frames (``FrameReader``), joins fragmented messages (RFC 6455 §5.4), hands each
/// text message that is valid UTF-8 to the ``ServerRuntime`` and writes the runtime's messages
/// back as frames (``FrameWriter``). NIO's frame decoder, encoder and error handler, and a
/// meter of its own ahead of the decoder, were each an object and a pipeline context that every
/// idle connection held; one handler doing their work keeps an idle connection small.
///
/// What it refuses, with the close status RFC 6455 §7.4.1 gives: a text message that is not
/// UTF-8 (1007; it never reaches the core), a binary message (1003: protocol v5 is text), a
/// frame or message over ``NetworkServer/maxFrameBytes`` or 1,024 fragments (1009), fragments
/// out of order and malformed control frames (1002), a frame or fragment the server's frame
/// budget cannot take (1013).
///
/// **The frame budget.** Before received bytes are kept, the payload length each frame's header
/// announces is reserved from the server's total (``NetworkShared/frames``), in the buffer size
/// that holds it — the bytes of a frame not yet whole wait in the reader — and returned once the
/// frame is through; a frame the budget cannot take closes the connection (1013) before any of it
/// is kept.
final class WebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let maxFragments = 1_024

    let runtime: ServerRuntime
    let shared: NetworkShared
    let id: ConnectionID
    var reader = FrameReader(maxPayloadBytes: NetworkServer.maxFrameBytes)
    /// Follows the frame boundaries in the bytes received, ahead of ``reader``, for the budget.
    var scanner = FrameBoundaryScanner(maxPayloadBytes: NetworkServer.maxFrameBytes)
    /// Reserved from the frame budget for the frame the reader is waiting to complete.
    var buffering = 0
    /// A fragmented message being received: its opcode and payload so far (reserved from the
    /// frame budget).
    var fragments: (opcode: UInt8, data: ByteBuffer, count: Int)?
    var reserved = 0
    /// Closing (refused, or the client's close frame came): later frames are dropped unread.
    var closing = false
    /// This connection's share of the outbound ledger, left when the handler goes.
    var budget: OutboundBudget?

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
        let budget: OutboundBudget

        func send(_ text: String) {
            let channel = budget.channel
            for part in FrameSplitter.frames(for: text) {
                let frame = FrameWriter.frame(FrameWriter.text, text: part, allocator: channel.allocator)
                guard budget.write(frame, bytes: frame.capacity) else { return }
            }
        }

        func close() { WebSocketHandler.close(budget.channel, status: 1000) }

        /// NIO's `autoRead` off: no more reads from the socket once the one under way ends.
        func setReading(_ reading: Bool) {
            let channel = budget.channel
            channel.onEventLoop { try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: reading) }
        }
    }

    /// Sends a close frame with `status`, then closes the connection.
    static func close(_ channel: any Channel, status: UInt16) {
        channel.onEventLoop {
            channel.writeAndFlush(FrameWriter.close(status: status, allocator: channel.allocator)).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The ledger is left in `handlerRemoved`, which NIO calls when the connection closes:
        // no callback on the channel's close future for every connection.
        let budget = OutboundBudget(
            channel: context.channel, ledger: shared.outbound, limit: shared.maxQueuedBytesPerConnection,
            leavesOnClose: false)
        self.budget = budget
        runtime.connected(id, sink: Sink(budget: budget), host: requestHost, lastSession: lastSession)
    }

    func channelInactive(context: ChannelHandlerContext) {
        releaseAll()
        leaveLedger()
        runtime.closed(id)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releaseAll()
        leaveLedger()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        var bytes = unwrapInboundIn(data)
        guard meter(bytes) else { return refuse(context, status: 1013) }
        reader.append(&bytes)
        while !closing {
            do throws(FrameReader.Refused) {
                guard let frame = try reader.next() else { break }
                receive(context, frame)
            } catch {
                return refuse(context, status: error.status)
            }
        }
    }

    /// Reserves the buffer for the frame in progress after `bytes`, as its header announces it,
    /// before the reader keeps them; false when the budget cannot take it. A header announcing
    /// more than the limit reserves nothing: the reader refuses that frame when it reaches it.
    func meter(_ bytes: ByteBuffer) -> Bool {
        var tooLarge = false
        do {
            try bytes.withUnsafeReadableBytes { raw in try scanner.scan(raw) }
        } catch {
            tooLarge = true
        }
        // The reader's buffer for the frame: its header (at most 14 bytes) and payload, in a
        // power of two.
        let wanted = tooLarge ? 0 : scanner.announced.map { ByteBudget.bufferSize($0 + 14) } ?? 0
        if wanted > buffering {
            guard shared.frames.reserve(wanted - buffering) else { return false }
        } else if wanted < buffering {
            shared.frames.release(buffering - wanted)
        }
        buffering = wanted
        return true
    }

    func receive(_ context: ChannelHandlerContext, _ frame: FrameReader.Frame) {
        switch frame.opcode {
        case 0x1, 0x2:
            guard fragments == nil else { return refuse(context, status: 1002) }
            if frame.fin { return deliver(context, frame.opcode, frame.payload) }
            fragments = (frame.opcode, context.channel.allocator.buffer(capacity: 0), 0)
            append(context, frame)
        case 0x0:
            guard fragments != nil else { return refuse(context, status: 1002) }
            append(context, frame)
        case 0x9:
            // Counted like every other write: a client that pings and never reads would otherwise
            // queue pongs in the server without bound.
            let pong = FrameWriter.frame(FrameWriter.pong, payload: frame.payload, allocator: context.channel.allocator)
            budget?.write(pong, bytes: pong.capacity)
        case FrameWriter.close:
            closing = true
            WebSocketHandler.close(context.channel, status: 1000)
        case FrameWriter.pong:
            break
        default:
            refuse(context, status: 1002)
        }
    }

    func append(_ context: ChannelHandlerContext, _ frame: FrameReader.Frame) {
        guard var message = fragments else { return }
        fragments = nil
        var payload = frame.payload
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
            releaseFragments()
            deliver(context, message.opcode, message.data)
        } else {
            fragments = message
        }
    }

    /// One whole message: text that is UTF-8 goes to the runtime; anything else closes.
    func deliver(_ context: ChannelHandlerContext, _ opcode: UInt8, _ data: ByteBuffer) {
        guard opcode == FrameWriter.text else { return refuse(context, status: 1003) }
        guard let text = String(validating: data.readableBytesView, as: UTF8.self) else {
            return refuse(context, status: 1007)
        }
        runtime.received(id, text)
    }

    func refuse(_ context: ChannelHandlerContext, status: UInt16) {
        closing = true
        releaseAll()
        WebSocketHandler.close(context.channel, status: status)
    }

    func releaseFragments() {
        fragments = nil
        shared.frames.release(reserved)
        reserved = 0
    }

    /// Returns every reservation from the frame budget (the connection is closing or closed).
    func releaseAll() {
        releaseFragments()
        reader.clear()
        shared.frames.release(buffering)
        buffering = 0
    }

    /// Stops counting this connection in the outbound ledger's ranking (it is closed).
    func leaveLedger() {
        if let budget { shared.outbound.leave(budget) }
        budget = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
