@_spi(HearthInternals) import HearthWire
import NIOCore

/// A WebSocket connection for a namespace another instance serves (``Redirects``): it gets
/// the reset naming that instance in place of the hello, then the close; what the client sends
/// meanwhile is dropped unread.
final class RedirectHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let message: ServerMessage

    init(message: ServerMessage) { self.message = message }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        for part in FrameSplitter.frames(for: message.text) {
            channel.write(FrameWriter.frame(FrameWriter.text, text: part, allocator: channel.allocator), promise: nil)
        }
        WebSocketHandler.close(channel, status: 1000)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
