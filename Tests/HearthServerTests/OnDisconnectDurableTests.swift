import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) @testable import HearthServer
import HearthTesting
@_spi(HearthInternals) import HearthWire
import Testing

@Suite("onDisconnect: journaled, run once after a restart, ended by ls; priority server values")
struct OnDisconnectDurableTests {
    @Test("a queued operation is journaled with its output; the close runs it with its marker, then ends it")
    func journaledAndMarked() {
        var h = CoreHarness()
        _ = h.connect(1)
        let out = h.frame(1, ClientRequest.onDisconnectPut(path: "presence/u1", data: false).message(number: 1))
        guard case .registered(let session, let op)? = out.onDisconnect.first else {
            Issue.record("the registration was not journaled: \(out.onDisconnect)")
            return
        }
        #expect(op.path == "presence/u1" && op.principal == .unauthenticated)
        let closed = h.core.disconnect(ConnectionID(1), now: h.now)
        #expect(closed.writes.contains(.set("presence/u1", .bool(false))))
        #expect(closed.writes.last == .writerWatermark(writer: ServerCore.onDisconnectMarker(session), id: 1))
        #expect(closed.onDisconnect == [.ended(session: session)])
        h.core.checkBudget()
    }

    @Test("recovered sessions run once: a session whose marker the store holds is only ended")
    func recoveredOnce() {
        var h = CoreHarness(data: node(#"{"n": 5}"#))
        let op = HearthServer.OnDisconnectOperation(
            path: "n", action: .set(json(#"{".sv": {"increment": 1}}"#)), principal: .unauthenticated, bytes: 10)
        let ran = h.core.runRecovered([(7, [op])], ran: [7], now: h.now)
        #expect(ran.writes.isEmpty && ran.onDisconnect == [.ended(session: 7)])
        #expect(h.core.data.child(at: "n") == node("5"))
        let out = h.core.runRecovered([(8, [op])], ran: [], now: h.now)
        #expect(h.core.data.child(at: "n") == node("6"))
        #expect(out.onDisconnect == [.ended(session: 8)])
        #expect(out.writes.contains(.writerWatermark(writer: ServerCore.onDisconnectMarker(8), id: 1)))
        h.core.checkBudget()
        // Later connections are journaled under new session keys.
        _ = h.connect(1)
        #expect(h.core.connections[ConnectionID(1)]?.session == 9)
    }

    @Test("a client's write stamp cannot advance a marker")
    func markersAreNotStamps() {
        var h = CoreHarness()
        _ = h.connect(1)
        let stamp = WriteStamp(writer: ServerCore.onDisconnectMarker(1), id: 5)
        let out = h.frame(1, ClientRequest.put(path: "a", data: 1, hash: nil, stamp: stamp).message(number: 1))
        #expect(!out.writes.contains { if case .writerWatermark = $0 { true } else { false } })
    }

    @Test("ls ends the stale session first: its onDisconnect cannot overwrite the new session's write")
    func lastSessionEndsStale() {
        var h = CoreHarness()
        guard case .hello(_, _, let stale, _) = h.connect(1) else { Issue.record("no hello"); return }
        #expect(response(h.send(1, 1, .onDisconnectPut(path: "online", data: false)), 1)?.status == "ok")
        _ = h.send(1, 2, .put(path: "online", data: true, hash: nil))
        let out = h.core.connect(ConnectionID(2), now: h.now, lastSession: stale)
        #expect(out.closes == [ConnectionID(1)])
        #expect(out.writes.first == .set("online", .bool(false)))
        _ = h.take(out)
        #expect(response(h.send(2, 1, .put(path: "online", data: true, hash: nil)), 1)?.status == "ok")
        #expect(h.core.connectionCount == 1)
        #expect(h.core.data.child(at: "online") == .bool(true))
        // An unknown or malformed ls ends nothing.
        #expect(h.core.connect(ConnectionID(3), now: h.now, lastSession: "nope").closes.isEmpty)
    }

    @Test("ls is read from the upgrade URL's query, and only as a session id")
    func lastSessionParameter() {
        #expect(ServerCore.lastSession(inURI: "/.ws?v=5&ls=abc123&ns=demo") == "abc123")
        #expect(ServerCore.lastSession(inURI: "/.ws?v=5&ns=demo") == nil)
        #expect(ServerCore.lastSession(inURI: "/.ws?ls=a%2Fb") == nil)
        #expect(ServerCore.lastSession(inURI: "/.ws") == nil)
    }

    @Test("a server value as a priority: set and merge resolve it (timestamp; increment of the old priority)")
    func priorityServerValues() {
        var h = CoreHarness(data: node(#"{"m": {".value": 1, ".priority": 10}}"#))
        _ = h.connect(1)
        let set = json(#"{".value": 1, ".priority": {".sv": "timestamp"}}"#)
        #expect(response(h.send(1, 1, .put(path: "t", data: set, hash: nil)), 1)?.status == "ok")
        #expect(h.core.data.child(at: "t").priority == .number(Double(h.now)))
        let inc = json(#"{".value": 2, ".priority": {".sv": {"increment": 5}}}"#)
        #expect(response(h.send(1, 2, .merge(path: "/", data: [(Path("m"), inc)])), 2)?.status == "ok")
        #expect(h.core.data.child(at: "m").priority == .number(15))
        let nested = json(#"{"c": {".value": "x", ".priority": {".sv": {"increment": 2}}}}"#)
        #expect(response(h.send(1, 3, .put(path: "p", data: nested, hash: nil)), 3)?.status == "ok")
        #expect(h.core.data.child(at: "p/c").priority == .number(2))
        // An onDisconnect's priority is resolved when it runs.
        #expect(response(h.send(1, 4, .onDisconnectPut(path: "gone", data: set)), 4)?.status == "ok")
        h.now += 5_000
        _ = h.disconnect(1)
        #expect(h.core.data.child(at: "gone").priority == .number(Double(h.now)))
        // Over REST too.
        #expect(h.rest(.put, "r", body: #"{".value": 1, ".priority": {".sv": "timestamp"}}"#).status == 200)
        #expect(h.core.data.child(at: "r").priority == .number(Double(h.now)))
        // A child's old priority is found under the written location by its key.
        let deep = json(#"{"m": {".value": 3, ".priority": {".sv": {"increment": 1}}}, "n": {"o": true}}"#)
        _ = h.connect(2)
        #expect(response(h.send(2, 1, .put(path: "/", data: deep, hash: nil)), 1)?.status == "ok")
        #expect(h.core.data.child(at: "m").priority == .number(16))
    }

    @Test("the journal's records and checkpoint round-trip every kind of operation and principal")
    func codecRoundTrip() throws {
        let user = Principal.user(.init(uid: "u", claims: json(#"{"a": [1, "x"]}"#), expiresAt: 1_800_000_000_000))
        let ops = [
            HearthServer.OnDisconnectOperation(
                path: "a/b", action: .set(json(#"{"x": {".sv": "timestamp"}}"#)), principal: user, bytes: 40),
            HearthServer.OnDisconnectOperation(
                path: "/", action: .merge([.init(path: "c/d", value: 1), .init(path: "e", value: .null)]),
                principal: .admin, bytes: 50),
            HearthServer.OnDisconnectOperation(
                path: "z", action: .set(true), principal: .override(json(#"{"uid": "o"}"#)), bytes: 1),
            HearthServer.OnDisconnectOperation(path: "z", action: .set(.null), principal: .unauthenticated, bytes: 2),
        ]
        for op in ops {
            let (payload, type) = OnDisconnectCodec.encode(.registered(session: 3, op))
            #expect(try OnDisconnectCodec.decode(payload, type: type) == .registered(session: 3, op))
        }
        let (cancel, type) = OnDisconnectCodec.encode(.cancelled(session: 4, path: "a"))
        #expect(try OnDisconnectCodec.decode(cancel, type: type) == .cancelled(session: 4, path: "a"))
        let body = OnDisconnectCodec.encodeCheckpoint([1: ops])
        #expect(try OnDisconnectCodec.decodeCheckpoint(body).map(\.1) == ops)
        #expect(throws: OnDisconnectCodec.Malformed.self) {
            try OnDisconnectCodec.decode([2] + cancel.dropFirst(), type: type)
        }
    }

    /// A runtime on the simulated file system where connection 1 wrote `n` = 5 and queued an
    /// onDisconnect increment of it (both acknowledged).
    static func incrementQueued() async throws -> RuntimeRig {
        let rig = try await RuntimeRig()
        let sink = rig.connect(1)
        rig.send(1, 1, .put(path: "n", data: 5, hash: nil))
        #expect(sink.response(1)?.status == "ok")
        #expect(!rig.fs.directoryExists("/server/ondisconnect"), "no journal before the first operation")
        rig.send(1, 2, .onDisconnectPut(path: "n", data: json(#"{".sv": {"increment": 1}}"#)))
        #expect(sink.response(2)?.status == "ok")
        #expect(rig.fs.directoryExists("/server/ondisconnect"), "journaled before its ok")
        return rig
    }

    /// Stops `rig`'s runtime and lets it go (its journal with it), then starts a new one on its
    /// store: `n` once that one has recovered (no onDisconnect marker may be left then).
    static func restarted(_ rig: inout RuntimeRig?) async throws -> Node {
        let options = try #require(rig?.options)
        rig?.runtime.stop()
        try rig?.runtime.currentStore?.close()
        rig = nil
        return try await restarted(options)
    }

    /// A runtime started on the store at `/server` and stopped: `n` after its recovery.
    static func restarted(_ options: AuthoritativeStore.Options) async throws -> Node {
        let opened = try AuthoritativeStore.open(directory: "/server", options: options)
        let store = opened.store
        var c = ServerCore.Configuration()
        c.emulator = true
        let runtime = try ServerRuntime(
            store: opened, configuration: c, verifier: try await FirebaseTokenVerifier(secret: nil, emulator: true))
        defer {
            runtime.stop()
            try? store.close()
        }
        #expect(store.writerWatermarks().keys.allSatisfy { ServerCore.markedSession($0) == nil })
        return runtime.state.withLock { $0.core.data.child(at: "n") }
    }

    @Test("a runtime that stops with a connection open runs its operations when the next one starts, once")
    func runtimeRestart() async throws {
        var rig: RuntimeRig? = try await Self.incrementQueued()
        let options = try #require(rig?.options)
        #expect(try await Self.restarted(&rig) == node("6"))
        #expect(try await Self.restarted(options) == node("6"), "a second restart runs nothing again")
    }

    @Test("stopping a runtime twice returns: the second stop does not wait for the ended commit thread")
    func stopTwice() async throws {
        let runtime = try await Self.incrementQueued().runtime
        let stopped = DispatchSemaphore(value: 0)
        // On a thread of its own, so that a stop that never returns fails this test (30 s: a
        // hang guard) instead of hanging the suite.
        Thread.detachNewThread {
            runtime.stop()
            runtime.stop()
            stopped.signal()
        }
        try #require(stopped.wait(timeout: .now() + 30) == .success, "the second stop hangs")
        try runtime.currentStore?.close()
    }

    @Test("a session that ends while the disk is full runs its operations once writes resume, and never again")
    func endedDuringFailedCommit() async throws {
        var rig: RuntimeRig? = try await Self.incrementQueued()
        let fs = try #require(rig?.fs)
        // The disk fills up; the connection ends: the commit of its operation fails.
        fs.injectFault(.write, .noSpace, sticky: true)
        fs.injectFault(.sync, .noSpace, sticky: true)
        rig?.runtime.closed(ConnectionID(1))
        #expect(Self.waitFor { rig?.runtime.writesSuspended != nil }, "the failed commit suspends writes")
        let reader = try #require(rig?.connect(2))
        rig?.send(2, 1, .get(path: "n", query: .default))
        #expect(reader.response(1)?.data == .number(5), "not run: its commit failed")
        // Space is freed; the retry runs the operation the failure dropped.
        fs.clearFaults()
        rig?.clock.advance(60_000)
        rig?.runtime.tick()
        #expect(
            Self.waitFor {
                rig?.runtime.writesSuspended == nil
                    && rig?.runtime.state.withLock { $0.core.data.child(at: "n") } == node("6")
            })
        #expect(try await Self.restarted(&rig) == node("6"), "a restart finds the session ended: not run twice")
    }

    /// Polls `condition` (30 s at most: a hang guard, not a timing assumption).
    static func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<3_000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
