import Foundation
@_spi(HearthInternals) import Hearth
import HearthLog
@_spi(HearthInternals) @testable import HearthServer
import HearthTesting
@_spi(HearthInternals) import HearthWire
import Synchronization
import Testing

/// A sink that records what it is sent, and can be made to block (a connection whose messages
/// are slow to render or to send).
final class RecordingSink: ConnectionSink {
    let texts = Mutex<[String]>([])
    let closed = Atomic<Bool>(false)
    let arrived = DispatchSemaphore(value: 0)
    let gate = Mutex<DispatchSemaphore?>(nil)

    func send(_ text: String) {
        if let gate = gate.withLock({ $0 }) { gate.wait() }
        texts.withLock { $0.append(text) }
        arrived.signal()
    }

    func close() {
        closed.store(true, ordering: .relaxed)
        arrived.signal()
    }

    /// Every ``ConnectionSink/setReading(_:)`` call, in order.
    let reading = Mutex<[Bool]>([])

    func setReading(_ on: Bool) {
        reading.withLock { $0.append(on) }
        arrived.signal()
    }

    var messages: [ServerMessage] { texts.withLock { $0 }.compactMap { try? ServerMessage.decode($0) } }

    /// Waits (a hang guard, not a verdict) until a message satisfies `match`; returns it.
    @discardableResult
    func wait(timeout: Double = 30, for match: (ServerMessage) -> Bool) -> ServerMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let m = messages.first(where: match) { return m }
            _ = arrived.wait(timeout: .now() + .milliseconds(100))
        }
        return nil
    }

    func response(_ number: Int, timeout: Double = 30) -> (status: String, data: JSONValue?)? {
        guard
            case let .response(_, status, data)? = wait(
                timeout: timeout,
                for: {
                    if case .response(number, _, _) = $0 { true } else { false }
                })
        else { return nil }
        return (status, data)
    }

    func waitClosed(timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !closed.load(ordering: .relaxed) && Date() < deadline {
            _ = arrived.wait(timeout: .now() + .milliseconds(100))
        }
        return closed.load(ordering: .relaxed)
    }
}

/// A clock the test moves.
final class TestClock: Sendable {
    let ms = Atomic<Int64>(1_700_000_000_000)
    var now: @Sendable () -> Int64 { { [self] in ms.load(ordering: .relaxed) } }
    func advance(_ by: Int64) { ms.add(by, ordering: .relaxed) }
}

/// ``ServerRuntime`` without sockets: connections are recording sinks, the store is on the
/// simulated file system.
struct RuntimeRig {
    let fs = SimulatedFileSystem(seed: 7)
    let clock = TestClock()
    let runtime: ServerRuntime
    var options: AuthoritativeStore.Options

    init(configure: (inout ServerCore.Configuration) -> Void = { _ in }) async throws {
        var options = AuthoritativeStore.Options()
        options.fileSystem = fs
        options.segmentSize = 1 << 20
        self.options = options
        var c = ServerCore.Configuration()
        c.emulator = true
        configure(&c)
        let store = try AuthoritativeStore.open(directory: "/server", options: options)
        let reopenOptions = options
        runtime = try ServerRuntime(
            store: store, configuration: c, verifier: try await FirebaseTokenVerifier(secret: nil, emulator: true),
            clock: clock.now,
            reopen: { readOnly throws(StoreError) in
                var o = reopenOptions
                o.readOnly = readOnly
                return try AuthoritativeStore.open(directory: "/server", options: o)
            })
    }

    func connect(_ n: UInt64) -> RecordingSink {
        let sink = RecordingSink()
        runtime.connected(ConnectionID(n), sink: sink)
        _ = sink.wait { if case .hello = $0 { true } else { false } }
        return sink
    }

    func send(_ n: UInt64, _ number: Int, _ request: ClientRequest) {
        runtime.received(ConnectionID(n), request.message(number: number))
    }
}

