import Hearth
import HearthRules
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// An attacker's requests against the server core: nothing leaves that the rules would not let
/// the connection read — exactly-once `seen` answers, conditional writes, re-authentication —
/// and what a connection can make the core hold is bounded per connection and in total.
@Suite("Server core: attacks")
struct AttackCoreTests {
    /// `users/$uid` private to its user; `public` open to everyone; `dropbox` writable by anyone
    /// signed in, readable by no one.
    static let rules = """
        {
          "rules": {
            "users": { "$uid": { ".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid" } },
            "public": { ".read": true, ".write": true },
            "dropbox": { ".write": "auth != null" },
            "club": { ".read": "auth != null && root.child('members').child(auth.uid).exists()" }
          }
        }
        """
    static let secret =
        #"{"users":{"bob":{"card":"4111-1111"}},"dropbox":{"letter":"for the admin"},"members":{"eve":true}}"#

    static func harness(_ configure: (inout ServerCore.Configuration) -> Void = { _ in }) throws -> CoreHarness {
        CoreHarness(
            data: node(secret), emulator: false, policy: RulesAccessPolicy(rules: try RulesSet.parse(source: rules)),
            configure: configure)
    }

    static func user(_ uid: String) -> Principal {
        .user(Principal.User(uid: uid, claims: json(#"{"sub":"\#(uid)"}"#), expiresAt: nil))
    }

    static func stamp(_ id: Int64) -> WriteStamp { WriteStamp(writer: "attacker", id: id) }

    /// No message to `connection` mentions the secret values.
    static func leaksNothing(_ messages: [(UInt64, ServerMessage)]) -> Bool {
        !messages.contains { $0.1.text.contains("4111") || $0.1.text.contains("for the admin") }
    }

    @Test("a re-sent write at a location the connection may not write is refused before `seen`, and pushes nothing")
    func seenLeaksNothing() throws {
        var h = try Self.harness()
        _ = h.connect(1)
        _ = h.send(1, 1, .listen(path: "public", query: .default, tag: nil, hash: ""))
        #expect(
            response(h.send(1, 2, .put(path: "public/x", data: 1, hash: nil, stamp: Self.stamp(5))), 2)?.status == "ok")
        // Re-sends below the watermark at the root: as a set and as a merge.
        let put = h.send(1, 3, .put(path: "", data: json(#"{"public":{"x":1}}"#), hash: nil, stamp: Self.stamp(3)))
        #expect(response(put, 3)?.status == "permission_denied")
        #expect(Self.leaksNothing(put), "\(put)")
        let merge = h.send(
            1, 4, .merge(path: "", data: [(Path(keys: ["users"]), JSONValue.null)], stamp: Self.stamp(4)))
        #expect(response(merge, 4)?.status == "permission_denied")
        #expect(Self.leaksNothing(merge), "\(merge)")
        #expect(h.core.data == node(Self.secret).updating("public/x", with: .number(1)), "nothing was applied")
    }

    @Test("a recognised re-send the connection may write is answered `seen`, with only what it may read")
    func seenPushesOnlyReadable() throws {
        var h = try Self.harness()
        _ = h.connect(1)
        _ = h.send(1, 1, .listen(path: "public", query: .default, tag: nil, hash: ""))
        _ = h.send(1, 2, .put(path: "public", data: json(#"{"a":1}"#), hash: nil, stamp: Self.stamp(1)))
        let again = h.send(1, 3, .put(path: "public", data: json(#"{"a":1}"#), hash: nil, stamp: Self.stamp(1)))
        #expect(again.first?.1 == .response(number: 3, status: "ok", data: WriteStamp.seenResponse))
        #expect(again.dropFirst().map(\.1) == [.set(path: "public", data: json(#"{"a":1}"#), tag: nil)])
    }

    @Test("REST if-match: the permission is checked first; a 412 needs read access")
    func ifMatchAfterPermission() throws {
        var h = try Self.harness()
        for method in [RESTRequest.Method.delete, .put] {
            let anonymous = h.rest(method, "users/bob", body: method == .put ? "1" : nil, principal: .unauthenticated) {
                $0.ifMatch = "bogus"
            }
            #expect(anonymous.status == 401)
            #expect(!anonymous.body.contains("4111") && anonymous.headers["ETag"] == nil, "\(anonymous)")
        }
        // Signed in, allowed to write the dropbox but not to read it: no oracle either.
        let writer = h.rest(.put, "dropbox/letter", body: #""mine""#, principal: Self.user("eve")) {
            $0.ifMatch = "bogus"
        }
        #expect(writer.status == 401 && !writer.body.contains("for the admin") && writer.headers["ETag"] == nil)
        // The owner, who may read: the usual 412 with the current value.
        let owner = h.rest(.put, "users/bob/card", body: #""x""#, principal: Self.user("bob")) { $0.ifMatch = "bogus" }
        #expect(owner.status == 412 && owner.body.contains("4111"))
        #expect(h.core.data == node(Self.secret))
    }

    @Test("a WebSocket compare-and-set at a location the connection may write but not read is refused, not compared")
    func compareAndSetNeedsRead() throws {
        var h = try Self.harness()
        _ = h.connect(1)
        h.signIn(1, Self.user("eve"))
        let wrongGuess = h.send(1, 1, .put(path: "dropbox/letter", data: "x", hash: "bogus", stamp: nil))
        #expect(response(wrongGuess, 1)?.status == "permission_denied")
        let rightGuess = h.send(
            1, 2, .put(path: "dropbox/letter", data: "x", hash: node(#""for the admin""#).hash, stamp: nil))
        #expect(response(rightGuess, 2)?.status == "permission_denied", "the same answer whatever the guess")
    }

    @Test("switching users on one connection revokes the listens the new user may not read")
    func reauthRevokes() throws {
        var h = try Self.harness()
        _ = h.connect(1)
        _ = h.connect(2)
        h.signIn(1, Self.user("alice"))
        h.signIn(2, Self.user("alice"))
        #expect(
            response(h.send(1, 1, .listen(path: "users/alice", query: .default, tag: nil, hash: "")), 1)?.status == "ok"
        )
        #expect(response(h.send(1, 2, .listen(path: "public", query: .default, tag: nil, hash: "")), 2)?.status == "ok")
        let switched = h.send(1, 3, .auth(credential: "t", isJWT: true, override: nil))
        #expect(switched.isEmpty)
        let checks = h.core.pendingChecks.keys.sorted()
        let answer = h.take(h.core.tokenChecked(checks[0], .valid(Self.user("bob")), now: h.now))
        #expect(answer.contains { $0.1 == .listenRevoked(path: "users/alice", query: .default) })
        #expect(!answer.contains { if case .listenRevoked(path: "public", _) = $0.1 { true } else { false } })
        // Alice writes from her other connection: nothing reaches bob's session.
        let later = h.send(2, 1, .put(path: "users/alice/diary", data: "secret thoughts", hash: nil))
        #expect(!later.contains { $0.0 == 1 }, "\(later)")
    }

    @Test("a listen whose rule reads the data is checked again before a write's data goes to it")
    func dataDependentReadRechecked() throws {
        var h = try Self.harness()
        _ = h.connect(1)
        _ = h.connect(2)
        h.signIn(1, Self.user("eve"))
        h.signIn(2, .admin)
        #expect(response(h.send(1, 1, .listen(path: "club", query: .default, tag: nil, hash: "")), 1)?.status == "ok")
        let first = h.send(2, 1, .put(path: "club/news", data: "welcome", hash: nil))
        #expect(first.contains { $0.0 == 1 && $0.1 == .set(path: "club/news", data: "welcome", tag: nil) })
        // Eve is removed from the club; then the club's news is written.
        _ = h.send(2, 2, .put(path: "members/eve", data: .null, hash: nil))
        let news = h.send(2, 3, .put(path: "club/news", data: "members only", hash: nil))
        #expect(news.contains { $0.0 == 1 && $0.1 == .listenRevoked(path: "club", query: .default) })
        #expect(!news.contains { $0.0 == 1 && $0.1.text.contains("members only") }, "\(news)")
        let later = h.send(2, 4, .put(path: "club/news", data: "more", hash: nil))
        #expect(!later.contains { $0.0 == 1 }, "the listen is gone")
    }

    @Test("listens are bounded in total across connections, not only per connection")
    func listensTotal() throws {
        var h = try Self.harness { $0.maxListensTotal = 3 }
        for n in 1...2 { _ = h.connect(UInt64(n)) }
        for i in 0..<3 {
            let r = h.send(
                1, i, .listen(path: Path(keys: ["public", ChildKey("p\(i)")]), query: .default, tag: nil, hash: ""))
            #expect(response(r, i)?.status == "ok")
        }
        #expect(
            response(h.send(2, 1, .listen(path: "public", query: .default, tag: nil, hash: "")), 1)?.status
                == "too_many_listens")
        _ = h.disconnect(1)
        #expect(response(h.send(2, 2, .listen(path: "public", query: .default, tag: nil, hash: "")), 2)?.status == "ok")
    }

    @Test("partly received messages are bounded in total; a partial message must finish in time")
    func heldBytesTotal() throws {
        var h = try Self.harness {
            $0.maxMessageBytes = 100_000
            $0.maxHeldBytesTotal = 50_000
            $0.partialMessageTimeoutMs = 5_000
        }
        for n in 1...3 { _ = h.connect(UInt64(n)) }
        let chunk = String(repeating: "x", count: 12_000)
        // Connection 1 announces 5 segments and sends 4: 48,000 bytes held.
        _ = h.frame(1, "5")
        for _ in 0..<4 { #expect(h.frame(1, chunk).closes.isEmpty) }
        // Connection 2 would pass the total: refused; connection 1 is untouched.
        _ = h.frame(2, "5")
        #expect(h.frame(2, chunk).closes == [ConnectionID(2)])
        #expect(h.core.held.heldBytes == 48_000)
        // A small message from a third connection is never held: it is answered.
        let get = h.take(h.frame(3, ClientRequest.get(path: "public", query: .default).message(number: 1)))
        #expect(response(get.map { ($0.0.rawValue, $0.1) }, 1)?.status == "ok")
        // Connection 1 stalls: the partial message times out and its bytes are released.
        let (_, closes) = h.tick(6_000)
        #expect(closes.contains(ConnectionID(1)))
        #expect(h.core.held.heldBytes == 0)
    }

    @Test("onDisconnect operations are bounded in bytes per connection and in total")
    func onDisconnectBytes() throws {
        var h = try Self.harness {
            $0.maxOnDisconnectBytesPerConnection = 1_000
            $0.maxOnDisconnectBytesTotal = 1_350
        }
        _ = h.connect(1)
        _ = h.connect(2)
        let big = String(repeating: "y", count: 600)  // a message of about 650 bytes
        #expect(response(h.send(1, 1, .onDisconnectPut(path: "public/a", data: .string(big))), 1)?.status == "ok")
        #expect(
            response(h.send(1, 2, .onDisconnectPut(path: "public/b", data: .string(big))), 2)?.status
                == "too_many_operations")
        #expect(response(h.send(2, 1, .onDisconnectPut(path: "public/c", data: .string(big))), 1)?.status == "ok")
        #expect(
            response(h.send(2, 2, .onDisconnectPut(path: "public/d", data: "z")), 2)?.status == "too_many_operations")
        _ = h.send(1, 3, .onDisconnectCancel(path: "public"))
        #expect(response(h.send(2, 3, .onDisconnectPut(path: "public/d", data: "z")), 3)?.status == "ok")
    }
}
