import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// App Check enforcement (`hearth serve --app-check-key-file`): the verifier (valid, expired,
/// wrongly signed, malformed, the key itself) and the core (reads and writes refused without a
/// valid token, `appcheck` with an invalid one answered and shut down, `apc` at expiry,
/// nothing enforced when off).
@Suite("App Check: enforcement")
struct AppCheckServerTests {
    static let key = "an-app-check-key-of-32-bytes-or-more"
    static let now: Int64 = 1_700_000_000_000

    static func isInvalid(_ check: TokenCheck) -> Bool {
        if case .invalid = check { return true }
        return false
    }

    @Test(
        "a JWT signed with the key and not expired is valid; expired, wrongly signed, malformed, the key itself are not"
    )
    func verifier() async throws {
        let verifier = try await AppCheckVerifier(key: Self.key)
        let exp = Self.now / 1000 + 3600
        let good = try await JWTFixtures.hs256(secret: Self.key, claims: #"{"sub":"1:123:ios:abc","exp":\#(exp)}"#)
        guard case .valid(.user(let app)) = await verifier.check(good, now: Self.now) else {
            Issue.record("expected a valid token")
            return
        }
        #expect(app.uid == "1:123:ios:abc" && app.expiresAt == exp * 1000)
        let expired = try await JWTFixtures.hs256(
            secret: Self.key, claims: #"{"sub":"app","exp":\#(Self.now / 1000 - 1)}"#)
        #expect(await verifier.check(expired, now: Self.now) == .expired)
        let other = try await JWTFixtures.hs256(
            secret: "another-key-of-at-least-32-bytes!!!", claims: #"{"sub":"app","exp":\#(exp)}"#)
        #expect(Self.isInvalid(await verifier.check(other, now: Self.now)))
        #expect(
            Self.isInvalid(await verifier.check(JWTFixtures.unsigned(#"{"sub":"app","exp":\#(exp)}"#), now: Self.now)))
        #expect(Self.isInvalid(await verifier.check(Self.key, now: Self.now)), "the key is not a token")
        #expect(Self.isInvalid(await verifier.check("not a token", now: Self.now)))
        #expect(Self.isInvalid(await verifier.check(String(repeating: "a", count: 100_000), now: Self.now)))
    }

    /// A core enforcing App Check, with connection 1 open.
    func enforcing() -> CoreHarness {
        var h = CoreHarness(data: node(#"{"a":1}"#)) { $0.enforcesAppCheck = true }
        _ = h.connect(1)
        return h
    }

    /// Sends `appcheck` from connection 1 and answers its check with `result`.
    func appCheck(
        _ h: inout CoreHarness, _ number: Int, _ result: TokenCheck
    ) -> (
        messages: [(UInt64, ServerMessage)], closes: [ConnectionID]
    ) {
        let asked = h.core.receive(
            ConnectionID(1), frame: ClientRequest.appCheck(token: "t").message(number: number), now: h.now)
        #expect(asked.tokenChecks.count == 1 && asked.tokenChecks[0].isAppCheck)
        let out = h.core.tokenChecked(asked.tokenChecks[0].ticket, result, now: h.now)
        return (h.take(out).map { ($0.0.rawValue, $0.1) }, out.closes)
    }

    func app(expiresIn ms: Int64, _ h: CoreHarness) -> TokenCheck {
        .valid(.user(Principal.User(uid: "app", claims: .object([]), expiresAt: h.now + ms)))
    }

    @Test("without a token, reads and writes are refused permission_denied; with a valid one they go through")
    func missingThenValid() {
        var h = enforcing()
        let requests: [ClientRequest] = [
            .listen(path: "a", query: .default, tag: nil, hash: ""), .get(path: "a", query: .default),
            .put(path: "a", data: .number(2), hash: nil), .merge(path: .root, data: [("a", .number(2))]),
            .onDisconnectPut(path: "a", data: .null), .onDisconnectCancel(path: "a"),
        ]
        for (i, r) in requests.enumerated() {
            #expect(response(h.send(1, i + 1, r), i + 1)?.status == "permission_denied", "\(r)")
        }
        #expect(h.core.data == node(#"{"a":1}"#))
        #expect(response(h.send(1, 20, .stats), 20)?.status == "ok", "requests that touch no data are served")
        let accepted = appCheck(&h, 30, app(expiresIn: 60_000, h))
        #expect(response(accepted.messages, 30)?.status == "ok")
        #expect(response(h.send(1, 31, .put(path: "a", data: .number(2), hash: nil)), 31)?.status == "ok")
        #expect(response(h.send(1, 32, .get(path: "a", query: .default)), 32)?.status == "ok")
        #expect(h.core.data == node(#"{"a":2}"#))
        // unappcheck: refused again.
        #expect(response(h.send(1, 33, .unappCheck), 33)?.status == "ok")
        #expect(response(h.send(1, 34, .get(path: "a", query: .default)), 34)?.status == "permission_denied")
    }

    @Test("an invalid or expired token is answered invalid_token and the connection shut down")
    func invalidTokenShutsDown() {
        for result in [TokenCheck.invalid("bad signature"), .expired, .valid(.admin)] {
            var h = enforcing()
            let out = appCheck(&h, 1, result)
            #expect(response(out.messages, 1)?.status == "invalid_token")
            #expect(response(out.messages, 1)?.data == .string(ServerCore.invalidAppCheck))
            #expect(out.messages.contains { $0.1 == .shutdown(reason: ServerCore.invalidAppCheck) })
            #expect(out.closes == [ConnectionID(1)])
        }
    }

    @Test("an expired token is revoked with apc; reads are refused until a new one")
    func expiryRevokes() {
        var h = enforcing()
        _ = appCheck(&h, 1, app(expiresIn: 10_000, h))
        #expect(h.tick(9_999).messages.isEmpty)
        let tick = h.tick(1)
        #expect(
            tick.messages.map(\.1) == [.appCheckRevoked(status: "expired_token", reason: ServerCore.appCheckExpired)])
        #expect(tick.closes.isEmpty)
        #expect(h.tick(60_000).messages.isEmpty, "revoked once")
        #expect(response(h.send(1, 2, .get(path: "a", query: .default)), 2)?.status == "permission_denied")
        _ = appCheck(&h, 3, app(expiresIn: 10_000, h))
        #expect(response(h.send(1, 4, .get(path: "a", query: .default)), 4)?.status == "ok")
    }

    @Test("without enforcement appcheck and unappcheck are acknowledged and nothing is refused")
    func enforcementOff() {
        var h = CoreHarness(data: node(#"{"a":1}"#))
        _ = h.connect(1)
        #expect(response(h.send(1, 1, .get(path: "a", query: .default)), 1)?.status == "ok")
        let out = h.core.receive(
            ConnectionID(1), frame: ClientRequest.appCheck(token: "x").message(number: 2), now: h.now)
        #expect(out.tokenChecks.isEmpty)
        #expect(response(h.take(out).map { ($0.0.rawValue, $0.1) }, 2)?.status == "ok")
        #expect(response(h.send(1, 3, .unappCheck), 3)?.status == "ok")
        #expect(response(h.send(1, 4, .put(path: "a", data: .number(3), hash: nil)), 4)?.status == "ok")
    }
}
