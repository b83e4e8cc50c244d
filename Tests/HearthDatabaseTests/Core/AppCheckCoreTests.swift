import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// App Check in the sans-I/O core: the token asked for before every connection and sent after
/// the hello, refreshed halfway to its expiry and when the app says it changed, `unappcheck`
/// on removal, `apc` and refusals answered with a fresh token, and the shutdowns for an
/// invalid token that stop reconnecting after three (the Android SDK's `onKill`).
@Suite struct AppCheckCoreTests {
    func core(auth: Bool = false) -> ClientCore {
        var config = ClientCore.Configuration()
        config.usesAppCheck = true
        config.usesTokens = auth
        return ClientCore(configuration: config, pendingWrites: [], token: nil, seed: 1, hash: { _ in "" })
    }

    func hello() -> String { ServerMessage.hello(timestamp: 0, host: "", sessionID: "s1").text }

    /// The requests in `out`: number, action and body.
    func requests(_ out: ClientOutput) -> [(number: Int, action: String, body: JSONValue)] {
        out.messages.compactMap { text in
            guard let d = (try? JSONValue.parse(text))?["d"], let r = d["r"]?.doubleValue,
                let a = d["a"]?.stringValue
            else { return nil }
            return (Int(r), a, d["b"] ?? .null)
        }
    }

    func notices(_ out: ClientOutput) -> [String] {
        out.events.compactMap {
            if case .notice(let text) = $0 { return text }
            return nil
        }
    }

    func token(_ t: String, expiresAt: Int64 = .max) -> AuthToken { AuthToken(token: t, expiresAt: expiresAt) }

