@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOWebSocket

/// A WebSocket connection for a namespace another instance serves (``Redirects``): it gets
/// the reset naming that instance in place of the hello, then the close; what the client sends
/// meanwhile is dropped.
final class RedirectHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let message: ServerMessage

    init(message: ServerMessage) { self.message = message }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        for frame in FrameSplitter.frames(for: message.text) {
            let data = channel.allocator.buffer(string: frame)
            channel.write(WebSocketFrame(fin: true, opcode: .text, data: data), promise: nil)
        }
        WebSocketHandler.close(channel, status: 1000)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
