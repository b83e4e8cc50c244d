// What an open connection costs `hearth serve`, against a real server on a loopback port: the
// small first receive buffer still takes a frame hundreds of times its size, a WebSocket holds
// one share of the outbound ledger (not the HTTP handler's too), and the open-file limit is
// raised so the connection cap is not needlessly low. Every verdict is the server's own state
// or an answer's content — never how long anything took.
import Foundation
import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("hearth serve's footprint per connection", .serialized)
struct ConnectionFootprintTests {
    @Test(
        "a 600 KB value in one WebSocket frame, and one split in Firebase's frames, arrive whole through the 256-byte first buffer"
    )
    func largeFramesGrowTheReceiveBuffer() async throws {
        #expect(NetworkServer.receiveBuffers.initial == 256)
        let live = try await LiveServer()
        let writer = try live.client()
        _ = writer.receive()
        let reader = try live.client()
        _ = reader.receive()
        let big = String(repeating: "0123456789abcdef", count: 600_000 / 16)
        // One frame of the whole message: far past the first buffer and NIO's 64 KiB ceiling.
        try writer.sendFrame(ClientRequest.put(path: "/big/one", data: .string(big), hash: nil).message(number: 1))
        #expect(writer.response(1, timeout: 60).status == "ok")
        // Firebase's framing: a count, then frames of 16,384 characters.
        try writer.send(ClientRequest.put(path: "/big/split", data: .string(big + "!"), hash: nil).message(number: 2))
        #expect(writer.response(2, timeout: 60).status == "ok")
        for (n, (path, value)) in [(Path("big/one"), big), (Path("big/split"), big + "!")].enumerated() {
            try reader.send(ClientRequest.get(path: path, query: .default).message(number: n + 1))
            let got = reader.response(n + 1, timeout: 60)
            #expect(got.status == "ok")
            #expect(got.data == .string(value), "\(path) did not arrive whole")
        }
        writer.close()
        reader.close()
        try await live.stop()
    }

    @Test("an upgraded WebSocket holds one share of the outbound ledger; a REST answer takes one when it writes")
    func upgradedConnectionsHoldOneOutboundShare() async throws {
        let live = try await LiveServer()
        let members = { live.server.shared.outbound.members.withLock { $0.count } }
        var clients: [WebSocketTestClient] = []
        for _ in 0..<3 {
            let c = try live.client()
            _ = c.receive()  // the hello: the connection is upgraded and its sink made
            clients.append(c)
        }
        // Each share is made on the connection's event loop before the hello is written, so all
        // three are in the ledger once the hellos have arrived, and nothing else is.
        #expect(members() == 3, "a WebSocket kept the HTTP handler's share of the ledger too")
        let rest = try RawSocket(port: live.server.port)
        rest.write("GET /a.json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(rest.readResponse()?.status == 200)
        #expect(members() == 4, "a REST answer was written without a share of the ledger")
        for c in clients { c.close() }
        try await live.stop()
    }

    @Test("the soft open-file limit is raised to the hard one, and the connection cap follows it")
    func fileLimitIsRaised() throws {
        var limit = rlimit()
        try #require(getrlimit(NetworkServer.resourceNoFile, &limit) == 0)
        if limit.rlim_max != rlim_t.max, limit.rlim_max > 1_024 {
            // Lowered a little first (this process only), so the raise has something to do.
            var lowered = limit
            lowered.rlim_cur = limit.rlim_max - 1
            try #require(setrlimit(NetworkServer.resourceNoFile, &lowered) == 0)
            #expect(NetworkServer.openFileLimit() == Int(limit.rlim_max) - 1)
        }
        let raised = NetworkServer.raiseFileDescriptorLimit()
        var now = rlimit()
        try #require(getrlimit(NetworkServer.resourceNoFile, &now) == 0)
        #if os(Linux)
        #expect(now.rlim_cur == now.rlim_max)
        #endif
        #expect(raised == NetworkServer.openFileLimit())
        var limits = NetworkServer.Limits()
        limits.maxConnections = 100_000
        #expect(limits.connectionCap(fileLimit: 20_000) == 20_000 - limits.fileDescriptorReserve)
        #expect(limits.connectionCap(fileLimit: 1 << 20) == 100_000)
        #expect(NetworkServer.Limits().connectionCap(fileLimit: 1 << 20) == 10_000)
    }
}
