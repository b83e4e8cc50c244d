import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// The sans-I/O client core against the sans-I/O server core (SyncHarness: no sockets).
@Suite struct ClientCoreTests {
    func node(_ json: String) -> Node { try! Node(jsonText: json) }

    /// Writes made offline are saved, then sent after the hello in write-id order, pipelined
    /// (all before the first ack), and acknowledged into the store: none pending, the server
    /// holds them, the cache holds them as server data.
    @Test func offlineWritesDrainInOrderOnConnect() throws {
        let h = SyncHarness()
        let c = try h.addClient()
        for i in 0..<5 { try h.write(c, .set(node("\(i)")), at: "counter") }
        try h.write(
            c, .update([ChildUpdate(path: "a", node: node("1")), ChildUpdate(path: "b/c", node: node("2"))]), at: "m")
        #expect(h.sent[c].isEmpty)
        h.call(c) { core, now in core.goOnline(now: now) }
        #expect(h.clients[c].opened == 1)
        h.run()
        #expect(h.actions(c) == ["p", "p", "p", "p", "p", "m"])
        #expect(h.clients[c].store.pendingWrites().isEmpty)
        #expect(h.server.data.child(at: "counter") == node("4"))
        #expect(h.server.data.child(at: "m").plainJSONString() == #"{"a":1,"b":{"c":2}}"#)
        #expect(try h.clients[c].store.serverValue(at: "counter") == node("4"))
        let completions = h.clients[c].events.compactMap { e -> Int64? in
            if case .writeCompleted(let id, nil) = e { return id } else { return nil }
        }
        #expect(completions == [1, 2, 3, 4, 5, 6])
        #expect(h.clients[c].events.contains(.connected(true)))
    }

    /// Reconnect restores state in Firebase's order: auth, listens (with hashes), writes, gets.
    @Test func reconnectOrderIsAuthListensWritesGets() throws {
        let h = SyncHarness()
        var config = ClientCore.Configuration()
        config.usesTokens = true
        let c = try h.addClient(configuration: config)
        h.call(c) { core, now in core.listen(QueryLocation(path: "a", query: .default), now: now) }
        try h.write(c, .set(node("1")), at: "w")
        h.call(c) { core, now in core.get(1, at: QueryLocation(path: "g", query: .default), now: now) }
        h.call(c) { core, now in core.goOnline(now: now) }
        #expect(h.clients[c].tokenRequests == [false])
        #expect(h.clients[c].opened == 0, "the token comes before the connection")
        let fetch = try #require(h.clients[c].lastTokenFetch).number
        h.call(c) { core, now in core.tokenFetched(AuthToken(token: "owner", expiresAt: .max), fetch: fetch, now: now) }
        #expect(h.clients[c].opened == 1)
        h.run()
        #expect(h.actions(c) == ["gauth", "q", "p", "g"])
        #expect(h.clients[c].events.contains(.authenticated(true)))
        #expect(h.clients[c].store.auth()?.token == "owner", "the token is kept in the store")
    }

