import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// What Firebase's production servers say beyond data and answers — resets, the hello's host,
/// shutdown, errors, security debug output, App Check revocations, listen warnings, unknown
/// messages — fed to the sans-I/O core, checking what it answers.
@Suite struct ServerVocabularyCoreTests {
    static let front = "front.example:9000"
    static let owner = "owner.example:9001"

    /// A core configured for `front`, optionally starting at a cached host.
    func core(cached: String? = nil, maxResets: Int = 8) -> ClientCore {
        var config = ClientCore.Configuration()
        config.host = Self.front
        config.maxResetsPerAttempt = maxResets
        return ClientCore(
            configuration: config, pendingWrites: [], token: nil, seed: 1, host: cached, hash: { _ in "" })
    }

    func hello(_ host: String, session: String = "s1") -> String {
        ServerMessage.hello(timestamp: 0, host: host, sessionID: session).text
    }

    /// A core connected (hello received) on the connection it returns.
    func connected(_ core: inout ClientCore, helloHost: String = front) throws -> ConnectionID {
        let link = try #require(core.goOnline(now: 0).open)
        _ = core.connectionOpened(link, now: 0)
        _ = core.received(hello(helloHost), on: link, now: 0)
        #expect(core.isConnected)
        return link
    }

    func warnings(_ out: ClientOutput) -> [String] {
        out.events.compactMap {
            switch $0 {
            case .protocolWarning(let w), .notice(let w): w
            default: nil
            }
        }
    }

    // MARK: - Codec

    /// The control messages and pushes beyond data decode from Firebase's bytes and encode back.
    @Test func codecReadsTheVocabulary() throws {
        #expect(
            try ServerMessage.decode(#"{"t":"c","d":{"t":"r","d":"s-usc1c-nss-1.firebaseio.com"}}"#)
                == .reset(host: "s-usc1c-nss-1.firebaseio.com"))
        #expect(try ServerMessage.decode(#"{"t":"c","d":{"t":"e","d":"boom"}}"#) == .serverError("boom"))
        #expect(
            try ServerMessage.decode(#"{"t":"d","d":{"a":"sd","b":{"msg":"rule /a failed"}}}"#)
                == .securityDebug(message: "rule /a failed"))
        #expect(
            try ServerMessage.decode(#"{"t":"d","d":{"a":"apc","b":{"s":"invalid_token","d":"bad"}}}"#)
                == .appCheckRevoked(status: "invalid_token", reason: "bad"))
        for m: ServerMessage in [
            .reset(host: "h:1"), .serverError("x"), .securityDebug(message: "y"),
            .appCheckRevoked(status: "s", reason: "d"),
        ] {
            #expect(try ServerMessage.decode(m.text) == m)
        }
        #expect(throws: WireError.self) { try ServerMessage.decode(#"{"t":"c","d":{"t":"r","d":{}}}"#) }
    }

    // MARK: - Redirects

    /// A reset before the hello (how a front end answers a client that reached the wrong
    /// server): the attempt closes and starts again at once at the named host, which the core
    /// keeps; the hello there then connects without another change.
    @Test func resetBeforeHelloReconnectsAtOnceToTheNamedHost() throws {
        var core = core()
        let first = try #require(core.goOnline(now: 0).open)
        _ = core.connectionOpened(first, now: 0)
        let out = core.received(ServerMessage.reset(host: Self.owner).text, on: first, now: 5)
        #expect(out.close == first)
        let second = try #require(out.open)
        #expect(second != first)
        #expect(out.events == [.hostChanged(Self.owner)])
        #expect(core.host == Self.owner)
        _ = core.connectionOpened(second, now: 6)
        let connected = core.received(hello(Self.owner), on: second, now: 7)
        #expect(core.isConnected)
        #expect(!connected.events.contains { if case .hostChanged = $0 { true } else { false } })
    }

    /// A reset after the hello: the connection closes and the next attempt (after the backoff)
    /// goes to the named host.
    @Test func resetAfterHelloClosesAndRetriesThere() throws {
        var core = core()
        let link = try connected(&core)
        let out = core.received(ServerMessage.reset(host: Self.owner).text, on: link, now: 10)
        #expect(out.close == link)
        #expect(out.events.contains(.connected(false)))
        #expect(out.events.contains(.hostChanged(Self.owner)))
        #expect(!core.isConnected && core.host == Self.owner)
    }

    /// A hello naming another host: kept for the next connections (Firebase's `onHandshake_`),
    /// without reconnecting now.
    @Test func helloHostIsKeptWithoutReconnecting() throws {
        var core = core()
        let link = try #require(core.goOnline(now: 0).open)
        let out = core.received(hello("s-shard.example"), on: link, now: 0)
        #expect(out.close == nil && out.open == nil && core.isConnected)
        #expect(out.events.first == .hostChanged("s-shard.example"))
        #expect(core.host == "s-shard.example")
    }

