import Hearth
@_spi(HearthInternals) import HearthServer
import HearthModel
@_spi(HearthInternals) import HearthWire
import Testing

@testable import HearthDatabase

/// A client reconnecting with a large cache sends its compound hash and gets back only the
/// ranges that changed (`rm`), merged into its cache: it ends with exactly the server's data.
@Suite struct CompoundHashSyncTests {
    static func big() -> Node {
        Node(
            children: (0..<300).map { i in
                (ChildKey("k\(1000 + i)"), Node(children: [(ChildKey("v"), Node.string("value \(i) of the big list"))]))
            })
    }

    /// Client 0 caches `big`, goes offline, client 1 makes `changes`, client 0 comes back:
    /// returns the harness, what client 0 received after reconnecting, the location and the
    /// events its listener saw on reconnecting (values as `value`, without the data).
    static func reconnect(
        _ changes: (SyncHarness, Int) throws -> Void, query: QuerySpec = .default
    ) throws -> (SyncHarness, [String], QueryLocation, [String]) {
        let h = SyncHarness(data: Node(children: [(ChildKey("big"), big())]))
        let c = try h.addClient()
        let location = QueryLocation(path: "big", query: query)
        let recorder = Recorder()
        _ = try h.clients[c].store.addListener(at: location.path, query: location.query) { recorder.record($0) }
        h.call(c) { core, now in core.listen(location, now: now) }
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        #expect(Database.cachedNode(h.clients[c].store, location) != nil)
        h.clients[c].store.waitForEventDelivery()
        _ = recorder.take()
        h.disconnect(c)
        let w = try h.addClient()
        h.call(w) { core, now in core.goOnline(now: now) }
        h.run()
        try changes(h, w)
        h.run()
        let mark = h.received[c].count
        h.advance(60_000)
        h.run()
        #expect(h.clients[c].opened == 2)
        h.clients[c].store.waitForEventDelivery()
        let events = recorder.take().map { $0.hasPrefix("value ") ? "value" : $0 }
        return (h, Array(h.received[c][mark...]), location, events)
    }

    @Test func aChangedChildComesBackAsOneRange() throws {
        let (h, after, location, events) = try Self.reconnect { h, w in
            try h.write(w, .set(.string("changed")), at: "big/k1200/v")
        }
        #expect(events == ["child_changed k1200", "value"], "the changed child alone, then the value")
        let listen = try #require(h.sent[0].last { $0.contains(#""a":"q""#) })
        #expect(listen.contains(#""ch":{"ps":["#), "the listen sends its compound hash")
        let messages = after.compactMap { try? ServerMessage.decode($0) }
        let merges = messages.compactMap { m -> [WireRangeMerge]? in
            if case let .rangeMerge(_, ranges, nil) = m { ranges } else { nil }
        }
        #expect(merges.count == 1 && merges.first?.count == 1)
        #expect(!messages.contains { if case .set = $0 { true } else { false } }, "not the whole data")
        #expect(after.map(\.utf8.count).reduce(0, +) * 10 < Self.big().exportJSONString().utf8.count)
        #expect(try h.clients[0].store.serverValue(at: "big") == h.server.data.child(at: "big"))
        #expect(Database.cachedHash(h.clients[0].store, location) == h.server.data.child(at: "big").hash)
    }

    /// A query's listen merges its tagged ranges into the query's window.
    @Test func aQueryListenMergesItsWindow() throws {
        let query = try QuerySpec.default.limitToLast(200)
        let (h, after, location, events) = try Self.reconnect(
            { h, w in try h.write(w, .set(.string("changed")), at: "big/k1250/v") }, query: query)
        #expect(events == ["child_changed k1250", "value"])
        #expect(after.contains { $0.contains(#""a":"rm""#) })
        let window = query.window(of: h.server.data.child(at: "big")).node
        #expect(Database.cachedNode(h.clients[0].store, location) == window)
    }

    /// Random changes (set, delete, add, replace by a leaf): the merged cache is the server's.
    @Test(arguments: 0..<12)
    func randomChangesConverge(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) + 11)
        var updates: [ChildUpdate] = []
        var keys = Set<String>()
        for _ in 0..<Int.random(in: 1...20, using: &rng) {
            let key = "k\(Int.random(in: 990...1310, using: &rng))"
            guard keys.insert(key).inserted else { continue }
            let node: Node
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: node = .empty
            case 1: node = .number(Double(Int.random(in: 0...9, using: &rng)))
            case 2: node = Node(children: [(ChildKey("v"), .string("new \(Int.random(in: 0...9, using: &rng))"))])
            default: node = Node(children: [(ChildKey("w"), .bool(true))], priority: .number(1))
            }
            updates.append(ChildUpdate(path: Path(keys: [ChildKey(key)]), node: node))
        }
        let (h, after, _, _) = try Self.reconnect { h, w in try h.write(w, .update(updates), at: "big") }
        #expect(try h.clients[0].store.serverValue(at: "big") == h.server.data.child(at: "big"), "seed \(seed)")
        #expect(after.contains { $0.contains(#""a":"rm""#) || $0.contains(#""a":"d""#) })
    }
}