    /// A listen whose cached data is unchanged costs no data on reconnect: the hash matches
    /// and the server answers only `ok`.
    @Test func unchangedCacheIsNotResent() throws {
        let h = SyncHarness(data: node(#"{"scores":{"a":1,"b":2}}"#))
        let c = try h.addClient()
        let scores = QueryLocation(path: "scores", query: .default)
        // The runtime's observe tracks the query in the store (addListener) and listens.
        _ = try h.clients[c].store.trackQuery(at: scores, active: true)
        h.call(c) { core, now in core.listen(scores, now: now) }
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        #expect(try h.clients[c].store.serverValue(at: "scores") == node(#"{"a":1,"b":2}"#))
        #expect(h.clients[c].store.trackedQueries().first { $0.location == scores }?.complete == true)
        h.disconnect(c)
        h.advance(60_000)
        let mark = h.received[c].count
        h.run()
        #expect(h.clients[c].opened == 2)
        let after = h.received[c][mark...].compactMap { try? ServerMessage.decode($0) }
        #expect(after.contains { if case .hello = $0 { true } else { false } })
        #expect(after.contains { if case .response(_, "ok", _) = $0 { true } else { false } })
        #expect(!after.contains { if case .set = $0 { true } else { false } }, "matching hash: no data re-sent")
        #expect(Database.cachedHash(h.clients[c].store, scores) == node(#"{"a":1,"b":2}"#).hash)
    }

    /// Backoff: a failed attempt waits a random part of 1 s, then ×1.3 each time up to 30 s;
    /// a connection that stayed up 30 s starts over at 1 s.
    @Test func backoffGrowsAndResets() throws {
        var core = ClientCore(pendingWrites: [], token: nil, seed: 3, hash: { _ in "" })
        var now: Int64 = 0
        var out = core.goOnline(now: now)
        var link = try #require(out.open)
        var waits: [Int64] = []
        for _ in 0..<30 {
            out = core.connectionClosed(link, now: now)
            guard case .waiting(let until) = core.phase else {
                link = try #require(out.open)  // a zero wait retries at once
                waits.append(0)
                continue
            }
            waits.append(until - now)
            now = until
            out = core.tick(now: now)
            link = try #require(out.open)
        }
        #expect(waits[0] <= 1_000)
        #expect(waits.allSatisfy { $0 <= 30_000 })
        #expect(core.backoff.delayMs == 30_000)
        // A stable connection resets the delay.
        _ = core.received(ServerMessage.hello(timestamp: now, host: "h", sessionID: "s").text, on: link, now: now)
        now += 31_000
        _ = core.connectionClosed(link, now: now)
        #expect(core.backoff.delayMs == 1_300, "reset to 1 s, then ×1.3 for this attempt")
    }

    /// A get made offline fails 3 s after it was made even while connection attempts keep
    /// failing: a failed attempt does not push its deadline out (it did, so `getData` offline
    /// waited until the backoff exceeded 3 s — about 13 s — before answering from the cache).
    @Test func offlineGetTimeoutSurvivesFailedAttempts() throws {
        var core = ClientCore(pendingWrites: [], token: nil, seed: 3, hash: { _ in "" })
        var now: Int64 = 0
        _ = core.get(1, at: QueryLocation(path: "x", query: .default), now: now)
        var out = core.goOnline(now: now)
        var failedAt: Int64?
        while now < 20_000 && failedAt == nil {
            now += 100
            var events = out.events
            if let link = out.open {
                out = core.connectionClosed(link, now: now)  // refused
                events += out.events
            }
            let ticked = core.tick(now: now)
            events += ticked.events
            if out.open == nil { out = ticked }
            if events.contains(.getCompleted(id: 1, .failure(.offline))) { failedAt = now }
        }
        #expect(failedAt == 3_000, "the get failed at \(failedAt.map(String.init) ?? "never") ms")
    }

    /// A keepalive goes out after 45 s without sending; a get made offline fails after 3 s.
    @Test func keepaliveAndOfflineGetTimeout() throws {
        let h = SyncHarness()
        let c = try h.addClient()
        h.call(c) { core, now in core.get(7, at: QueryLocation(path: "x", query: .default), now: now) }
        h.advance(2_999)
        #expect(!h.clients[c].events.contains { if case .getCompleted = $0 { true } else { false } })
        h.advance(1)
        #expect(h.clients[c].events.contains(.getCompleted(id: 7, .failure(.offline))))
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        let sentBefore = h.sent[c].count
        h.advance(44_999)
        #expect(h.sent[c].count == sentBefore)
        h.advance(1)
        #expect(h.sent[c].last == "0")
    }

    /// Messages from an older connection are ignored; data for an unknown tag is dropped.
    @Test func staleConnectionsAndUnknownTagsAreIgnored() throws {
        var core = ClientCore(pendingWrites: [], token: nil, seed: 1, hash: { _ in "" })
        let first = try #require(core.goOnline(now: 0).open)
        _ = core.connectionClosed(first, now: 0)
        _ = core.tick(now: 1_000_000)
        let second = try #require(core.currentConnection)
        #expect(first != second)
        let stale = core.received(ServerMessage.hello(timestamp: 5, host: "h", sessionID: "s").text, on: first, now: 10)
        #expect(stale.isEmpty && !core.isConnected)
        _ = core.received(ServerMessage.hello(timestamp: 5, host: "h", sessionID: "s").text, on: second, now: 10)
        let tagged = core.received(ServerMessage.set(path: "a", data: 1, tag: 42).text, on: second, now: 10)
        #expect(tagged.commits.isEmpty)
        let untagged = core.received(ServerMessage.set(path: "a", data: 1, tag: nil).text, on: second, now: 10)
        #expect(untagged.commits == [.serverOverwrite("a", Node(.number(1)))])
        let garbage = core.received("{not json", on: second, now: 10)
        #expect(garbage.commits.isEmpty && garbage.events.count == 1)
    }

    /// The server refuses a write: it is reverted in the store and its completion says why.
    @Test func refusedWriteIsReverted() throws {
        var core = ClientCore(
            pendingWrites: [PendingWrite(id: 1, path: "a", operation: .set(Node(.number(1))))], token: nil, seed: 1,
            hash: { _ in "" })
        let link = try #require(core.goOnline(now: 0).open)
        let out = core.received(ServerMessage.hello(timestamp: 0, host: "h", sessionID: "s").text, on: link, now: 0)
        let numbers = out.messages.compactMap { (try? JSONValue.parse($0))?["d"]?["r"]?.doubleValue }
        let number = try #require(numbers.first)
        let answer = core.received(
            ServerMessage.response(number: Int(number), status: "permission_denied", data: "Permission denied").text,
            on: link, now: 1)
        #expect(answer.commits == [.revertWrite(1)])
        #expect(answer.events == [.writeCompleted(id: 1, error: .permissionDenied("Permission denied"))])
        #expect(core.unansweredWriteIDs.isEmpty)
    }

    /// A refused token: an invalid one is forgotten (also in the store); an expired one is
    /// kept as expired, so writes stay held; either way the connection closes and the next
    /// attempt forces a refresh.
    @Test(arguments: ["invalid_token", "expired_token"])
    func refusedTokenForcesRefresh(status: String) throws {
        var config = ClientCore.Configuration()
        config.usesTokens = true
        var core = ClientCore(
            configuration: config, pendingWrites: [], token: AuthToken(token: "old", expiresAt: 1_000), seed: 1,
            hash: { _ in "" })
        var out = core.goOnline(now: 0)
        let fetch = try #require(out.fetchToken)
        #expect(!fetch.force)
        out = core.tokenFetched(AuthToken(token: "old", expiresAt: 1_000), fetch: fetch.number, now: 0)
        let link = try #require(out.open)
        out = core.received(ServerMessage.hello(timestamp: 0, host: "h", sessionID: "s").text, on: link, now: 0)
        #expect(out.messages.first?.contains("\"gauth\"") == true)
        out = core.received(ServerMessage.response(number: 1, status: status, data: "refused").text, on: link, now: 0)
        if status == "invalid_token" {
            #expect(out.commits.contains(.clearAuth))
            #expect(!core.writesPaused(now: 0))
        } else {
            #expect(out.commits.contains(.saveAuth(AuthToken(token: "old", expiresAt: 0))))
            #expect(core.writesPaused(now: 0), "writes stay held until a new token")
        }
        #expect(out.close == link)
        #expect(out.events.contains(.connected(false)))
        if out.fetchToken == nil { out = core.tick(now: 60_000) }
        #expect(out.fetchToken?.force == true)
    }

    /// A client restarted mid-flight re-sends what the server had not acknowledged; the
    /// server ends up with each write once and the store with none pending.
    @Test func restartResendsUnacknowledgedWrites() throws {
        let h = SyncHarness()
        let c = try h.addClient()
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        for i in 1...3 { try h.write(c, .set(node("\(i)")), at: Path(keys: ["k", ChildKey("\(i)")])) }
        // Crash before anything is delivered.
        try h.restart(c)
        #expect(h.clients[c].store.pendingWrites().count == 3)
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        #expect(h.server.data.child(at: "k").plainJSONString() == #"{"1":1,"2":2,"3":3}"#)
        #expect(h.clients[c].store.pendingWrites().isEmpty)
    }
}
