// A push or a close that reaches a connection after its event loop has shut down — a server
// stopping while a connection's delivery queue still holds a push — is dropped before it is
// handed to the loop: a write's promise made off the loop would leak with the dropped task
// (NIO's debug builds trap on that), and a task given to a shut-down loop is something NIO warns
// of and means to trap on.

import NIOCore
import NIOPosix
import Testing

@_spi(HearthInternals) @testable import HearthServer

@Suite("Network: writes after the event loop has shut down")
struct LateWriteTests {
    @Test("a push and a WebSocket close after the loop shut down are dropped, not a trap")
    func lateWrites() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
        let address = try #require(listener.localAddress)
        let client = try ClientBootstrap(group: group).connect(to: address).wait()
        let budget = OutboundBudget(channel: client, ledger: OutboundLedger(limit: 1 << 20), limit: 1 << 20)
        try group.syncShutdownGracefully()
        // The loop closed the channel before it stopped: the write is not handed to it, and
        // the bytes counted for it are returned at once (nothing would ever report them done).
        #expect(!client.isActive)
        #expect(!budget.write(ByteBuffer(string: "late"), bytes: 4), "a write to a closed connection was handed on")
        WebSocketHandler.close(client, status: 1000)
        #expect(budget.queued == 0)
        #expect(budget.ledger.total.load(ordering: .relaxed) == 0)
    }
}
