// The network floor for writes: a raw loopback WebSocket echo server on the same stack (NIO,
// 2 threads), `connections` clients each sending the bytes of one put and waiting for them to
// come back, one at a time, for min(`--seconds`, 3).
import Dispatch
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.opcode == .text else { return }
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: frame.unmaskedData)), promise: nil)
    }
}

/// Round trips per second, and CPU µs per round trip of the echo server's two threads and of
/// the whole process (its clients included).
func echoRoundTrips(connections: Int) async throws -> (perSecond: Double, serverMicros: Double, processMicros: Double) {
    let before = threadNames()
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let upgrader = NIOWebSocketServerUpgrader(
        shouldUpgrade: { ch, _ in ch.eventLoop.makeSucceededFuture(HTTPHeaders()) },
        upgradePipelineHandler: { ch, _ in ch.eventLoop.makeCompletedFuture { try ch.pipeline.syncOperations.addHandler(EchoHandler()) } })
    let channel = try await ServerBootstrap(group: group)
        .childChannelInitializer { ch in
            ch.eventLoop.makeCompletedFuture {
                try ch.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
        }
        .bind(host: "127.0.0.1", port: 0).get()
    let port = channel.localAddress!.port!
    let clients = try (0..<connections).map { _ in try WebSocketTestClient(port: port, group: clientLoop(), path: "/") }
    let count = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let message = ClientRequest.put(path: "w/c0/k1", data: 1, hash: nil).message(number: 1)
    let serverThreads = newThreads(since: before, prefixes: ["NIO-ELT"])
    let cpu0 = cpuSeconds(serverThreads), process0 = processCPUSeconds()
    let start = now()
    let threads = Threads(connections) { i in
        let c = clients[i]
        while !stop.load(ordering: .relaxed) {
            try! c.sendFrame(message)
            guard c.inbox.next(timeout: 5) != nil else { fatalError("echo lost") }
            count.add(1, ordering: .relaxed)
        }
    }
    try await Task.sleep(for: .seconds(min(options.seconds, 3)))
    stop.store(true, ordering: .relaxed)
    threads.join()
    let rate = Double(count.load(ordering: .relaxed)) / (now() - start)
    let cpu = cpuSeconds(serverThreads) - cpu0, process = processCPUSeconds() - process0
    for c in clients { c.close() }
    try await channel.close()
    try await group.shutdownGracefully()
    let trips = Double(max(1, count.load(ordering: .relaxed)))
    return (rate, 1e6 * cpu / trips, 1e6 * process / trips)
}
