import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// onDisconnect and the expired-token pause at the protocol level (client core + store
/// against the server core, no sockets).
@Suite struct PresenceAndAuthCoreTests {
    func node(_ json: String) -> Node { try! Node(jsonText: json) }

    func queue(
        _ h: SyncHarness, _ c: Int, _ action: OnDisconnectOperation.Action, at path: Path
    ) throws -> OnDisconnectOperation {
        var op: OnDisconnectOperation?
        try h.clients[c].store.commit { (b: inout StoreBatch) throws(StoreError) in
            op = try b.queueOnDisconnect(action, at: path)
        }
        h.call(c) { core, now in core.onDisconnect(op!, now: now) }
        return op!
    }

    /// Queued offline, persisted across a restart, sent on connect after the writes,
    /// acknowledged; when the connection drops the server runs it and the client applies it
    /// to its cache too (Firebase's runOnDisconnectEvents), and forgets it.
    @Test func onDisconnectQueuedOfflineRunsOnDrop() throws {
        let h = SyncHarness()
        let c = try h.addClient()
        try h.write(c, .set(node(#""online""#)), at: "status")
        _ = try queue(h, c, .set(node(#"{".sv":"timestamp"}"#)), at: "lastOnline")
        _ = try queue(h, c, .remove, at: "status")
        try h.restart(c)
        #expect(h.clients[c].store.onDisconnectOperations().count == 2)
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        #expect(h.actions(c) == ["p", "o", "o"])
        #expect(h.clients[c].store.onDisconnectOperations().allSatisfy { $0.acknowledged })
        #expect(h.server.data.child(at: "status") == node(#""online""#))
        h.disconnect(c)
        h.run()
        #expect(h.server.data.child(at: "status").isEmpty)
        #expect(h.server.data.child(at: "lastOnline").leafValue?.doubleValue == Double(h.now))
        #expect(h.clients[c].store.onDisconnectOperations().isEmpty)
        #expect(try h.clients[c].store.serverValue(at: "status").isEmpty)
        #expect(try h.clients[c].store.serverValue(at: "lastOnline").leafValue?.doubleValue == Double(h.now))
        // Reconnecting does not send them again.
        h.advance(60_000)
        h.run()
        #expect(h.actions(c) == ["p", "o", "o"])
    }

    /// A cancel removes the operations at and below its path, on both sides.
    @Test func cancelRemovesOperationsBelow() throws {
        let h = SyncHarness()
        let c = try h.addClient()
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        _ = try queue(h, c, .set(node("1")), at: "a/b")
        _ = try queue(h, c, .set(node("2")), at: "x")
        _ = try queue(h, c, .cancel, at: "a")
        h.run()
        #expect(h.clients[c].store.onDisconnectOperations().map(\.path) == ["x"])
        h.disconnect(c)
        h.run()
        #expect(h.server.data.child(at: "a").isEmpty)
        #expect(h.server.data.child(at: "x") == node("2"))
    }

    /// While the token is expired, writes (and onDisconnect operations) are held — not sent —
    /// and go out in order once a new token arrives.
    @Test func expiredTokenHoldsWritesUntilANewOne() throws {
        let h = SyncHarness()
        var config = ClientCore.Configuration()
        config.usesTokens = true
        let c = try h.addClient(configuration: config)
        h.call(c) { core, now in core.goOnline(now: now) }
        let first = try #require(h.clients[c].lastTokenFetch).number
        h.call(c) { core, now in
            core.tokenFetched(AuthToken(token: "owner", expiresAt: now + 1_000), fetch: first, now: now)
        }
        h.run()
        try h.write(c, .set(node("1")), at: "w/1")
        h.run()
        #expect(h.actions(c) == ["gauth", "p"])
        h.advance(1_000)
        #expect(h.clients[c].events.contains(.writesPaused(true)))
        #expect(h.clients[c].tokenRequests.last == true, "a fresh token is asked for")
        try h.write(c, .set(node("2")), at: "w/2")
        _ = try queue(h, c, .remove, at: "w")
        try h.write(c, .set(node("3")), at: "w/3")
        h.run()
        #expect(h.actions(c) == ["gauth", "p"], "nothing sent while the token is expired")
        #expect(h.clients[c].store.pendingWrites().count == 2)
        let refresh = try #require(h.clients[c].lastTokenFetch).number
        h.call(c) { core, now in
            core.tokenFetched(AuthToken(token: "owner", expiresAt: now + 3_600_000), fetch: refresh, now: now)
        }
        h.run()
        #expect(h.actions(c) == ["gauth", "p", "gauth", "p", "p", "o"])
        #expect(h.clients[c].events.contains(.writesPaused(false)))
        #expect(h.server.data.child(at: "w").plainJSONString() == #"{"1":1,"2":2,"3":3}"#)
    }
}
