import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// App Check on REST requests and event streams (the `X-Firebase-AppCheck` header): without a
/// valid token they are refused 401 before the rules are asked, an event stream ends with
/// `auth_revoked` when its token expires, and the admin is exempt on every path.
@Suite("App Check: REST and event streams")
struct AppCheckRESTTests {
    func enforcing(_ on: Bool = true) -> CoreHarness {
        CoreHarness(data: node(#"{"a":1}"#)) { $0.enforcesAppCheck = on }
    }

    /// A request from a signed-in user, with an App Check token expiring `expiresIn` ms from now
    /// (`nil`: none).
    func user(_ h: CoreHarness, appCheckExpiresIn ms: Int64?) -> (inout RESTRequest) -> Void {
        { r in
            r.principal = .user(Principal.User(uid: "u", claims: .object([]), expiresAt: nil))
            r.appCheckExpiresAt = ms.map { h.now + $0 }
        }
    }

    @Test("reads and writes without a valid App Check token are refused 401 and change nothing")
    func restRefusedWithout() {
        var h = enforcing()
        for expiresIn: Int64? in [nil, 0, -1] {
            let edit = user(h, appCheckExpiresIn: expiresIn)
            #expect(h.rest(.get, Path(keys: ["a"]), edit: edit).status == 401, "\(String(describing: expiresIn))")
            #expect(h.rest(.put, Path(keys: ["a"]), body: "2", edit: edit).status == 401)
            #expect(h.rest(.patch, .root, body: #"{"b":2}"#, edit: edit).status == 401)
            #expect(h.rest(.post, .root, body: "3", edit: edit).status == 401)
            #expect(h.rest(.delete, Path(keys: ["a"]), edit: edit).status == 401)
        }
        #expect(h.core.data == node(#"{"a":1}"#))
        #expect(h.durable.isEmpty)
        let valid = user(h, appCheckExpiresIn: 60_000)
        #expect(h.rest(.put, Path(keys: ["a"]), body: "2", edit: valid).status == 200)
        #expect(h.rest(.get, Path(keys: ["a"]), edit: valid).body == "2")
    }

    @Test("the admin needs no App Check token; without enforcement the token is not asked for")
    func adminAndOff() {
        var h = enforcing()
        #expect(h.rest(.put, Path(keys: ["a"]), body: "5", principal: .admin).status == 200)
        var off = enforcing(false)
        #expect(off.rest(.put, Path(keys: ["a"]), body: "6", edit: user(off, appCheckExpiresIn: nil)).status == 200)
        // A WebSocket signed in as the admin is served without `appcheck` too.
        _ = h.connect(1)
        h.signIn(1, .admin)
        #expect(response(h.send(1, 1, .get(path: "a", query: .default)), 1)?.status == "ok")
        _ = h.connect(2)
        #expect(response(h.send(2, 1, .get(path: "a", query: .default)), 1)?.status == "permission_denied")
    }

    func stream(_ h: inout CoreHarness, _ n: UInt64, appCheckExpiresIn ms: Int64?) -> Result<ServerOutput, RESTResponse>
    {
        var r = RESTRequest(method: .get, path: Path(keys: ["a"]), principal: .unauthenticated)
        user(h, appCheckExpiresIn: ms)(&r)
        return h.core.openEventStream(ConnectionID(n), r, now: h.now)
    }

    @Test("an event stream opens only with a valid token and ends with auth_revoked when it expires")
    func eventStream() throws {
        var h = enforcing()
        guard case .failure(let refusal) = stream(&h, 1, appCheckExpiresIn: nil) else {
            Issue.record("an event stream without an App Check token opened")
            return
        }
        #expect(refusal.status == 401)
        guard case .success(let opened) = stream(&h, 2, appCheckExpiresIn: 10_000) else {
            Issue.record("an event stream with a valid App Check token was refused")
            return
        }
        #expect(opened.renderedMessages().first?.1.hasPrefix("event: put") == true)
        let early = h.core.tick(now: h.now + 9_999)
        #expect(early.closes.isEmpty)
        let due = h.core.tick(now: h.now + 10_000)
        #expect(due.closes == [ConnectionID(2)])
        #expect(due.renderedMessages().contains { $0.1.hasPrefix("event: auth_revoked") })
    }
}

/// The same over a real socket: the header read, the token verified off the event loop.
@Suite("App Check: REST over a real socket", .serialized)
struct AppCheckRESTNetworkTests {
    func get(_ port: Int, appCheck: String?) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/a.json")!)
        // The answer, not its latency, is under test: URLSession's default 60 s ran out on a
        // loaded machine, where the token is verified on the starved cooperative threads.
        request.timeoutInterval = 600
        if let appCheck { request.setValue(appCheck, forHTTPHeaderField: "X-Firebase-AppCheck") }
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: body, as: UTF8.self))
    }

    @Test("no token, a forged one and an expired one are answered 401; a valid one reads")
    func headerChecked() async throws {
        let key = AppCheckServerTests.key
        let live = try await LiveServer(appCheckVerifier: try await AppCheckVerifier(key: key)) {
            $0.enforcesAppCheck = true
        }
        let now = Int64(Date().timeIntervalSince1970)
        let valid = try await JWTFixtures.hs256(secret: key, claims: #"{"sub":"app","exp":\#(now + 3600)}"#)
        let expired = try await JWTFixtures.hs256(secret: key, claims: #"{"sub":"app","exp":\#(now - 60)}"#)
        let forged = try await JWTFixtures.hs256(
            secret: "another-key-of-at-least-32-bytes!!!", claims: #"{"sub":"app","exp":\#(now + 3600)}"#)
        #expect(try await get(live.server.port, appCheck: nil).status == 401)
        let refusedForged = try await get(live.server.port, appCheck: forged)
        #expect(refusedForged.status == 401 && refusedForged.body.contains("Invalid App Check token"))
        let refusedExpired = try await get(live.server.port, appCheck: expired)
        #expect(refusedExpired.status == 401 && refusedExpired.body.contains("expired"))
        #expect(try await get(live.server.port, appCheck: valid) == (200, "null"))
        try await live.stop()
    }
}
