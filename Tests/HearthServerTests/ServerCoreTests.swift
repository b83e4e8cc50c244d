import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

@Suite("Server core: protocol v5 (sans-I/O)")
struct ServerCoreTests {
    @Test("the hello comes first, with the server's clock, protocol 5, host and session")
    func hello() {
        var h = CoreHarness()
        guard case let .hello(ts, host, session, _) = h.connect(1) else { Issue.record("no hello"); return }
        #expect(ts == h.now)
        #expect(host == "127.0.0.1")
        #expect(!session.isEmpty)
        #expect(
            ServerMessage.hello(timestamp: 5, host: "h", sessionID: "s").text
                == #"{"t":"c","d":{"t":"h","d":{"ts":5,"v":"5","h":"h","s":"s"}}}"#)
    }

    @Test(
        "the hello's h is where the client found the server (its Host), else --public-host wins; a Host that is no host name is not echoed"
    )
    func helloHost() {
        func h(_ host: String?, publicHost: String? = nil) -> String? {
            var configuration = ServerCore.Configuration()
            configuration.host = "0.0.0.0:9000"
            configuration.publicHost = publicHost
            var core = ServerCore(data: .empty, configuration: configuration, seed: 1)
            let out = core.connect(ConnectionID(1), now: 0, host: host)
            guard let text = out.renderedMessages().first?.1,
                case .hello(_, let named, _, _)? = try? ServerMessage.decode(text)
            else { return nil }
            return named
        }
        #expect(h("db.example.com:9000") == "db.example.com:9000")
        #expect(h("127.0.0.1:9000") == "127.0.0.1:9000")
        #expect(h("[::1]:9000") == "[::1]:9000")
        #expect(h(nil) == "0.0.0.0:9000")
        #expect(h("evil.com/\"><script>") == "0.0.0.0:9000")
        #expect(h("a b") == "0.0.0.0:9000" && h("") == "0.0.0.0:9000")
        #expect(h(String(repeating: "a", count: 256)) == "0.0.0.0:9000")
        #expect(h("db.example.com:9000", publicHost: "rtdb.example.org") == "rtdb.example.org")
    }