    /// A cached host that a hello names as the configured one is dropped (the runtime removes
    /// its file).
    @Test func helloNamingTheConfiguredHostDropsTheCachedOne() throws {
        var core = core(cached: Self.owner)
        #expect(core.host == Self.owner)
        let link = try #require(core.goOnline(now: 0).open)
        let out = core.received(hello(Self.front.uppercased()), on: link, now: 0)
        #expect(out.events.contains(.hostChanged(nil)))
        #expect(core.host == nil)
    }

    /// A connection to the cached host that never opens falls back to the configured host
    /// (Firebase's `onConnectionLost_`); one that opened and then closed does not.
    @Test func failedConnectToTheCachedHostFallsBack() throws {
        var kept = core(cached: Self.owner)
        let opened = try #require(kept.goOnline(now: 0).open)
        _ = kept.connectionOpened(opened, now: 0)
        let dropped = kept.connectionClosed(opened, now: 1)
        #expect(kept.host == Self.owner, "it reached the host: not a failed connect")
        #expect(!dropped.events.contains { if case .hostChanged = $0 { true } else { false } })

        var core = core(cached: Self.owner)
        let link = try #require(core.goOnline(now: 0).open)
        let out = core.connectionClosed(link, now: 1)
        #expect(out.events.contains(.hostChanged(nil)))
        #expect(core.host == nil)
    }

    /// A cached host is taken only when the configuration names a host and it parses.
    @Test func cachedHostMustBeValid() {
        #expect(core(cached: "bad host/").host == nil)
        #expect(core(cached: Self.front).host == nil, "the configured host is not a redirect")
        let plain = ClientCore(pendingWrites: [], token: nil, seed: 1, host: Self.owner, hash: { _ in "" })
        #expect(plain.host == nil)
    }

    /// Servers that keep redirecting cannot make the client loop: past the bound, the attempt
    /// fails and the next waits the backoff.
    @Test func resetsInOneAttemptAreBounded() throws {
        var core = core(maxResets: 3)
        var link = try #require(core.goOnline(now: 0).open)
        for i in 0..<3 {
            let out = core.received(
                ServerMessage.reset(host: i % 2 == 0 ? Self.owner : Self.front).text, on: link, now: 0)
            link = try #require(out.open, "reset \(i + 1) reopens at once")
        }
        let delay = core.backoff.delayMs
        let out = core.received(ServerMessage.reset(host: Self.owner).text, on: link, now: 0)
        #expect(out.close == link)
        #expect(core.backoff.delayMs > delay, "a failed attempt: the backoff grows")
        #expect(warnings(out).contains { $0.contains("resets") })
    }

    /// A reset to something that is not a host, or to a core not told its host, is logged and
    /// changes nothing.
    @Test func resetToAnInvalidHostIsIgnored() throws {
        var core = core()
        let link = try connected(&core)
        let out = core.received(ServerMessage.reset(host: "not a host/").text, on: link, now: 0)
        #expect(out.close == nil && core.isConnected && core.host == nil)
        #expect(warnings(out).count == 1)

        var plain = ClientCore(pendingWrites: [], token: nil, seed: 1, hash: { _ in "" })
        let other = try #require(plain.goOnline(now: 0).open)
        let ignored = plain.received(ServerMessage.reset(host: Self.owner).text, on: other, now: 0)
        #expect(ignored.close == nil && plain.host == nil)
    }

    // MARK: - Shutdown, errors, debug output

    /// Control `s`: logged, the connection closes and no attempt follows (Firebase's
    /// `interrupt(SERVER_KILL_INTERRUPT_REASON)`), until the app goes online again.
    @Test func shutdownStopsReconnecting() throws {
        var core = core()
        let link = try connected(&core)
        let out = core.received(ServerMessage.shutdown(reason: "Database disabled").text, on: link, now: 10)
        #expect(out.close == link)
        #expect(out.events.contains(.connected(false)))
        #expect(warnings(out) == ["server shutdown: Database disabled"])
        #expect(core.shutdownReason == "Database disabled")
        #expect(core.nextDeadline == nil, "nothing scheduled")
        #expect(core.tick(now: 10_000_000).open == nil)
        #expect(core.goOnline(now: 10_000_001).open != nil, "the app asked again")
        #expect(core.shutdownReason == nil)
    }

