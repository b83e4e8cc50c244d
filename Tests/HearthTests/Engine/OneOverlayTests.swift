import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth

/// One overlay of pending writes over server data: `value(at:)`,
/// `query(_:at:)` and listeners answer from the same resolved writes, so a pending
/// `{".sv":"timestamp"}` is a number everywhere — ordered as a number — and an increment is
/// the local number plus the delta, exactly as Firebase's SDKs raise them.
@Suite struct OneOverlayTests {
    let scores: Path = "scores"
    let timestamp = Node(.serverValue(.timestamp))
    func increment(_ n: Double) -> Node { Node(.serverValue(.increment(n))) }

    func listen(_ store: Store, _ query: QuerySpec, at path: Path) throws -> EventLog {
        let log = EventLog()
        _ = try store.addListener(at: path, query: query) { log.record($0) }
        store.waitForEventDelivery()
        return log
    }

    @Test func aPendingTimestampIsTheSameNumberForGetQueryAndListeners() throws {
        let dir = TempDir()
        let clock = TestClock()
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        try store.applyServerOverwrite(try Node(jsonText: #"{"a":5,"s":"text"}"#), at: scores)
        try store.trackQuery(at: QueryLocation(path: scores, query: .default), complete: true, active: true)
        try store.setServerTimeOffset(250)
        let byValue = QuerySpec(orderBy: .value)
        let log = try listen(store, byValue, at: scores)
        _ = log.take()
        try store.saveWrite(.set(timestamp), at: "scores/t")
        let expected = Node.number(Double(clock() + 250))
        clock.advance(5_000)  // a later read must not re-estimate
        store.waitForEventDelivery()
        // The listener: a number, ordered among numbers (before the string), not an object.
        #expect(
            summary(log.take()) == [
                "child_added t after a", #"value {"a":5,"s":"text","t":\#(clock() - 5_000 + 250)}"#,
            ])
        #expect(try store.value(at: "scores/t") == expected)
        let result = try store.query(byValue, at: scores)
        #expect(result.window.keys.map(\.string) == ["a", "t", "s"])
        #expect(result.window.node.child("t") == expected)
        #expect(try store.value(at: scores) == result.window.node)
        try store.close()
    }

    @Test func incrementsStackOnTheLocalNumberEverywhere() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(try Node(jsonText: #"{"n":10,"s":"x"}"#), at: scores)
        try store.trackQuery(at: QueryLocation(path: scores, query: .default), complete: true, active: true)
        let log = try listen(store, .default, at: "scores/n")
        _ = log.take()
        try store.saveWrite(.set(increment(5)), at: "scores/n")
        try store.saveWrite(
            .update([ChildUpdate(path: "n", node: increment(2)), ChildUpdate(path: "s", node: increment(1))]),
            at: scores)
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["value 15", "value 17"])
        #expect(try store.value(at: "scores/n") == .number(17))
        #expect(try store.value(at: "scores/s") == .number(1))  // not a number there: the delta
        let q = try store.query(.default, at: scores)
        #expect(q.window.node == store.valueOrEmpty(at: scores))
        #expect(q.window.node.child("n") == .number(17))
        try store.close()
    }

    /// Writes pending at open are resolved once, when they reach the views (Firebase resolves
    /// its restored writes at start); every read agrees afterwards.
    @Test func writesPendingAtOpenAreResolvedOnceForEveryRead() throws {
        let dir = TempDir()
        let clock = TestClock()
        do {
            let store = try Store.open(directory: dir.path, options: options(clock: clock))
            try store.applyServerOverwrite(.number(1), at: "c/n")
            try store.saveWrite(
                .set(try Node(jsonText: #"{"at":{".sv":"timestamp"},"n":{".sv":{"increment":1}}}"#)), at: "c")
            try store.close()
        }
        clock.advance(60_000)
        let opened = clock()
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        clock.advance(1_000)
        let want = try Node(jsonText: #"{"at":\#(opened),"n":2}"#)
        #expect(try store.value(at: "c") == want)
        #expect(try store.query(.default, at: "c").window.node == want)
        let log = try listen(store, .default, at: "c")
        #expect(summary(log.take()) == ["child_added at", "child_added n after at", #"value {"at":\#(opened),"n":2}"#])
        // The log still holds the unresolved write: that is what goes to the server.
        #expect(
            store.pendingWrites().first?.operation
                == .set(try Node(jsonText: #"{"at":{".sv":"timestamp"},"n":{".sv":{"increment":1}}}"#)))
        try store.close()
    }
}

extension Store {
    fileprivate func valueOrEmpty(at path: Path) -> Node { (try? value(at: path)) ?? .empty }
}
