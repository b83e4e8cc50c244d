import Testing
@_spi(HearthInternals) @testable import Hearth

/// The persistence rules that decide what an offline view starts from (Firebase's
/// `serverCacheForQuery`), on the documentation's example.
@Suite struct PersistedServerCacheTests {
    let scores: Path = "scores"
    let data = try! Node(
        jsonText:
            #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
    )

    func stateWithCompleteTop4() throws -> StoreState {
        var s = StoreState()
        s.apply(.serverOverwrite(path: scores, node: data, at: 1))
        let top4 = QueryLocation(path: scores, query: try QuerySpec(orderBy: .value).limitToLast(4))
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 1, location: top4, complete: true, active: false, lastUse: 1,
                    keys: ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])))
        return s
    }

    @Test func documentationExample() throws {
        let s = try stateWithCompleteTop4()
        let cached = s.serverValue(at: scores)
        // limitToLast(2): served the four known-complete children, incomplete → its window keeps
        // the top two, and no value event.
        let two = try QuerySpec(orderBy: .value).limitToLast(2)
        let c2 = try #require(s.persistedServerCache(at: scores, query: two, serverValue: cached))
        #expect(!c2.complete)
        #expect(c2.node.childCount == 4)
        #expect(two.window(of: c2.node).keys == ["linhenykus", "pterodactyl"])
        // limitToLast(6): the same four, incomplete.
        let six = try QuerySpec(orderBy: .value).limitToLast(6)
        let c6 = try #require(s.persistedServerCache(at: scores, query: six, serverValue: cached))
        #expect(!c6.complete)
        #expect(six.window(of: c6.node).keys == ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])
        // limitToLast(4) again: complete, exactly its tracked children.
        let four = try QuerySpec(orderBy: .value).limitToLast(4)
        let c4 = try #require(s.persistedServerCache(at: scores, query: four, serverValue: cached))
        #expect(c4.complete)
        #expect(c4.node.childCount == 4)
        #expect(!c4.node.hasChild("stegosaurus"))
    }

    @Test func completeDefaultQueriesCompleteEverythingBelow() throws {
        var s = try stateWithCompleteTop4()
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 2, location: QueryLocation(path: "/", query: .default), complete: true, active: false,
                    lastUse: 2)))
        let any = try QuerySpec(orderBy: .value).limitToLast(2)
        let c = try #require(s.persistedServerCache(at: scores, query: any, serverValue: s.serverValue(at: scores)))
        #expect(c.complete)
        #expect(c.node.childCount == 6)
    }

    @Test func completeChildLocationsAreKnownChildren() throws {
        var s = StoreState()
        s.apply(.serverOverwrite(path: scores, node: data, at: 1))
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 1, location: QueryLocation(path: "scores/stegosaurus", query: .default), complete: true,
                    active: false, lastUse: 1)))
        let c = try #require(
            s.persistedServerCache(at: scores, query: .default, serverValue: s.serverValue(at: scores)))
        #expect(!c.complete)
        #expect(c.node.children.map(\.key) == ["stegosaurus"])
        // Nothing known at all: no cache.
        #expect(StoreState().persistedServerCache(at: scores, query: .default, serverValue: .empty) == nil)
        // An incomplete filtered query's keys are known complete children too (Firebase's
        // `getKnownCompleteChildren` reads every filtered query at the path): served, incomplete.
        var t = StoreState()
        t.apply(.serverOverwrite(path: scores, node: data, at: 1))
        t.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 1, location: QueryLocation(path: scores, query: try QuerySpec(orderBy: .value).limitToLast(1)),
                    complete: false, active: false, lastUse: 1, keys: ["pterodactyl"])))
        let fromIncomplete = try #require(
            t.persistedServerCache(at: scores, query: .default, serverValue: t.serverValue(at: scores)))
        #expect(!fromIncomplete.complete)
        #expect(fromIncomplete.node.children.map(\.key) == ["pterodactyl"])
    }
}