    /// Control `e`, push `sd` and push `apc` are logged; the connection stays.
    @Test func serverErrorDebugAndAppCheckAreLoggedOnly() throws {
        var core = core()
        let link = try connected(&core)
        let messages: [ServerMessage] = [
            .serverError("overloaded"), .securityDebug(message: "read /a denied"),
            .appCheckRevoked(status: "invalid_token", reason: "expired"),
        ]
        var logged: [String] = []
        for m in messages {
            let out = core.received(m.text, on: link, now: 1)
            #expect(out.close == nil && out.open == nil && out.commits.isEmpty && out.messages.isEmpty)
            logged += warnings(out)
        }
        #expect(
            logged == [
                "Server Error: overloaded", "FIREBASE: read /a denied",
                "App Check token revoked: invalid_token/expired",
            ])
        #expect(core.isConnected)
    }

    /// Unknown control messages and pushes are logged and skipped, never closing the
    /// connection (Firebase's clients log "Unknown control packet command" and "Unrecognized
    /// action received from server").
    @Test func unknownMessagesAreIgnored() throws {
        var core = core()
        let link = try connected(&core)
        for text in [
            #"{"t":"c","d":{"t":"zz","d":{}}}"#, #"{"t":"d","d":{"a":"zz","b":{"p":"a"}}}"#, #"{"t":"q","d":{}}"#,
        ] {
            let out = core.received(text, on: link, now: 1)
            #expect(out.close == nil && out.open == nil && out.commits.isEmpty)
            #expect(warnings(out).count == 1)
        }
        #expect(core.isConnected)
    }

    // MARK: - Listens and auth

    /// A listen answered with the `no_index` warning logs the rule to add, as Firebase's
    /// clients do; the listen completes.
    @Test func noIndexWarningIsLogged() throws {
        var core = core()
        let link = try connected(&core)
        let location = QueryLocation(path: "dinosaurs", query: try QuerySpec(orderBy: .child("height")).limitToFirst(2))
        let sent = core.listen(location, now: 1)
        let numbers = sent.messages.compactMap { (try? JSONValue.parse($0))?["d"]?["r"]?.doubleValue }
        let number = try #require(numbers.first)
        let answer = core.received(
            ServerMessage.response(
                number: Int(number), status: "ok", data: .object([JSONMember(key: "w", value: .array(["no_index"]))])
            ).text,
            on: link, now: 2)
        #expect(warnings(answer).count == 1)
        #expect(warnings(answer).first?.contains(#"".indexOn": "height" at /dinosaurs"#) == true)
        #expect(answer.commits.contains { if case .listenComplete = $0 { true } else { false } })
    }

    /// Push `c`: the listen is gone and its observers hear `permission_denied`; push `ac`: the
    /// connection closes, `.info/connected` turns false, and the next attempt forces a fresh
    /// token (Firebase's `onListenRevoked_` and `onAuthRevoked_`).
    @Test func listenAndAuthRevocations() throws {
        var core = core()
        let link = try connected(&core)
        let location = QueryLocation(path: "private", query: .default)
        _ = core.listen(location, now: 1)
        let revoked = core.received(
            ServerMessage.listenRevoked(path: "private", query: .default).text, on: link, now: 2)
        #expect(revoked.events.count == 1)
        if case .listenRevoked(let at, .permissionDenied)? = revoked.events.first {
            #expect(at == location)
        } else {
            Issue.record("expected a permission_denied revocation, got \(revoked.events)")
        }
        #expect(core.listenLocations.isEmpty)
        let auth = core.received(
            ServerMessage.authRevoked(status: "invalid_token", reason: "revoked").text, on: link, now: 3)
        #expect(auth.close == link)
        #expect(auth.events.contains(.connected(false)))
        #expect(core.forceTokenRefresh)
    }

    /// The session id of the last hello goes in the next connection's URL as `ls`.
    @Test func lastSessionIDIsSentOnReconnect() throws {
        var core = core()
        let link = try #require(core.goOnline(now: 0).open)
        _ = core.received(hello(Self.front, session: "abc123"), on: link, now: 0)
        _ = core.connectionClosed(link, now: 1)
        #expect(core.lastSessionID == "abc123")
        let endpoint = ServerEndpoint(secure: false, host: "front.example", port: 9000, namespace: "demo")
        #expect(endpoint.webSocketPath(lastSessionID: core.lastSessionID) == "/.ws?v=5&ls=abc123&ns=demo")
    }

    /// A redirect keeps the scheme and namespace; the port defaults by scheme; IPv6 in brackets.
    @Test func endpointRedirects() {
        let secure = ServerEndpoint(secure: true, host: "demo.example.com", port: 443, namespace: "demo")
        #expect(
            secure.redirected(to: "s-1.example.com")
                == ServerEndpoint(secure: true, host: "s-1.example.com", port: 443, namespace: "demo"))
        #expect(
            secure.redirected(to: "[::1]:9001")
                == ServerEndpoint(secure: true, host: "::1", port: 9001, namespace: "demo"))
        #expect(secure.redirected(to: "a b") == nil)
        #expect(secure.redirected(to: "host:99999") == nil)
        #expect(!ServerEndpoint.isValidHost(""))
    }
}