    /// The App Check request of the attempt that follows a closed connection (`closed`: the
    /// core's answer to the close), at the time it is made (the backoff's, which may be none).
    func nextAttempt(_ core: inout ClientCore, after closed: ClientOutput, now: Int64) throws -> (TokenFetch, Int64) {
        if let fetch = closed.fetchAppCheckToken { return (fetch, now) }
        let due = try #require(core.nextDeadline, "an attempt is scheduled")
        return (try #require(core.tick(now: due).fetchAppCheckToken), due)
    }

    /// Goes online, answers the App Check request with `appCheck`, opens and takes the hello
    /// at `now`; returns the connection and the hello's output.
    func connect(
        _ core: inout ClientCore, _ appCheck: AuthToken?, now: Int64 = 0
    ) throws -> (
        ConnectionID, ClientOutput
    ) {
        var out = core.goOnline(now: now)
        if out.fetchAppCheckToken == nil { out = core.tick(now: core.nextDeadline ?? now) }
        let fetch = try #require(out.fetchAppCheckToken)
        let link = try #require(core.appCheckTokenFetched(appCheck, fetch: fetch.number, now: now).open)
        _ = core.connectionOpened(link, now: now)
        return (link, core.received(hello(), on: link, now: now))
    }

    /// The token is asked for before the connection opens, and goes out as
    /// `{"r":N,"a":"appcheck","b":{"token":T}}` after the hello, on every connection.
    @Test func tokenIsSentAfterTheHelloOnEveryConnection() throws {
        var core = core()
        let first = core.goOnline(now: 0)
        #expect(first.open == nil, "the connection waits for the App Check token")
        #expect(first.fetchAppCheckToken == TokenFetch(force: false, number: 1))
        let link = try #require(core.appCheckTokenFetched(token("T1"), fetch: 1, now: 0).open)
        _ = core.connectionOpened(link, now: 0)
        let hello = core.received(hello(), on: link, now: 0)
        let sent = requests(hello)
        #expect(sent.map(\.action) == ["appcheck"])
        #expect(sent.first?.body == .object([JSONMember(key: "token", value: "T1")]))
        #expect(core.appCheckToken == token("T1"))
        // The next connection asks again and sends what the provider answers.
        let closed = core.connectionClosed(link, now: 1)
        let (fetch, _) = try nextAttempt(&core, after: closed, now: 1)
        #expect(!fetch.force)
        let second = try #require(core.appCheckTokenFetched(token("T2"), fetch: fetch.number, now: 2).open)
        _ = core.connectionOpened(second, now: 2)
        let again = requests(core.received(self.hello(), on: second, now: 2))
        #expect(again.map(\.action) == ["appcheck"])
        #expect(again.first?.body["token"] == "T2")
    }

    /// With an auth provider too, both are asked for at once and the connection opens when
    /// both have answered, in either order; `auth` goes before `appcheck`.
    @Test func connectionWaitsForBothTokens() throws {
        var core = core(auth: true)
        let out = core.goOnline(now: 0)
        let auth = try #require(out.fetchToken)
        let appCheck = try #require(out.fetchAppCheckToken)
        #expect(core.appCheckTokenFetched(token("A"), fetch: appCheck.number, now: 0).open == nil)
        let link = try #require(core.tokenFetched(token("owner"), fetch: auth.number, now: 0).open)
        _ = core.connectionOpened(link, now: 0)
        #expect(requests(core.received(hello(), on: link, now: 0)).map(\.action) == ["gauth", "appcheck"])
    }

    /// A provider that fails: the connection goes ahead without an App Check token (and
    /// sends none), with a notice.
    @Test func providerFailureConnectsWithoutAToken() throws {
        var core = core()
        let fetch = try #require(core.goOnline(now: 0).fetchAppCheckToken)
        let out = core.appCheckTokenFetchFailed(fetch: fetch.number, now: 0)
        let link = try #require(out.open)
        #expect(notices(out) == ["could not get an App Check token: connecting without one"])
        _ = core.connectionOpened(link, now: 0)
        #expect(requests(core.received(hello(), on: link, now: 0)).isEmpty)
    }

    /// Halfway to its expiry the token is refreshed: a forced request, and the new token goes
    /// out as `appcheck` on the open connection.
    @Test func tokenIsRefreshedHalfwayToItsExpiry() throws {
        var core = core()
        _ = try connect(&core, token("T1", expiresAt: 10_000))
        #expect(core.nextDeadline == 5_000)
        #expect(core.tick(now: 4_999).fetchAppCheckToken == nil)
        let refresh = try #require(core.tick(now: 5_000).fetchAppCheckToken)
        #expect(refresh.force)
        #expect(core.tick(now: 5_001).fetchAppCheckToken == nil, "one refresh at a time")
        let out = core.appCheckTokenFetched(token("T2", expiresAt: 30_000), fetch: refresh.number, now: 6_000)
        #expect(requests(out).map(\.action) == ["appcheck"])
        #expect(requests(out).first?.body["token"] == "T2")
        #expect(core.nextDeadline == 18_000)
    }

    /// The app's token listener: a new token goes out at once, and an answer still due from
    /// the provider (asked before it) is dropped; removing the token sends `unappcheck`.
    @Test func appTokenChangesAndRemovalGoOutAtOnce() throws {
        var core = core()
        _ = try connect(&core, token("T1", expiresAt: 10_000))
        let refresh = try #require(core.tick(now: 5_000).fetchAppCheckToken)
        let updated = core.appCheckTokenUpdated(token("T2"), now: 5_001)
        #expect(requests(updated).map(\.action) == ["appcheck"])
        #expect(requests(updated).first?.body["token"] == "T2")
        let late = core.appCheckTokenFetched(token("T-late"), fetch: refresh.number, now: 5_002)
        #expect(late.messages.isEmpty)
        #expect(core.appCheckToken == token("T2"))
        let removed = core.appCheckTokenUpdated(nil, now: 5_003)
        #expect(requests(removed).map(\.action) == ["unappcheck"])
        #expect(requests(removed).first?.body == .object([]))
        #expect(core.appCheckToken == nil)
    }

    /// `apc` (the server revoked the token): logged, the token forgotten, the connection kept,
    /// and a fresh token asked for (forced) and sent.
    @Test func revocationFetchesAndSendsAFreshToken() throws {
        var core = core()
        let (link, _) = try connect(&core, token("T1"))
        let apc = ServerMessage.appCheckRevoked(status: "expired_token", reason: "App Check token expired").text
        let out = core.received(apc, on: link, now: 1)
        #expect(out.close == nil && core.isConnected)
        #expect(notices(out) == ["App Check token revoked: expired_token/App Check token expired"])
        #expect(core.appCheckToken == nil)
        let fetch = try #require(out.fetchAppCheckToken)
        #expect(fetch.force)
        let sent = requests(core.appCheckTokenFetched(token("T2"), fetch: fetch.number, now: 2))
        #expect(sent.map(\.action) == ["appcheck"])
        #expect(sent.first?.body["token"] == "T2")
    }

    /// Refusals of the token as invalid: each asks for a fresh token, until the third in a
    /// row, which logs that the credentials are invalid and asks no more; an accepted token
    /// resets the count.
    @Test func repeatedRefusalsStopAskingAfterTheThreshold() throws {
        var core = core()
        let (link, hello) = try connect(&core, token("bad0"))
        var request = try #require(requests(hello).first).number
        for i in 1...3 {
            let refusal = ServerMessage.response(
                number: request, status: "invalid_token", data: "Invalid appcheck token")
            let out = core.received(refusal.text, on: link, now: Int64(i))
            #expect(out.close == nil, "the server, not the client, closes where App Check is enforced")
            if i < 3 {
                let fetch = try #require(out.fetchAppCheckToken)
                #expect(fetch.force)
                let next = core.appCheckTokenFetched(token("bad\(i)"), fetch: fetch.number, now: Int64(i))
                request = try #require(requests(next).first).number
            } else {
                #expect(out.fetchAppCheckToken == nil)
                #expect(notices(out).last?.hasPrefix("Provided App Check credentials are invalid") == true)
            }
        }
        // The app's listener brings a good token; its acceptance resets the count.
        let good = try #require(requests(core.appCheckTokenUpdated(token("good"), now: 10)).first).number
        _ = core.received(ServerMessage.response(number: good, status: "ok", data: nil).text, on: link, now: 11)
        let refused = try #require(requests(core.appCheckTokenUpdated(token("bad3"), now: 12)).first).number
        let again = core.received(
            ServerMessage.response(number: refused, status: "invalid_token", data: "x").text, on: link, now: 13)
        #expect(again.fetchAppCheckToken != nil, "counting starts again after an accepted token")
    }

    /// Shutdowns for an invalid App Check token: the first three in a row reconnect with a
    /// fresh (forced) token; the fourth stands — no attempt follows until the app goes
    /// online again — and is logged.
    @Test func repeatedInvalidTokenShutdownsStopReconnecting() throws {
        var core = core()
        var now: Int64 = 0
        var (link, _) = try connect(&core, token("bad"), now: now)
        let kill = ServerMessage.shutdown(reason: ClientCore.invalidAppCheckShutdown).text
        for i in 1...3 {
            now += 1
            let out = core.received(kill, on: link, now: now)
            #expect(out.close == link)
            #expect(notices(out) == ["Detected invalid App Check token. Reconnecting (\(3 - i) attempts remaining)"])
            #expect(core.shutdownReason == nil)
            let fetch: TokenFetch
            (fetch, now) = try nextAttempt(&core, after: out, now: now)
            #expect(fetch.force)
            link = try #require(core.appCheckTokenFetched(token("bad"), fetch: fetch.number, now: now).open)
            _ = core.connectionOpened(link, now: now)
            _ = core.received(hello(), on: link, now: now)
        }
        let last = core.received(kill, on: link, now: now + 1)
        #expect(last.close == link)
        #expect(notices(last) == ["server shutdown: \(ClientCore.invalidAppCheckShutdown)"])
        #expect(core.shutdownReason == ClientCore.invalidAppCheckShutdown)
        #expect(core.nextDeadline == nil, "no attempt follows")
        #expect(core.goOnline(now: now + 2).fetchAppCheckToken != nil, "the app asked again")
    }
}