@Suite("Server runtime: one connection cannot stall the others; a full disk suspends writes, not reads", .serialized)
struct RuntimeTests {
    @Test("a connection whose pushes are stuck does not delay another connection's answers")
    func stuckConnectionDoesNotStallOthers() async throws {
        let rig = try await RuntimeRig()
        let slow = rig.connect(1)
        let other = rig.connect(2)
        // The slow connection listens to a list through many windows.
        for i in 1...50 {
            rig.send(1, i, .listen(path: "list", query: try QuerySpec.default.limitToFirst(i), tag: i, hash: ""))
        }
        #expect(slow.response(50)?.status == "ok")
        // From now on, sending to it blocks.
        let gate = DispatchSemaphore(value: 0)
        slow.gate.withLock { $0 = gate }
        defer { for _ in 0..<1_000 { gate.signal() } }
        rig.send(2, 1, .put(path: "list/a", data: 1, hash: nil))
        #expect(other.response(1)?.status == "ok")
        rig.send(2, 2, .get(path: "list", query: .default))
        let answer = other.response(2)
        #expect(
            answer?.status == "ok" && answer?.data == json(#"{"a":1}"#), "answered while the other connection is stuck")
    }

    @Test("a connection with too much waiting to be rendered is disconnected; the total is bounded")
    func waitingBounded() async throws {
        let rig = try await RuntimeRig {
            $0.maxWaitingBytesPerConnection = 1 << 20
            $0.maxWaitingBytesTotal = 1 << 30
        }
        let slow = rig.connect(1)
        let writer = rig.connect(2)
        rig.send(1, 1, .listen(path: "big", query: .default, tag: nil, hash: ""))
        #expect(slow.response(1)?.status == "ok")
        let gate = DispatchSemaphore(value: 0)
        slow.gate.withLock { $0 = gate }
        defer { for _ in 0..<1_000 { gate.signal() } }
        let value = JSONValue.string(String(repeating: "v", count: 100_000))
        for i in 1...20 { rig.send(2, i, .put(path: "big", data: value, hash: nil)) }
        #expect(writer.response(20)?.status == "ok")
        #expect(slow.waitClosed(), "the connection that does not keep up is disconnected")
        #expect(rig.runtime.waitingTotal.value.load(ordering: .relaxed) <= 2 << 20)
    }

    @Test(
        "a failed commit suspends writes: reads go on from what the store holds, the write waits and lands once space is free"
    )
    func fullDiskSuspendsWrites() async throws {
        let rig = try await RuntimeRig()
        let a = rig.connect(1)
        rig.send(1, 1, .put(path: "x", data: 1, hash: nil))
        #expect(a.response(1)?.status == "ok")
        // The disk fills up: the next commit fails.
        rig.fs.injectFault(.write, .noSpace, sticky: true)
        rig.fs.injectFault(.sync, .noSpace, sticky: true)
        rig.send(1, 2, .put(path: "x", data: 2, hash: nil))
        #expect(a.waitClosed(), "the connection that waited for the failed commit is closed")
        #expect(rig.runtime.writesSuspended != nil)
        #expect(rig.runtime.failure == nil, "the server goes on")
        // A new connection reads what the store holds.
        let b = rig.connect(2)
        rig.send(2, 1, .get(path: "x", query: .default))
        #expect(b.response(1)?.data == .number(1))
        // Its write waits for the disk; a read after it waits behind it (its order is kept).
        rig.send(2, 2, .put(path: "x", data: 3, hash: nil))
        let c = rig.connect(3)
        rig.send(3, 1, .get(path: "x", query: .default))
        #expect(c.response(1)?.data == .number(1), "other connections keep reading")
        #expect(b.response(2, timeout: 0.5) == nil, "the write is held, not refused")
        // REST writes are refused with 503 meanwhile.
        let refused = Mutex<RESTResponse?>(nil)
        let answered = DispatchSemaphore(value: 0)
        rig.runtime.rest(RESTRequest(method: .put, path: "y", body: "1", principal: .admin)) { r in
            refused.withLock { $0 = r }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(refused.withLock { $0?.status } == 503)
        // Space is freed; the retry comes when its time has.
        rig.fs.clearFaults()
        rig.clock.advance(60_000)
        rig.runtime.tick()
        #expect(b.response(2)?.status == "ok")
        #expect(rig.runtime.writesSuspended == nil)
        // Durable: the store holds it after a reopen.
        try rig.runtime.currentStore?.close()
        let reopened = try AuthoritativeStore.open(directory: "/server", options: rig.options)
        #expect(reopened.data.child(at: "x") == .number(3))
        try reopened.store.close()
    }

    #if os(Linux)
    /// The commit thread carries its name at the OS level (`/proc`, `top -H`, `perf`), where
    /// an operator looks for it: Foundation on Linux names the OS thread only when the name
    /// is set on the thread itself.
    @Test("the commit thread is named hearth-commit at the OS level")
    func commitThreadIsNamed() async throws {
        let rig = try await RuntimeRig()
        let a = rig.connect(1)
        // An acknowledged write ran through the commit loop: the thread has named itself.
        rig.send(1, 1, .put(path: "n", data: 1, hash: nil))
        #expect(a.response(1)?.status == "ok")
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        #expect(names.contains("hearth-commit\n"), "\(Set(names))")
    }
    #endif
}
