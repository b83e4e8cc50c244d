import Foundation
@testable import HearthDatabase
import HearthModel
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOPosix
import Testing

/// Runs against the transport `Database` uses on the platform the tests run on: SwiftNIO's on
/// Linux, URLSession's on Apple platforms. Only through ``Transport``, so one set of tests holds
/// both to the same behaviour.
@Suite("the platform's transport against a real hearth serve", .serialized)
struct TransportTests {
    /// The SwiftNIO transport's own event loop, not NIO's shared singleton: the rest of the
    /// suite's clients run on the singleton's loops, and on a loaded machine their work there
    /// delayed these connections' events past the recorder's deadline.
    static let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let transport = TransportTests.makeTransport()

    /// This platform's transport with the given limits.
    static func makeTransport(
        connectTimeout: Duration = .seconds(10), maxMessageBytes: Int = InboundFrames.defaultMaxMessageBytes
    ) -> any Transport {
        #if HEARTH_NIO_TRANSPORT
        WebSocketTransport(
            group: loop, connectTimeout: .nanoseconds(Int64(connectTimeout / .nanoseconds(1))),
            maxMessageBytes: maxMessageBytes)
        #else
        URLSessionTransport(connectTimeout: connectTimeout, maxMessageBytes: maxMessageBytes)
        #endif
    }

