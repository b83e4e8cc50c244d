import Hearth
import HearthRules
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// Security rules enforced by the server core: the rules decide for users and the
/// unauthenticated, on WebSocket requests, REST and onDisconnect; the admin bypasses them.
@Suite("Server core: security rules")
struct ServerRulesTests {
    static let presenceRules = """
        {
          // Firebase's presence pattern, plus a lock an admin can set.
          "rules": {
            "status": {
              ".read": "auth != null",
              "$uid": {
                ".write": "auth != null && auth.uid === $uid && !root.child('locked').child($uid).exists()",
                ".validate": "newData.hasChildren(['state'])"
              }
            },
            "scores": { ".read": true, ".indexOn": ["score"] },
            "open": { ".read": true }
          }
        }
        """

    static func policy() throws -> RulesAccessPolicy {
        RulesAccessPolicy(rules: try RulesSet.parse(source: presenceRules))
    }

    static func user(_ uid: String) -> Principal {
        .user(Principal.User(uid: uid, claims: json(#"{"sub":"\#(uid)"}"#), expiresAt: nil))
    }

    /// Emulator mode accepts unsigned tokens, but a connection that sent none is not the admin:
    /// with rules, it is refused what the rules refuse the unauthenticated (`unauth` too).
    @Test("emulator mode with rules: an unauthenticated WebSocket connection is not the admin")
    func emulatorDoesNotMakeEveryoneAdmin() throws {
        var h = CoreHarness(emulator: true, policy: try Self.policy())
        _ = h.connect(1)
        #expect(
            response(h.send(1, 1, .put(path: "status/u1", data: json(#"{"state":"online"}"#), hash: nil)), 1)?.status
                == "permission_denied")
        h.signIn(1, Self.user("u1"))
        #expect(
            response(h.send(1, 2, .put(path: "status/u1", data: json(#"{"state":"online"}"#), hash: nil)), 2)?.status
                == "ok")
        _ = h.send(1, 3, .unauth)
        #expect(
            response(h.send(1, 4, .put(path: "status/u1", data: json(#"{"state":"away"}"#), hash: nil)), 4)?.status
                == "permission_denied")
    }

    @Test("a user writes its own status, not another's; validation runs; the admin bypasses all")
    func ownStatus() throws {
        var h = CoreHarness(emulator: false, policy: try Self.policy())
        _ = h.connect(1)
        h.signIn(1, Self.user("u1"))
        #expect(
            response(h.send(1, 1, .put(path: "status/u1", data: json(#"{"state":"online"}"#), hash: nil)), 1)?.status
                == "ok")
        #expect(
            response(h.send(1, 2, .put(path: "status/u2", data: json(#"{"state":"online"}"#), hash: nil)), 2)?.status
                == "permission_denied")
        #expect(
            response(h.send(1, 3, .put(path: "status/u1", data: json(#"{"mood":"x"}"#), hash: nil)), 3)?.status
                == "permission_denied",
            ".validate requires a state")
        #expect(
            response(h.send(1, 4, .put(path: "status/u1", data: .null, hash: nil)), 4)?.status == "ok",
            ".validate does not run on deletes")
        // A multi-path update is checked as a whole: one denied path denies it all.
        let mixed = h.send(
            1, 5,
            .merge(
                path: "status",
                data: [(Path("u1/state"), JSONValue.string("away")), (Path("u2/state"), JSONValue.string("away"))]))
        #expect(response(mixed, 5)?.status == "permission_denied")
        #expect(h.core.data.child(at: "status/u1").isEmpty)
        _ = h.connect(2)
        h.signIn(2, .admin)
        #expect(response(h.send(2, 1, .put(path: "anything/at/all", data: 1, hash: nil)), 1)?.status == "ok")
    }

    @Test(
        "reads and listens need .read at the path; a query without .indexOn gets no_index; losing auth revokes listens")
    func readsAndIndexes() throws {
        var h = CoreHarness(emulator: false, policy: try Self.policy())
        _ = h.connect(1)
        #expect(
            response(h.send(1, 1, .listen(path: "status", query: .default, tag: nil, hash: "")), 1)?.status
                == "permission_denied")
        #expect(response(h.send(1, 2, .listen(path: "open", query: .default, tag: nil, hash: "")), 2)?.status == "ok")
        let indexed = h.send(
            1, 3,
            .listen(path: "scores", query: try QuerySpec(orderBy: .child("score")).limitToLast(2), tag: 1, hash: ""))
        #expect(response(indexed, 3)?.data == .object([]))
        let unindexed = h.send(
            1, 4,
            .listen(path: "scores", query: try QuerySpec(orderBy: .child("name")).limitToLast(2), tag: 2, hash: ""))
        #expect(response(unindexed, 4)?.data == json(#"{"w":["no_index"]}"#))
        h.signIn(1, Self.user("u1"))
        #expect(response(h.send(1, 5, .listen(path: "status", query: .default, tag: nil, hash: "")), 5)?.status == "ok")
        let revoked = h.send(1, 6, .unauth)
        #expect(revoked.contains { $0.1 == .listenRevoked(path: "status", query: .default) })
        #expect(!revoked.contains { $0.1 == .listenRevoked(path: "open", query: .default) })
    }

    @Test("new rules (PUT /.settings/rules.json) decide every later request and revoke the listens they refuse")
    func replacedRules() throws {
        var h = CoreHarness(emulator: true)
        _ = h.connect(1)
        #expect(response(h.send(1, 1, .listen(path: "open", query: .default, tag: nil, hash: "")), 1)?.status == "ok")
        #expect(response(h.send(1, 2, .listen(path: "closed", query: .default, tag: nil, hash: "")), 2)?.status == "ok")
        let rules = #"{"rules": {"open": {".read": true, ".write": true}}}"#
        let revoked = h.take(
            h.core.replacePolicy(RulesAccessPolicy(rules: try RulesSet.parse(source: rules)), now: h.now))
        #expect(revoked.map(\.1) == [.listenRevoked(path: "closed", query: .default)])
        #expect(response(h.send(1, 3, .put(path: "closed", data: 1, hash: nil)), 3)?.status == "permission_denied")
        #expect(response(h.send(1, 4, .put(path: "open", data: 1, hash: nil)), 4)?.status == "ok")
    }

    @Test("onDisconnect is checked when queued and again when it runs, with the auth the connection had")
    func onDisconnectChecks() throws {
        var h = CoreHarness(emulator: false, policy: try Self.policy())
        _ = h.connect(1)
        h.signIn(1, Self.user("u1"))
        #expect(
            response(h.send(1, 1, .onDisconnectPut(path: "status/u2", data: json(#"{"state":"offline"}"#))), 1)?.status
                == "permission_denied")
        #expect(
            response(h.send(1, 2, .onDisconnectPut(path: "status/u1", data: json(#"{"state":"offline"}"#))), 2)?.status
                == "ok")
        _ = h.connect(2)
        h.signIn(2, Self.user("u3"))
        #expect(
            response(h.send(2, 1, .onDisconnectPut(path: "status/u3", data: json(#"{"state":"offline"}"#))), 1)?.status
                == "ok")
        // The admin locks u3 meanwhile: its onDisconnect is denied when it runs; u1's runs.
        _ = h.connect(9)
        h.signIn(9, .admin)
        _ = h.send(9, 1, .put(path: "locked/u3", data: true, hash: nil))
        _ = h.disconnect(1)
        _ = h.disconnect(2)
        #expect(h.core.data.child(at: "status/u1") == node(#"{"state":"offline"}"#))
        #expect(h.core.data.child(at: "status/u3").isEmpty)
    }

    @Test("REST: rules for users; the admin's auth_variable_override acts as that user")
    func rest() throws {
        var h = CoreHarness(emulator: false, policy: try Self.policy())
        #expect(h.rest(.put, "status/u1", body: #"{"state":"on"}"#, principal: Self.user("u1")).status == 200)
        #expect(h.rest(.put, "status/u2", body: #"{"state":"on"}"#, principal: Self.user("u1")).status == 401)
        #expect(h.rest(.get, "status", principal: .unauthenticated).status == 401)
        let asU2 = Principal.override(json(#"{"uid":"u2"}"#))
        #expect(h.rest(.put, "status/u2", body: #"{"state":"on"}"#, principal: asU2).status == 200)
        #expect(
            h.rest(.get, "status", principal: .override(.null)).status == 401, "an override of null is unauthenticated")
    }
}
