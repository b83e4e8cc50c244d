import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOPosix
import Testing

/// A real server on a loopback port over a Hearth store in a temporary directory.
final class LiveServer {
    let directory: String
    let store: AuthoritativeStore
    let runtime: ServerRuntime
    let server: NetworkServer
    let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    init(
        emulator: Bool = true, idleTimeoutMs: Int64 = 120_000, maxBuffered: Int = 64 << 20, directory: String? = nil,
        limits: NetworkServer.Limits = LiveServer.patient, maxRESTBodyBytes: Int = 64 << 20,
        appCheckVerifier: (any TokenVerifier)? = nil, configure: (inout ServerCore.Configuration) -> Void = { _ in }
    ) async throws {
        self.directory =
            directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)").path
        let opened = try AuthoritativeStore.open(directory: self.directory)
        store = opened.store
        var c = ServerCore.Configuration()
        c.emulator = emulator
        c.idleTimeoutMs = idleTimeoutMs
        c.maxBufferedBytesPerConnection = maxBuffered
        c.maxRESTBodyBytes = maxRESTBodyBytes
        configure(&c)
        runtime = try ServerRuntime(
            store: opened, configuration: c,
            verifier: try await FirebaseTokenVerifier(secret: String(repeating: "k", count: 32), emulator: emulator),
            appCheckVerifier: appCheckVerifier)
        server = try await NetworkServer.start(
            host: "127.0.0.1", port: 0, runtime: runtime, limits: limits, threads: 2)
    }

    /// The default limits but for the head and body timeouts, an hour: a test that does not
    /// test them cannot lose a race against them on a loaded machine.
    static let patient: NetworkServer.Limits = {
        var limits = NetworkServer.Limits()
        limits.headTimeoutMs = 3_600_000
        limits.bodyTimeoutMs = 3_600_000
        return limits
    }()

    func client() throws -> WebSocketTestClient { try WebSocketTestClient(port: server.port, group: clientGroup) }

    func stop(removing: Bool = true) async throws {
        try await server.stop()
        try store.close()
        try await clientGroup.shutdownGracefully()
        if removing { try? FileManager.default.removeItem(atPath: directory) }
    }
}

@Suite("hearth serve over real sockets: WebSocket protocol v5 in raw frames", .serialized)
struct NetworkServerTests {
    @Test(
        "hello, listen, put from another connection, split frames both ways, ping/pong, keepalive, durable after restart"
    )
    func endToEnd() async throws {
        let live = try await LiveServer()
        let a = try live.client()
        guard case let .hello(_, host, _, _)? = a.receive() else { Issue.record("no hello"); return }
        #expect(host == "127.0.0.1:\(live.server.port)", "h names the bound port, so clients reconnect there")
        try a.send(ClientRequest.listen(path: "/room", query: .default, tag: nil, hash: "").message(number: 1))
        let listened = a.response(1)
        #expect(listened.status == "ok")
        #expect(listened.pushes == [.set(path: "room", data: .null, tag: nil)])

        let b = try live.client()
        _ = b.receive()
        try b.sendFrame("0")  // keepalive: ignored
        try b.sendFrame(#"{"t":"c","d":{"t":"p","d":{}}}"#)
        #expect(b.receive() == .pong)
        // A 40 kB string: the client splits it into a count frame and segments.
        let big = String(repeating: "é", count: 40_000)
        try b.send(ClientRequest.put(path: "/room/big", data: .string(big), hash: nil).message(number: 1))
        #expect(b.response(1).status == "ok")
        // The listener gets it, reassembled from the server's own split frames.
        let pushed = a.receive()
        #expect(pushed == .set(path: "room/big", data: .string(big), tag: nil))
        let frames = a.inbox.frames.withLock { $0 }
        #expect(
            frames.contains("3") || frames.contains("4") || frames.contains("5"),
            "the server split its push into frames after a count")
        a.close()
        b.close()
        let dir = live.directory
        try await live.stop(removing: false)
        let reopened = try Store.open(directory: dir)
        #expect(try reopened.serverValue(at: "room/big") == .string(big))
        try reopened.close()
        try? FileManager.default.removeItem(atPath: dir)
    }

    @Test("a dropped connection's onDisconnect runs: presence as the documentation describes it")
    func presence() async throws {
        let live = try await LiveServer()
        let watcher = try live.client()
        _ = watcher.receive()
        try watcher.send(
            ClientRequest.listen(path: "/status/u1", query: .default, tag: nil, hash: "").message(number: 1))
        #expect(watcher.response(1).status == "ok")
        let user = try live.client()
        _ = user.receive()
        try user.send(
            ClientRequest.onDisconnectPut(
                path: "/status/u1", data: json(#"{"state":"offline","at":{".sv":"timestamp"}}"#)
            ).message(number: 1))
        #expect(user.response(1).status == "ok")
        try user.send(
            ClientRequest.put(path: "/status/u1", data: json(#"{"state":"online"}"#), hash: nil).message(number: 2))
        #expect(user.response(2).status == "ok")
        #expect(watcher.receive() == .set(path: "status/u1", data: json(#"{"state":"online"}"#), tag: nil))
        user.close()  // the socket closes: the server runs the onDisconnect
        guard case let .set(_, data, _)? = watcher.receive() else { Issue.record("no offline push"); return }
        #expect(data["state"] == "offline")
        #expect((data["at"]?.doubleValue ?? 0) > 1_600_000_000_000)
        watcher.close()
        try await live.stop()
    }

    @Test("REST and WebSocket share one port and one database")
    func restAndWebSocket() async throws {
        let live = try await LiveServer()
        let ws = try live.client()
        _ = ws.receive()
        try ws.send(ClientRequest.listen(path: "/x", query: .default, tag: nil, hash: "").message(number: 1))
        _ = ws.response(1)
        let url = URL(string: "http://127.0.0.1:\(live.server.port)/x.json")!
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.httpBody = Data(#"{"from":"rest"}"#.utf8)
        request.timeoutInterval = 600  // the answer is under test, not its latency on a loaded machine
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == #"{"from":"rest"}"#)
        #expect(ws.receive() == .set(path: "x", data: json(#"{"from":"rest"}"#), tag: nil))
        ws.close()
        try await live.stop()
    }

    @Test("a client that does not read its socket is disconnected, not buffered without bound")
    func slowReader() async throws {
        let live = try await LiveServer(maxBuffered: 1 << 20)
        let stalled = try live.client()
        _ = stalled.receive()
        try stalled.send(ClientRequest.listen(path: "/feed", query: .default, tag: nil, hash: "").message(number: 1))
        _ = stalled.response(1)
        try await stalled.channel.setOption(ChannelOptions.autoRead, value: false).get()
        let writer = try live.client()
        _ = writer.receive()
        let chunk = JSONValue.string(String(repeating: "z", count: 100_000))
        var n = 1
        // Well past socket buffers plus the 1 MiB budget: 40 MB pushed to a reader that reads nothing.
        while n <= 400 && live.runtime.connectionCount == 2 {
            try writer.send(
                ClientRequest.put(path: Path(keys: ["feed", ChildKey("m\(n)")]), data: chunk, hash: nil).message(
                    number: n))
            #expect(writer.response(n).status == "ok")
            n += 1
        }
        #expect(
            live.runtime.connectionCount == 1, "the stalled reader is still connected after \(n - 1) pushes of 100 kB")
        writer.close()
        stalled.close()
        try await live.stop()
    }
}