    @Test("connect: .opened, then the server's hello; a listen gets its data push and ok")
    func helloAndListen() async throws {
        let server = try await TransportTestServer()
        let events = EventRecorder()
        let connection = transport.connect(to: server.endpoint, lastSessionID: nil, events: events.handler)
        #expect(await events.next() == .opened)
        guard case .message(let helloText)? = await events.next() else {
            Issue.record("no hello: \(events.all)")
            return
        }
        #expect(helloText.hasPrefix(#"{"t":"c","d":{"t":"h","#), "the hello as the server sent it: \(helloText)")
        guard case let .hello(_, host, session, _)? = try? ServerMessage.decode(helloText) else {
            Issue.record("not a hello: \(helloText)")
            return
        }
        #expect(host == "127.0.0.1:\(server.server.port)")
        #expect(!session.isEmpty)

        connection.send(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","h":""}}}"#)
        let listened = await events.response(1)
        #expect(listened.status == "ok")
        #expect(listened.pushes == [.set(path: "a", data: .null, tag: nil)])

        connection.close()
        let closed = await events.next()
        #expect(closed == .closed(reason: "closed by the client"), "\(String(describing: closed)); all: \(events.all)")
        #expect(events.overlaps.load(ordering: .relaxed) == 0, "events were delivered one at a time")
        try await server.stop()
    }

    @Test("a message over the server's 1 MiB frame limit goes both ways: split on send, reassembled on receipt")
    func largeMessages() async throws {
        let server = try await TransportTestServer()
        let events = EventRecorder()
        let connection = transport.connect(to: server.endpoint, lastSessionID: nil, events: events.handler)
        #expect(await events.next() == .opened)
        _ = await events.next()  // hello
        // 1.2 MB of UTF-8 (800,000 UTF-16 units): the server refuses any frame over 1 MiB, so
        // this put only succeeds if the transport split it into 16,384-unit frames.
        let big = String(repeating: "aé", count: 400_000)
        connection.send(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/big","d":""# + big + #""}}}"#)
        #expect(await events.response(1).status == "ok")
        connection.send(#"{"t":"d","d":{"r":2,"a":"g","b":{"p":"/big","q":{}}}}"#)
        // The answer comes split (the server splits everything over 16,384 units) and must
        // arrive as one message.
        let got = await events.response(2)
        #expect(got.status == "ok")
        #expect(got.data?.stringValue == big)
        #expect(got.pushes.isEmpty)
        #expect(try server.store.serverValue(at: "big") == .string(big))
        connection.close()
        try await server.stop()
    }

    @Test("the server stops: .closed exactly once, nothing after it; send afterwards is ignored")
    func serverStops() async throws {
        let server = try await TransportTestServer()
        let events = EventRecorder()
        let connection = transport.connect(to: server.endpoint, lastSessionID: nil, events: events.handler)
        #expect(await events.next() == .opened)
        _ = await events.next()  // hello
        try await server.stop()
        guard case .closed(let reason)? = await events.next() else {
            Issue.record("no .closed: \(events.all)")
            return
        }
        #expect(!reason.isEmpty)
        connection.send(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","h":""}}}"#)
        connection.close()
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.closedCount == 1)
        #expect(events.all.count == 3, "opened, hello, closed: \(events.all)")
    }

    @Test("connection refused: .closed and nothing else")
    func refused() async throws {
        let port = try await unusedPort()
        let events = EventRecorder()
        let endpoint = ServerEndpoint(secure: false, host: "127.0.0.1", port: port, namespace: "test")
        let connection = transport.connect(to: endpoint, lastSessionID: nil, events: events.handler)
        guard case .closed(let reason)? = await events.next() else {
            Issue.record("no .closed: \(events.all)")
            return
        }
        #expect(reason.contains("could not connect"), "\(reason)")
        connection.close()
        connection.send("{}")
        try await Task.sleep(for: .milliseconds(200))
        #expect(events.all.count == 1, "\(events.all)")
    }

    @Test("close() twice and send after close: one .closed, nothing sent; close before open: .closed only")
    func closeIsIdempotent() async throws {
        let server = try await TransportTestServer()
        let events = EventRecorder()
        let connection = transport.connect(to: server.endpoint, lastSessionID: nil, events: events.handler)
        #expect(await events.next() == .opened)
        _ = await events.next()  // hello
        #expect(server.runtime.connectionCount == 1)
        connection.close()
        connection.close()
        connection.send(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/after","d":true}}}"#)
        #expect(await events.next() == .closed(reason: "closed by the client"))
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.all.count == 3, "\(events.all)")
        #expect(server.runtime.connectionCount == 0, "the server saw the socket close")
        #expect(try server.store.serverValue(at: "after").isEmpty, "the put after close was not sent")

        try await server.stop()

        // Closed before it opens: against a listener that accepts and never answers the upgrade,
        // so the handshake cannot win the race with close() however the threads are scheduled.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let silent = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(silent.localAddress?.port)
        let early = EventRecorder()
        let second = transport.connect(
            to: ServerEndpoint(secure: false, host: "127.0.0.1", port: port, namespace: "test"), lastSessionID: nil,
            events: early.handler)
        second.close()
        #expect(await early.next() == .closed(reason: "closed by the client"))
        try await Task.sleep(for: .milliseconds(300))
        #expect(early.all.count == 1, "no .opened after close: \(early.all)")
        try await silent.close()
        try await group.shutdownGracefully()
    }

    @Test("a message over maxMessageBytes closes the connection instead of being buffered")
    func tooLarge() async throws {
        let server = try await TransportTestServer()
        let writerEvents = EventRecorder()
        let writer = transport.connect(to: server.endpoint, lastSessionID: nil, events: writerEvents.handler)
        // 40,000 characters: the server sends it as a count frame and three segments of at most
        // 16,384, each under the 20,000-byte limit, so the refusal comes from reassembly.
        let big = String(repeating: "z", count: 40_000)
        let small = Self.makeTransport(maxMessageBytes: 20_000)
        let events = EventRecorder()
        let reader = small.connect(to: server.endpoint, lastSessionID: nil, events: events.handler)
        #expect(await events.next() == .opened)
        _ = await events.next()  // hello
        #expect(await writerEvents.next() == .opened)
        _ = await writerEvents.next()  // hello
        writer.send(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/big","d":""# + big + #""}}}"#)
        // The set must have landed before the reader listens (a fixed sleep was too short on a
        // loaded machine: the listen then answered null and nothing was too large).
        #expect(await writerEvents.response(1).status == "ok")
        reader.send(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/big","h":""}}}"#)
        guard case .closed(let reason)? = await events.next() else {
            Issue.record("no .closed: \(events.all)")
            return
        }
        #expect(reason.contains("too large"), "\(reason)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.closedCount == 1)
        #expect(server.runtime.connectionCount == 1, "the reader's socket is closed; the writer's is not")
        writer.close()
        try await server.stop()
    }

    @Test("a server that accepts TCP but never answers the upgrade: the connect timeout closes it")
    func connectTimeout() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(silent.localAddress?.port)
        let events = EventRecorder()
        let quick = Self.makeTransport(connectTimeout: .milliseconds(300))
        let endpoint = ServerEndpoint(secure: false, host: "127.0.0.1", port: port, namespace: "test")
        _ = quick.connect(to: endpoint, lastSessionID: nil, events: events.handler)
        guard case .closed(let reason)? = await events.next() else {
            Issue.record("no .closed: \(events.all)")
            return
        }
        #expect(reason.contains("timed out"), "\(reason)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(events.all.count == 1)
        try await silent.close()
    }
}
