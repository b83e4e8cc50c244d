import Foundation
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Testing

@testable import HearthDatabase

/// A server that answers the upgrade with a reset and closes the socket in the same breath —
/// the frame and the FIN leave together, with no close frame — the way a front that redirects
/// may. Every byte the server sent before its FIN must still reach the client.
@Suite("the platform's transport: a reset followed at once by the close", .serialized)
struct TransportResetTests {
    static let reset = ServerMessage.reset(host: "127.0.0.1:9")

    /// A WebSocket server whose connections get ``reset`` and are closed at once.
    static func startAbruptFront() async throws -> any Channel {
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: 1 << 20,
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    let data = channel.allocator.buffer(string: Self.reset.text)
                    channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: data), promise: nil)
                    channel.close(promise: nil)
                }
            })
        return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    /// Connects `attempts` times and checks each connection reported exactly `.opened`, the
    /// reset, `.closed`.
    static func eachAttemptDeliversTheReset(
        _ endpoint: ServerEndpoint, _ reset: ServerMessage, attempts: Int = 50
    ) async {
        let transport = TransportTests.makeTransport()
        for attempt in 0..<attempts {
            let events = EventRecorder()
            let connection = transport.connect(to: endpoint, lastSessionID: nil, events: events.handler)
            let seen = [await events.next(), await events.next(), await events.next()]
            let got = seen.map { event -> String in
                switch event {
                case .opened?: "opened"
                case .message(let text)?: (try? ServerMessage.decode(text)) == reset ? "reset" : "message \(text)"
                case .closed?: "closed"
                case nil: "nothing"
                }
            }
            #expect(got == ["opened", "reset", "closed"], "attempt \(attempt): \(events.all)")
            connection.close()
            if got != ["opened", "reset", "closed"] { return }
        }
    }

    @Test("a raw server: the reset, then the FIN with no close frame — delivered on every attempt")
    func abruptServer() async throws {
        let server = try await Self.startAbruptFront()
        let endpoint = ServerEndpoint(
            secure: false, host: "127.0.0.1", port: server.localAddress?.port ?? 0, namespace: "test")
        await Self.eachAttemptDeliversTheReset(endpoint, Self.reset)
        try await server.close()
    }

    @Test("hearth serve --redirect: the reset, the close frame and the FIN — delivered on every attempt")
    func redirectingFront() async throws {
        let front = try await TransportTestServer(redirects: try Redirects(arguments: ["test=127.0.0.1:9"]))
        await Self.eachAttemptDeliversTheReset(front.endpoint, .reset(host: "127.0.0.1:9"))
        try await front.stop()
    }
}