    @Test("listen: the data is pushed, then ok; a matching hash sends no data")
    func listenAndHash() {
        var h = CoreHarness(data: node(#"{"a":{"b":1,"c":"x"}}"#))
        _ = h.connect(1)
        let first = h.send(1, 1, .listen(path: "a", query: .default, tag: nil, hash: ""))
        #expect(first.count == 2)
        guard case let .set(path, data, tag) = first[0].1 else { Issue.record("expected d"); return }
        #expect(path == "a" && tag == nil)
        #expect(data == json(#"{"b":1,"c":"x"}"#))
        #expect(response(first, 1)?.status == "ok")

        _ = h.connect(2)
        let hash = node(#"{"b":1,"c":"x"}"#).hash
        let second = h.send(2, 1, .listen(path: "a", query: .default, tag: nil, hash: hash))
        #expect(second.count == 1, "a matching hash must send only the response")
        #expect(response(second, 1)?.status == "ok")
    }

    @Test("a put reaches every listener, the writer's too, before its ok; the write is durable first")
    func putFanOut() {
        var h = CoreHarness()
        _ = h.connect(1)
        _ = h.connect(2)
        _ = h.send(1, 1, .listen(path: "room", query: .default, tag: nil, hash: ""))
        _ = h.send(2, 1, .listen(path: "", query: .default, tag: nil, hash: ""))
        let out = h.core.receive(
            ConnectionID(1), frame: ClientRequest.put(path: "room/m1", data: "hi", hash: nil).message(number: 2),
            now: h.now)
        #expect(out.writes == [.set("room/m1", .string("hi"))])
        let msgs = out.renderedMessages().map { ($0.0.rawValue, try! ServerMessage.decode($0.1)) }
        #expect(msgs.map(\.0) == [1, 2, 1])
        #expect(msgs[0].1 == .set(path: "room/m1", data: "hi", tag: nil))
        #expect(msgs[1].1 == .set(path: "room/m1", data: "hi", tag: nil))
        #expect(msgs[2].1 == .response(number: 2, status: "ok", data: nil))
    }

    @Test("a write above a listen pushes the listen's new value, only when it changed")
    func writeAbove() {
        var h = CoreHarness(data: node(#"{"a":{"b":1,"c":2}}"#))
        _ = h.connect(1)
        _ = h.send(1, 1, .listen(path: "a/b", query: .default, tag: nil, hash: ""))
        let same = h.send(1, 2, .put(path: "a", data: json(#"{"b":1,"c":3}"#), hash: nil))
        #expect(same.count == 1, "a/b did not change")
        let changed = h.send(1, 3, .put(path: "a", data: json(#"{"b":5}"#), hash: nil))
        #expect(changed.first?.1 == .set(path: "a/b", data: 5, tag: nil))
    }

    @Test("merge: relative paths, one push with the children, nulls delete")
    func merge() {
        var h = CoreHarness(data: node(#"{"u":{"name":"a","x":{"y":1,"z":2}}}"#))
        _ = h.connect(1)
        _ = h.send(1, 1, .listen(path: "u", query: .default, tag: nil, hash: ""))
        let out = h.send(
            1, 2, .merge(path: "u", data: [(Path("x/y"), JSONValue.number(9)), (Path("name"), JSONValue.null)]))
        guard case let .merge(path, children, nil) = out[0].1 else { Issue.record("expected m, got \(out)"); return }
        #expect(path == "u")
        #expect(children.map { $0.0 } == [Path("x/y"), Path("name")])
        #expect(h.core.data == node(#"{"u":{"x":{"y":9,"z":2}}}"#))
        #expect(response(out, 2)?.status == "ok")
        #expect(
            h.durable.last
                == .merge("u", [ChildUpdate(path: "x/y", node: .number(9)), ChildUpdate(path: "name", node: .empty)]))
    }

    @Test("a merge whose paths overlap is invalid_data, and changes nothing")
    func mergeOverlap() {
        var h = CoreHarness()
        _ = h.connect(1)
        let out = h.send(
            1, 1, .merge(path: "u", data: [(Path("a"), JSONValue.number(1)), (Path("a/b"), JSONValue.number(2))]))
        #expect(response(out, 1)?.status == "invalid_data")
        #expect(h.core.data.isEmpty && h.durable.isEmpty)
    }

    @Test("compare-and-set: a put with the current hash succeeds, a stale one is datastale")
    func compareAndSet() {
        var h = CoreHarness(data: node(#"{"n":1}"#))
        _ = h.connect(1)
        let stale = h.send(1, 1, .put(path: "n", data: 2, hash: node("5").hash))
        #expect(response(stale, 1)?.status == "datastale")
        #expect(h.core.data == node(#"{"n":1}"#))
        let fresh = h.send(1, 2, .put(path: "n", data: 2, hash: node("1").hash))
        #expect(response(fresh, 2)?.status == "ok")
        let fromNothing = h.send(1, 3, .put(path: "new", data: 1, hash: ""))
        #expect(response(fromNothing, 3)?.status == "ok", "the empty hash matches no data")
    }

    @Test("server values resolve at apply time: timestamp is the server's clock, increment adds")
    func serverValues() {
        var h = CoreHarness(data: node(#"{"count":41}"#))
        _ = h.connect(1)
        _ = h.send(1, 1, .put(path: "t", data: json(#"{".sv":"timestamp"}"#), hash: nil))
        _ = h.send(1, 2, .put(path: "count", data: json(#"{".sv":{"increment":1}}"#), hash: nil))
        _ = h.send(1, 3, .merge(path: "", data: [(Path("fresh"), json(#"{".sv":{"increment":5}}"#))]))
        #expect(h.core.data.child(at: "t") == .number(Double(h.now)))
        #expect(h.core.data.child(at: "count") == .number(42))
        #expect(h.core.data.child(at: "fresh") == .number(5))
        #expect(h.durable.contains(.set("t", .number(Double(h.now)))), "the durable write holds the resolved value")
    }

    @Test("a tagged query gets its window, tagged, on listen and when the window changes")
    func taggedQuery() throws {
        var h = CoreHarness(data: node(#"{"s":{"a":1,"b":2,"c":3}}"#))
        _ = h.connect(1)
        let q = try QuerySpec(orderBy: .value).limitToLast(2)
        let first = h.send(1, 1, .listen(path: "s", query: q, tag: 7, hash: ""))
        #expect(first[0].1 == .set(path: "s", data: json(#"{"b":2,"c":3}"#), tag: 7))
        let outside = h.send(1, 2, .put(path: "s/z", data: 0, hash: nil))
        #expect(outside.count == 1, "a child below the window changes nothing")
        let inside = h.send(1, 3, .merge(path: "s", data: [(Path("d"), JSONValue.number(4))]))
        #expect(inside[0].1 == .set(path: "s", data: json(#"{"c":3,"d":4}"#), tag: 7))
    }

    @Test("the wire query object round-trips, as the JS SDK writes it")
    func wireQuery() throws {
        let js = json(#"{"sp":5,"sn":"[MAX_NAME]","sin":false,"ep":9,"ein":true,"l":3,"vf":"r","i":".value"}"#)
        let q = try WireQuery.decode(js)
        #expect(q == (try QuerySpec(orderBy: .value).startAfter(.number(5)).endAt(.number(9)).limitToLast(3)))
        #expect(try WireQuery.decode(WireQuery.encode(q)) == q)
        let child = try WireQuery.decode(json(#"{"i":"a/b","sp":"x","l":1,"vf":"l"}"#))
        #expect(child == (try QuerySpec(orderBy: .child("a/b")).startAt(.string("x")).limitToFirst(1)))
        #expect(throws: WireError.self) { try WireQuery.decode(json(#"{"l":-1}"#)) }
    }

    @Test("onDisconnect operations run when the connection closes, in order, visible to others")
    func onDisconnect() {
        var h = CoreHarness(data: node(#"{"presence":{"u1":true},"cancel":{"me":1}}"#))
        _ = h.connect(1)
        _ = h.connect(2)
        _ = h.send(2, 1, .listen(path: "", query: .default, tag: nil, hash: ""))
        #expect(response(h.send(1, 1, .onDisconnectPut(path: "presence/u1", data: .null)), 1)?.status == "ok")
        #expect(
            response(
                h.send(1, 2, .onDisconnectMerge(path: "last", data: [(Path("u1"), json(#"{".sv":"timestamp"}"#))])), 2)?
                .status == "ok")
        #expect(response(h.send(1, 3, .onDisconnectPut(path: "cancel/me", data: .null)), 3)?.status == "ok")
        #expect(response(h.send(1, 4, .onDisconnectCancel(path: "cancel")), 4)?.status == "ok")
        #expect(h.core.data.child(at: "presence/u1") == .bool(true), "nothing runs before the close")
        h.now += 10
        let pushed = h.disconnect(1)
        #expect(pushed.allSatisfy { $0.0 == 2 })
        #expect(h.core.data.child(at: "presence/u1").isEmpty)
        #expect(h.core.data.child(at: "last/u1") == .number(Double(h.now)), "server values resolve when it runs")
        #expect(h.core.data.child(at: "cancel/me") == .number(1), "the cancelled one does not run")
    }

    @Test("a silent connection is closed after the idle timeout and its onDisconnect runs; keepalives keep it")
    func idleTimeout() {
        var h = CoreHarness { $0.idleTimeoutMs = 1000 }
        _ = h.connect(1)
        _ = h.send(1, 1, .onDisconnectPut(path: "gone", data: true))
        _ = h.tick(600)
        #expect(h.frame(1, "0").isEmpty, "the keepalive \"0\" is ignored")
        #expect(h.tick(600).closes.isEmpty, "heard from 600 ms ago")
        #expect(h.tick(1001).closes == [ConnectionID(1)])
        #expect(h.core.data.child(at: "gone") == .bool(true))
        #expect(h.core.connectionCount == 0)
    }

    @Test("a ping gets a pong; an unknown action an error; garbage closes the connection")
    func controlAndErrors() {
        var h = CoreHarness()
        _ = h.connect(1)
        let pong = h.take(h.frame(1, #"{"t":"c","d":{"t":"p","d":{}}}"#))
        #expect(pong.first?.1 == .pong)
        let unknown = h.take(h.frame(1, #"{"t":"d","d":{"r":3,"a":"zz","b":{}}}"#)).map { ($0.0.rawValue, $0.1) }
        #expect(response(unknown, 3)?.status == "invalid_request")
        let bad = h.frame(1, "{not json")
        #expect(bad.closes == [ConnectionID(1)])
    }

    @Test("a message split into frames (count first) is reassembled; frames longer than 16,384 are split")
    func framing() throws {
        let big = String(repeating: "x", count: 40_000)
        let message = ClientRequest.put(path: "big", data: .string(big), hash: nil).message(number: 1)
        let frames = FrameSplitter.frames(for: message)
        #expect(frames.count == 4 && frames[0] == "3")
        #expect(frames.dropFirst().allSatisfy { $0.utf16.count <= 16_384 })
        var h = CoreHarness()
        _ = h.connect(1)
        var out = ServerOutput()
        for f in frames { out.append(h.frame(1, f)) }
        #expect(h.core.data.child(at: "big") == .string(big))
        #expect(out.writes.count == 1)
        // A surrogate pair is never cut.
        let emoji = String(repeating: "😀", count: 10_000)
        let parts = FrameSplitter.frames(for: emoji)
        #expect(parts.dropFirst().joined() == emoji)
        #expect(parts.dropFirst().allSatisfy { $0.utf16.count <= 16_384 })
    }

    @Test("a message over the limit closes the connection before it is buffered")
    func messageLimit() {
        var h = CoreHarness { $0.maxMessageBytes = 100_000 }
        _ = h.connect(1)
        #expect(h.frame(1, "9999").closes == [ConnectionID(1)], "9,999 frames cannot fit 100 kB")
        _ = h.connect(2)
        let fits = FrameSplitter.frames(
            for: ClientRequest.put(path: "p", data: .string(String(repeating: "a", count: 60_000)), hash: nil).message(
                number: 1))
        var out = ServerOutput()
        for f in fits { out.append(h.frame(2, f)) }
        #expect(out.closes.isEmpty && h.core.data.child(at: "p") != .empty, "60 kB in 4 frames fits")
        _ = h.connect(3)
        #expect(h.frame(3, "7").isEmpty)
        for _ in 0..<6 { #expect(h.frame(3, String(repeating: "a", count: 16_000)).isEmpty) }
        #expect(
            h.frame(3, String(repeating: "a", count: 16_000)).closes == [ConnectionID(3)], "the 7th frame passes 100 kB"
        )
        var assembler = FrameAssembler(maxMessageLength: 20_000)
        #expect(throws: FrameError.self) { try assembler.receive(String(repeating: "b", count: 20_001)) }
    }

    @Test("limits: listens per connection and onDisconnect operations per connection")
    func limits() {
        var h = CoreHarness {
            $0.maxListensPerConnection = 2; $0.maxOnDisconnectPerConnection = 1
        }
        _ = h.connect(1)
        #expect(response(h.send(1, 1, .listen(path: "a", query: .default, tag: nil, hash: "")), 1)?.status == "ok")
        #expect(response(h.send(1, 2, .listen(path: "b", query: .default, tag: nil, hash: "")), 2)?.status == "ok")
        #expect(
            response(h.send(1, 3, .listen(path: "c", query: .default, tag: nil, hash: "")), 3)?.status
                == "too_many_listens")
        #expect(response(h.send(1, 4, .onDisconnectPut(path: "x", data: 1)), 4)?.status == "ok")
        #expect(response(h.send(1, 5, .onDisconnectPut(path: "y", data: 1)), 5)?.status == "too_many_operations")
    }
}

@Suite("Server core: auth")
struct ServerAuthTests {
    @Test("unauthenticated reads and writes are denied outside emulator mode")
    func denied() {
        var h = CoreHarness(emulator: false)
        _ = h.connect(1)
        #expect(
            response(h.send(1, 1, .listen(path: "a", query: .default, tag: nil, hash: "")), 1)?.status
                == "permission_denied")
        #expect(response(h.send(1, 2, .put(path: "a", data: 1, hash: nil)), 2)?.status == "permission_denied")
        #expect(response(h.send(1, 3, .onDisconnectPut(path: "a", data: 1)), 3)?.status == "permission_denied")
        #expect(h.core.data.isEmpty)
    }

    @Test("messages after auth wait for the token check, then run in order as the user")
    func authQueues() {
        var h = CoreHarness(emulator: false)
        _ = h.connect(1)
        let out = h.core.receive(
            ConnectionID(1),
            frame: ClientRequest.auth(credential: "tok", isJWT: true, override: nil).message(number: 1), now: h.now)
        #expect(out.tokenChecks.count == 1)
        #expect(h.send(1, 2, .put(path: "a", data: 1, hash: nil)).isEmpty, "waits for the check")
        let user = Principal.User(uid: "u1", claims: json(#"{"uid":"u1"}"#), expiresAt: h.now + 5000)
        let after = h.take(h.core.tokenChecked(out.tokenChecks[0].ticket, .valid(.user(user)), now: h.now)).map {
            ($0.0.rawValue, $0.1)
        }
        #expect(response(after, 1)?.status == "ok")
        #expect(response(after, 2)?.status == "ok")
        #expect(h.core.data.child(at: "a") == .number(1))
        // The token expires on the open connection: ac, then its listens are revoked.
        _ = h.send(1, 3, .listen(path: "a", query: .default, tag: nil, hash: ""))
        let expired = h.tick(5001).messages
        #expect(expired.first?.1 == .authRevoked(status: "expired_token", reason: "Auth token is expired."))
        #expect(expired.contains { $0.1 == .listenRevoked(path: "a", query: .default) })
        #expect(response(h.send(1, 4, .put(path: "a", data: 2, hash: nil)), 4)?.status == "permission_denied")
    }

    @Test("expired and invalid tokens are answered as such")
    func badTokens() {
        var h = CoreHarness(emulator: false)
        _ = h.connect(1)
        for (n, result, status) in [(1, TokenCheck.expired, "expired_token"), (2, .invalid("bad"), "invalid_token")] {
            let out = h.core.receive(
                ConnectionID(1),
                frame: ClientRequest.auth(credential: "t", isJWT: true, override: nil).message(number: n), now: h.now)
            let answer = h.take(h.core.tokenChecked(out.tokenChecks[0].ticket, result, now: h.now)).map {
                ($0.0.rawValue, $0.1)
            }
            #expect(response(answer, n)?.status == status)
        }
    }

    @Test("the verifier: HS256 with the secret, exp and iat checked, uid from sub; unsigned only in emulator mode")
    func verifier() async throws {
        let now: Int64 = 1_700_000_000_000
        let signed = try await FirebaseTokenVerifier(secret: "a-secret-of-at-least-32-bytes-long!!", emulator: false)
        let good = try await JWTFixtures.hs256(
            secret: "a-secret-of-at-least-32-bytes-long!!", .init(sub: "alice", exp: now / 1000 + 60, iat: now / 1000))
        guard case .valid(.user(let u)) = await signed.check(good, now: now) else {
            Issue.record("expected a user"); return
        }
        #expect(u.uid == "alice" && u.expiresAt == (now / 1000 + 60) * 1000)
        #expect(await signed.check(good, now: now + 61_000) == .expired)
        let forged = try await JWTFixtures.hs256(
            secret: "another-secret-of-at-least-32-bytes", .init(sub: "alice", exp: now / 1000 + 60))
        #expect(await signed.check(forged, now: now) == .invalid("the token's signature does not verify"))
        let unsigned = JWTFixtures.unsigned(#"{"uid":"bob","exp":\#(now / 1000 + 60)}"#)
        guard case .invalid = await signed.check(unsigned, now: now) else {
            Issue.record("unsigned accepted outside emulator mode"); return
        }
        #expect(await signed.check("owner", now: now) == .invalid("not a JWT"))
        let emulator = try await FirebaseTokenVerifier(secret: nil, emulator: true)
        #expect(await emulator.check("owner", now: now) == .valid(.admin))
        await #expect(throws: FirebaseTokenVerifier.WeakSecret.self) {
            try await FirebaseTokenVerifier(secret: "short", emulator: false)
        }
        guard case .valid(.user(let b)) = await emulator.check(unsigned, now: now) else {
            Issue.record("expected bob"); return
        }
        #expect(b.uid == "bob")
    }
}
