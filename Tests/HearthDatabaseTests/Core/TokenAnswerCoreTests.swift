import Hearth
@_spi(HearthInternals) import HearthServer
import HearthModel
import Testing
@testable import HearthDatabase

/// Token-provider answers that arrive after a newer token: the newest token wins (client core
/// + store against the server core, no sockets, no timing).
@Suite struct TokenAnswerCoreTests {
    func node(_ json: String) -> Node { try! Node(jsonText: json) }

    func tokenClient(_ h: SyncHarness) throws -> Int {
        var config = ClientCore.Configuration()
        config.usesTokens = true
        return try h.addClient(configuration: config)
    }

    /// The pauses and resumptions of writes client `c` reported, in order.
    func pauses(_ h: SyncHarness, _ c: Int) -> [ClientEvent] {
        h.clients[c].events.filter { $0 == .writesPaused(true) || $0 == .writesPaused(false) }
    }

    /// A refresh the core asked for (the token expired) that the provider answers only after
    /// the app handed over a newer token is stale: the newer token stays — in the core and the
    /// store — no `auth` goes out with the older one, and writes are not held again.
    @Test func lateRefreshAnswerDoesNotReplaceTheAppsNewerToken() throws {
        let h = SyncHarness()
        let c = try tokenClient(h)
        h.call(c) { core, now in core.goOnline(now: now) }
        let first = try #require(h.clients[c].lastTokenFetch).number
        let old = AuthToken(token: "owner", expiresAt: h.now + 1_000)
        h.call(c) { core, now in core.tokenFetched(old, fetch: first, now: now) }
        h.run()
        h.advance(1_000)
        let refresh = try #require(h.clients[c].lastTokenFetch)
        #expect(refresh.force && refresh.number > first, "the expired token is being refreshed")
        let newer = AuthToken(token: "owner", expiresAt: h.now + 3_600_000)
        h.call(c) { core, now in core.authTokenUpdated(newer, now: now) }
        h.run()
        #expect(h.actions(c) == ["gauth", "gauth"])
        // The refresh finishes now, with the token the provider held when it was asked.
        h.call(c) { core, now in core.tokenFetched(old, fetch: refresh.number, now: now) }
        h.advance(1)
        try h.write(c, .set(node("1")), at: "w")
        h.run()
        #expect(h.clients[c].core.token == newer)
        #expect(h.clients[c].store.auth() == newer)
        #expect(!h.clients[c].core.writesPaused(now: h.now))
        #expect(pauses(h, c) == [.writesPaused(true), .writesPaused(false)])
        #expect(h.actions(c) == ["gauth", "gauth", "p"], "no auth with the older token; the write goes out")
        #expect(h.server.data.child(at: "w") == node("1"))
    }

    /// Two requests in flight (an attempt abandoned by going offline, then a new one) answered
    /// out of order: the older request's late failure does not end the new attempt's wait, the
    /// newer answer opens the connection, and the older request's late answer changes nothing.
    @Test func olderRequestsLateAnswersAreDropped() throws {
        let h = SyncHarness()
        let c = try tokenClient(h)
        h.call(c) { core, now in core.goOnline(now: now) }
        let abandoned = try #require(h.clients[c].lastTokenFetch).number
        h.call(c) { core, now in core.goOffline(now: now) }
        h.call(c) { core, now in core.goOnline(now: now) }
        let current = try #require(h.clients[c].lastTokenFetch).number
        #expect(current > abandoned)
        h.call(c) { core, now in core.tokenFetchFailed(fetch: abandoned, now: now) }
        let newer = AuthToken(token: "owner", expiresAt: h.now + 3_600_000)
        h.call(c) { core, now in core.tokenFetched(newer, fetch: current, now: now) }
        h.run()
        #expect(h.clients[c].opened == 1)
        #expect(h.clients[c].core.isConnected)
        h.call(c) { core, now in
            core.tokenFetched(AuthToken(token: "owner", expiresAt: now), fetch: abandoned, now: now)
        }
        h.advance(1)
        h.run()
        #expect(h.clients[c].core.isConnected)
        #expect(h.clients[c].core.token == newer)
        #expect(!h.clients[c].core.writesPaused(now: h.now))
        #expect(pauses(h, c).isEmpty)
        #expect(h.actions(c) == ["gauth"])
    }

    /// The server's refusal of a token the app has replaced since (its `auth` crossed the
    /// app's newer token on the wire) is about the older token: it is ignored, as Firebase's
    /// `tryAuth` does — the newer token is neither forgotten nor its connection closed.
    @Test func refusalOfAReplacedTokenIsIgnored() throws {
        let h = SyncHarness()
        let c = try tokenClient(h)
        h.call(c) { core, now in core.goOnline(now: now) }
        let fetch = try #require(h.clients[c].lastTokenFetch).number
        h.call(c) { core, now in core.tokenFetched(AuthToken(token: "unknown", expiresAt: .max), fetch: fetch, now: now)
        }
        h.run(maxSteps: 1)  // the hello: the client sends `auth` with the token the server will refuse
        #expect(h.actions(c) == ["gauth"])
        let newer = AuthToken(token: "owner", expiresAt: .max)
        h.call(c) { core, now in core.authTokenUpdated(newer, now: now) }
        h.run()
        #expect(h.actions(c) == ["gauth", "gauth"])
        #expect(h.clients[c].core.isConnected && h.clients[c].opened == 1, "the connection stays open")
        #expect(h.clients[c].core.token == newer)
        #expect(h.clients[c].store.auth() == newer)
        #expect(h.clients[c].core.isAuthenticated)
    }
}
