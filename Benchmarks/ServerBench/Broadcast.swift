// The network floor for fan-out: a raw NIO WebSocket server with the same pipeline as
// `NetworkServer` (2 threads, TCP_NODELAY, the same upgrader and frame aggregator) that, when any
// connection sends a text frame, writes one fixed push — the bytes of the `d` the real server
// sends for the fan-out put — to every other connection and then one `ok` to the sender.
// No protocol parsing, no store, no fsync: what delivering the same bytes to N sockets costs.
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

final class Peers: Sendable {
    let channels = Mutex<[ObjectIdentifier: any Channel]>([:])
}

final class BroadcastHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    let peers: Peers
    let push: ByteBuffer
    let ok: ByteBuffer

    init(peers: Peers, push: String, ok: String) {
        self.peers = peers
        self.push = ByteBuffer(string: push)
        self.ok = ByteBuffer(string: ok)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        peers.channels.withLock { $0[ObjectIdentifier(channel)] = channel }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let id = ObjectIdentifier(context.channel)
        _ = peers.channels.withLock { $0.removeValue(forKey: id) }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard unwrapInboundIn(data).opcode == .text else { return }
        let me = ObjectIdentifier(context.channel)
        let others = peers.channels.withLock { $0.filter { $0.key != me }.map(\.value) }
        for ch in others { ch.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: push), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: ok)), promise: nil)
    }
}

/// A running broadcast server; `stop()` closes it.
struct BroadcastServer {
    let port: Int
    let channel: any Channel
    let group: MultiThreadedEventLoopGroup

    static func start(push: String, ok: String) async throws -> BroadcastServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let peers = Peers()
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: 1 << 20, automaticErrorHandling: true,
            shouldUpgrade: { ch, _ in ch.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { ch, _ in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.addHandler(
                        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1024, maxAccumulatedFrameSize: 1 << 20))
                    try ch.pipeline.syncOperations.addHandler(BroadcastHandler(peers: peers, push: push, ok: ok))
                }
            })
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { ch in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return BroadcastServer(port: channel.localAddress!.port!, channel: channel, group: group)
    }

    func stop() async throws {
        try await channel.close()
        try await group.shutdownGracefully()
    }
}
