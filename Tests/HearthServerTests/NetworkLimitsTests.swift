// Attacks on the network side of `hearth serve`, against a real server on a loopback port with
// small limits: each test sends what a hostile client would and checks that the server closes,
// refuses or sheds it, by the server's own counters — never by how long anything took (the
// sockets' hang guards only stop a test that would otherwise wait forever).
import Foundation
import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import Testing

/// Waits until `condition` holds, for at most `seconds` (a hang guard, not a verdict).
func eventually(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

/// Runs blocking `work` on a thread of its own, so the task pool stays free meanwhile.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

@Suite("hearth serve's network limits under attack", .serialized)
struct NetworkLimitsTests {
    @Test("connections past the cap are closed at once; the open ones keep working, and a freed place is taken again")
    func connectionsPastTheCapAreShed() async throws {
        var limits = LiveServer.patient
        limits.maxConnections = 3
        let live = try await LiveServer(limits: limits)
        #expect(live.server.connectionLimit == 3)
        let ws = try live.client()
        _ = ws.receive()
        let idle = [try RawSocket(port: live.server.port), try RawSocket(port: live.server.port)]
        let extra = try RawSocket(port: live.server.port)
        let (bytes, closed) = extra.readUntilClosed()
        #expect(closed && bytes.isEmpty, "the fourth connection was not shed")
        #expect(live.server.shared.gate.shed.load(ordering: .relaxed) == 1)
        try ws.send(ClientRequest.put(path: "/a", data: .number(1), hash: nil).message(number: 1))
        #expect(ws.response(1).status == "ok", "an open connection stopped being served")
        _ = idle[0].write("GET /a.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(idle[0].readResponse()?.body == "1")
        #expect(eventually { live.server.shared.gate.open.load(ordering: .relaxed) == 2 })
        let again = try RawSocket(port: live.server.port)
        again.write("GET /a.json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(again.readResponse()?.status == 200, "the place a closed connection freed was not taken again")
        ws.close()
        try await live.stop()
    }

    @Test(
        "a request head that never ends, a silent connection and an idle keep-alive are closed after the head timeout")
    func slowHeadsAreClosed() async throws {
        var limits = LiveServer.patient
        limits.headTimeoutMs = 200
        let live = try await LiveServer(limits: limits)
        let slowloris = try RawSocket(port: live.server.port)
        slowloris.write("GET /a.json HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        let silent = try RawSocket(port: live.server.port)
        // A keep-alive connection left idle after its answer. Its request must beat the 200 ms
        // timer too; one that loses that race (a stalled test thread) is closed as a slow head,
        // and another is tried.
        var answered: RawSocket?
        for _ in 0..<50 where answered == nil {
            let socket = try RawSocket(port: live.server.port)
            socket.write("GET /a.json HTTP/1.1\r\nHost: x\r\n\r\n")
            if socket.readResponse()?.status == 200 { answered = socket }
        }
        let keepAlive = try #require(answered)
        let upgrading = try RawSocket(port: live.server.port)
        upgrading.write("GET /.ws?v=5 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")
        for (name, socket) in [
            ("slowloris", slowloris), ("silent", silent), ("keep-alive", keepAlive), ("upgrade", upgrading),
        ] {
            #expect(socket.readUntilClosed().closed, "the \(name) connection was left open")
        }
        #expect(eventually { live.server.shared.gate.open.load(ordering: .relaxed) == 0 })
        try await live.stop()
    }

    @Test("a chunked body that stops coming, and one that trickles below the minimum rate, are answered 408 and closed")
    func slowBodiesAreClosed() async throws {
        var limits = LiveServer.patient
        limits.bodyTimeoutMs = 200
        limits.minBodyBytesPerSecond = 1_000
        let live = try await LiveServer(limits: limits)
        let stopped = try RawSocket(port: live.server.port)
        stopped.write("PUT /a.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\"abc\r\n")
        let trickling = try RawSocket(port: live.server.port)
        trickling.write("PUT /b.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n\"")
        // One byte per 50 ms at most (a sleep only lengthens the gaps): 20 bytes/s, far below 1,000.
        let deadline = Date().addingTimeInterval(30)
        while !trickling.hasInput(withinMs: 50) && Date() < deadline { trickling.write("v") }
        for (name, socket) in [("stopped", stopped), ("trickling", trickling)] {
            let (bytes, closed) = socket.readUntilClosed()
            #expect(closed && String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 408"), "\(name)")
        }
        #expect(eventually { live.server.shared.bodies.used.load(ordering: .relaxed) == 0 })
        #expect(live.runtime.state.withLock { $0.core.data.isEmpty })
        try await live.stop()
    }

    @Test("a request head longer than the limit is refused and the connection closed")
    func longHeadIsRefused() async throws {
        var limits = LiveServer.patient
        limits.maxHeadBytes = 1_000
        let live = try await LiveServer(limits: limits)
        let socket = try RawSocket(port: live.server.port)
        socket.write("GET /a.json HTTP/1.1\r\nHost: x\r\nX-Long: " + String(repeating: "l", count: 2_000) + "\r\n\r\n")
        let (bytes, closed) = socket.readUntilClosed()
        #expect(closed && String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        try await live.stop()
    }

    @Test("a Content-Length over the limit is answered 413 before any of the body is sent, and the connection closed")
    func oversizedContentLengthIsRefusedAtTheHead() async throws {
        let live = try await LiveServer(maxRESTBodyBytes: 1_000)
        let socket = try RawSocket(port: live.server.port)
        socket.write("PUT /a.json HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n")
        #expect(socket.readResponse()?.status == 413)
        #expect(socket.readUntilClosed().closed)
        #expect(live.server.shared.bodies.used.load(ordering: .relaxed) == 0)
        try await live.stop()
    }

    @Test("a refused credential is answered 401 at the head, before the body is sent")
    func refusedCredentialIsAnsweredBeforeTheBody() async throws {
        let live = try await LiveServer()  // the body timeout is an hour: the answer can only be the credential's
        let socket = try RawSocket(port: live.server.port, hangGuard: 120)
        socket.write("PUT /a.json?auth=not-a-token HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        // The token check runs on the task pool: wait off it, so this test does not hold it up.
        #expect(await offThePool { socket.readResponse()?.status } == 401)
        #expect(socket.readUntilClosed().closed)
        #expect(eventually { live.server.shared.bodies.used.load(ordering: .relaxed) == 0 })
        try await live.stop()
    }

    @Test("bodies past the total buffer budget are answered 503 at their head; the budget is returned on completion")
    func bodyBudgetAnswers503() async throws {
        var limits = LiveServer.patient
        limits.maxBufferedBodyBytes = 1_500  // one body of 800 bytes, in a buffer of 1,024
        let live = try await LiveServer(limits: limits)
        let value = "\"" + String(repeating: "v", count: 798) + "\""
        let holder = try RawSocket(port: live.server.port)
        holder.write("PUT /held.json HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\n" + value.prefix(10))
        #expect(eventually { live.server.shared.bodies.used.load(ordering: .relaxed) == 1_024 })
        let refused = try RawSocket(port: live.server.port)
        refused.write("PUT /refused.json HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\n")
        #expect(refused.readResponse()?.status == 503)
        let chunked = try RawSocket(port: live.server.port)
        chunked.write("PUT /chunked.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n")
        chunked.write(Array(repeating: UInt8(ascii: " "), count: 600))
        #expect(chunked.readResponse()?.status == 503, "a chunked body past the budget was buffered")
        holder.write(String(value.dropFirst(10)))
        #expect(holder.readResponse()?.status == 200)
        #expect(eventually { live.server.shared.bodies.used.load(ordering: .relaxed) == 0 })
        let after = try RawSocket(port: live.server.port)
        after.write("PUT /after.json HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\n" + value)
        #expect(after.readResponse()?.status == 200, "the budget was not returned")
        try await live.stop()
    }

    /// A raw WebSocket connection to `live` and the outbound budget the server counts its
    /// writes against (waited for: the server registers it as the upgrade completes).
    static func webSocketWithItsBudget(_ live: LiveServer) throws -> (RawSocket, OutboundBudget) {
        let socket = try RawSocket(port: live.server.port)
        #expect(socket.upgradeToWebSocket() != nil)
        var budget: OutboundBudget?
        #expect(
            eventually {
                budget = live.runtime.state.withLock { s in
                    s.deliveries.values.compactMap { ($0.sink as? WebSocketHandler.Sink)?.budget }.first
                }
                return budget != nil
            })
        return (socket, try #require(budget))
    }

    @Test(
        "a pong is counted against the connection's outbound limit: past it, the connection is closed, the pong not queued"
    )
    func pongsAreCounted() async throws {
        let live = try await LiveServer()
        let (socket, budget) = try Self.webSocketWithItsBudget(live)
        // A limit of 0: any counted write is over it. A client that pings and never reads would
        // otherwise have the server queue its pongs without bound.
        budget.setLimit(0)
        socket.write(RawSocket.frame(Array("are you there".utf8), opcode: 0x9))
        let (bytes, closed) = socket.readUntilClosed()
        #expect(closed, "the connection stayed open past its outbound limit")
        #expect(!RawSocket.frames(in: bytes).contains { $0.opcode == 0xA }, "a pong was written past a limit of 0")
        try await live.stop()
    }

    @Test(
        "a write's ok is counted against the connection's outbound limit: past it, the connection is closed, the ok not queued"
    )
    func oksAreCounted() async throws {
        let live = try await LiveServer()
        let (socket, budget) = try Self.webSocketWithItsBudget(live)
        // A limit of 0: any counted write is over it. A client that writes and never reads would
        // otherwise have the server queue its oks without bound; a short ok is sent from the
        // commit thread without the delivery queue, so only the budget stands in its way.
        budget.setLimit(0)
        let put = ClientRequest.put(path: "/a", data: .number(1), hash: nil).message(number: 1)
        socket.write(RawSocket.frame(Array(put.utf8)))
        let (bytes, closed) = socket.readUntilClosed()
        #expect(closed, "the connection stayed open past its outbound limit")
        let texts = RawSocket.frames(in: bytes).filter { $0.opcode == 0x1 }.map {
            String(decoding: $0.payload, as: UTF8.self)
        }
        #expect(!texts.contains { $0.contains("\"r\":1") }, "an ok was written past a limit of 0: \(texts)")
        try await live.stop()
    }

    @Test("past the total outbound budget the slowest reader is disconnected; a reading listener is not")
    func slowestReaderIsDisconnected() async throws {
        var limits = LiveServer.patient
        limits.maxQueuedBytes = 2 << 20
        let live = try await LiveServer(limits: limits)
        var listeners: [WebSocketTestClient] = []
        for _ in 0..<3 {
            let listener = try live.client()
            _ = listener.receive()
            try listener.send(
                ClientRequest.listen(path: "/feed", query: .default, tag: nil, hash: "").message(number: 1))
            #expect(listener.response(1).status == "ok")
            listeners.append(listener)
        }
        let (stalledA, stalledB, reading) = (listeners[0], listeners[1], listeners[2])
        try await stalledA.channel.setOption(ChannelOptions.autoRead, value: false).get()
        try await stalledB.channel.setOption(ChannelOptions.autoRead, value: false).get()
        let writer = try live.client()
        _ = writer.receive()
        let chunk = JSONValue.string(String(repeating: "z", count: 100_000))
        var n = 1
        // 40 MB to each stalled reader, far past kernel buffers and the 2 MiB total.
        while n <= 400 && live.runtime.connectionCount == 4 {
            try writer.send(
                ClientRequest.put(path: Path(keys: ["feed", ChildKey("m\(n)")]), data: chunk, hash: nil)
                    .message(number: n))
            #expect(writer.response(n).status == "ok")
            n += 1
        }
        let ledger = live.server.shared.outbound
        #expect(live.runtime.connectionCount < 4, "no stalled reader was disconnected after \(n - 1) pushes")
        #expect(ledger.evictions.load(ordering: .relaxed) >= 1)
        #expect(!reading.isClosed && !writer.isClosed, "a connection that reads was disconnected")
        #expect(
            ledger.peak.load(ordering: .relaxed) <= ledger.limit + (1 << 20),
            "queued bytes went \(ledger.peak.load(ordering: .relaxed) - ledger.limit) past the total")
        try writer.send(ClientRequest.get(path: "/feed/m1", query: .default).message(number: 1_000))
        #expect(writer.response(1_000).status == "ok")
        for client in listeners + [writer] { client.close() }
        #expect(eventually { ledger.total.load(ordering: .relaxed) == 0 })
        try await live.stop()
    }
}
