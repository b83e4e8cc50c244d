// A push or a close that reaches a connection after its event loop has shut down — a server
// stopping while a connection's delivery queue still holds a push — is dropped. It made its
// write's promise off the loop first, so the dropped write leaked the promise, and NIO's debug
// builds trap on that ("leaking promise created at Budgets.swift"): a suite run crashed so.

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
        #expect(budget.write(ByteBuffer(string: "late"), bytes: 4), "within the budget: handed to the loop")
        WebSocketHandler.close(client, status: 1000)
        // The bytes were never written: the budget still counts them (the connection is gone).
        #expect(budget.queued == 4)
    }
}
