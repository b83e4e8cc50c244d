import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// Views and tracked keys only where someone listens (Firebase's SyncTree keeps views for
/// active listeners, and `updateTrackedQueryKeys` follows the served view): a tracked query no
/// one listens to has no view, an inactive complete filtered query becomes incomplete at the
/// first server write that may move its window, and an inactive incomplete one costs a write
/// nothing.
@Suite struct InactiveQueryTests {
    let chat: Path = "chat"

    static func key(_ i: Int) -> ChildKey { ChildKey("m\(1000 + i)") }

    /// Messages m1000… with their index as value.
    static func messages(_ range: Range<Int>) -> Node {
        Node(children: range.map { (key($0), Node.number(Double($0))) })
    }

    /// The page of `n` messages ending at message `end` (an app paging back through a chat).
    static func page(endingAt end: Int, _ n: Int = 3) throws -> QuerySpec {
        try QuerySpec(orderBy: .key).endAt(.string(key(end).string)).limitToLast(n)
    }

    func query(_ store: Store, _ location: QueryLocation) -> TrackedQuery? {
        try? store.state().trackedQuery(at: location)
    }

    /// Tracks `pages` pages, complete and inactive, the last one ending at message `last`.
    func trackPages(_ store: Store, _ pages: Int, last: Int) throws -> [QueryLocation] {
        var out: [QueryLocation] = []
        for p in 0..<pages {
            let location = QueryLocation(path: chat, query: try Self.page(endingAt: last - p))
            try store.trackQuery(at: location, complete: true, active: false)
            out.append(location)
        }
        return out
    }

    /// The listener's events are what they are with no inactive window beside it, and the
    /// store keeps one view (the listener's), not one per tracked query.
    @Test func anActiveListenerSeesTheSameEventsBesideInactiveWindows() throws {
        var logs: [[String]] = []
        for pages in [0, 40] {
            let dir = TempDir()
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(Self.messages(0..<60), at: chat)
            _ = try trackPages(store, pages, last: 50)
            let live = try QuerySpec(orderBy: .key).limitToLast(3)
            // Its listen answered: the view starts from the same complete data beside any pages.
            try store.trackQuery(at: QueryLocation(path: chat, query: live), complete: true, active: true)
            let log = EventLog()
            _ = try store.addListener(at: chat, query: live) { log.record($0) }
            #expect(store.viewCount == 1, "views only where someone listens")
            for i in 60..<70 {
                try store.applyServerOverwrite(.number(Double(i)), at: chat.appending(Path(keys: [Self.key(i)])))
            }
            try store.applyServerOverwrite(.empty, at: chat.appending(Path(keys: [Self.key(69)])))
            try store.applyServerMerge(
                [ChildUpdate(path: Path(keys: [Self.key(5)]), node: .number(500))], at: chat)
            store.waitForEventDelivery()
            logs.append(summary(log.take()))
            #expect(try store.state().checkInvariants() == nil)
            try store.close()
        }
        #expect(logs[0] == logs[1])
        #expect(logs[0].count > 30)
    }

    /// A write that may move an inactive complete window makes it incomplete once, keeping
    /// its keys and last use; offline it is then served what it holds, with no value event.
    @Test func aWriteIntoAnInactiveWindowMakesItIncomplete() throws {
        let dir = TempDir()
        let clock = TestClock()
        let last3 = QueryLocation(path: chat, query: try QuerySpec(orderBy: .key).limitToLast(3))
        do {
            let store = try Store.open(directory: dir.path, options: options(clock: clock))
            try store.applyServerOverwrite(Self.messages(0..<5), at: chat)
            let tracked = try store.trackQuery(at: last3, complete: true, active: false)
            #expect(tracked.keys == [Self.key(2), Self.key(3), Self.key(4)])
            clock.advance(1000)
            // Elsewhere, and deep in a child it does not hold: nothing changes.
            try store.applyServerOverwrite(.string("x"), at: "elsewhere/a")
            try store.applyServerOverwrite(.string("x"), at: chat.appending(Path(keys: [Self.key(0), "deep"])))
            #expect(query(store, last3) == tracked)
            // A new message would join its window: incomplete, keys and last use kept.
            try store.applyServerOverwrite(.number(5), at: chat.appending(Path(keys: [Self.key(5)])))
            var incomplete = tracked
            incomplete.complete = false
            #expect(query(store, last3) == incomplete)
            try store.applyServerOverwrite(.number(6), at: chat.appending(Path(keys: [Self.key(6)])))
            #expect(query(store, last3) == incomplete)
            #expect(try store.state().checkInvariants() == nil)
            try store.close()
        }
        // Offline, after a restart: the children it held, no value.
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        let log = EventLog()
        _ = try store.addListener(at: chat, query: last3.query) { log.record($0) }
        store.waitForEventDelivery()
        #expect(
            summary(log.take()) == [
                "child_added m1002", "child_added m1003 after m1002", "child_added m1004 after m1003",
            ])
        #expect(try store.query(last3.query, at: chat).complete == false)
        try store.close()
    }

    /// A window no write reaches stays complete, and answers offline with a value; a complete
    /// default query over the location answers every window right, whatever its own state.
    @Test func aWindowNoWriteReachesStaysComplete() throws {
        let dir = TempDir()
        let page = QueryLocation(path: chat, query: try Self.page(endingAt: 2))
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(Self.messages(0..<5), at: chat)
            try store.trackQuery(at: page, complete: true, active: false)
            try store.applyServerOverwrite(.number(9), at: chat.appending(Path(keys: [Self.key(4), "deep"])))
            #expect(query(store, page)?.complete == true)
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        let log = EventLog()
        _ = try store.addListener(at: chat, query: page.query) { log.record($0) }
        store.waitForEventDelivery()
        #expect(summary(log.take()).last == #"value {"m1000":0,"m1001":1,"m1002":2}"#)
        try store.close()
    }

    /// An active or pinned window's keys follow the data, as before; the store keeps no view
    /// for a tracked query without a listener or pin, and a pin's view after open.
    @Test func activeAndPinnedWindowsKeepTheirKeysAndPinsTheirViews() throws {
        let dir = TempDir()
        let active = QueryLocation(path: chat, query: try QuerySpec(orderBy: .key).limitToLast(2))
        let pinned = QueryLocation(path: chat, query: try QuerySpec(orderBy: .key).limitToLast(1))
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(Self.messages(0..<3), at: chat)
            try store.trackQuery(at: active, complete: true, active: true)
            try store.trackQuery(at: pinned, complete: true, active: false)
            try store.keepSynced(pinned, true)
            #expect(store.viewCount == 1, "the pin's view; the active query has no listener here")
            try store.applyServerOverwrite(.number(3), at: chat.appending(Path(keys: [Self.key(3)])))
            #expect(query(store, active)?.keys == [Self.key(2), Self.key(3)])
            #expect(query(store, active)?.complete == true)
            #expect(query(store, pinned)?.keys == [Self.key(3)])
            #expect(query(store, pinned)?.complete == true)
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        store.waitUntilViewsRebuilt()
        #expect(store.viewCount == 1)
        try store.close()
    }

    /// The work a write does: the queries it looks at are the active ones and the complete
    /// ones it reaches, not every tracked query at its location — with 1,000 inactive windows
    /// there, one after the first write makes them incomplete.
    @Test func aWriteLooksAtNoInactiveIncompleteQuery() throws {
        let dir = TempDir()
        var o = options()
        o.maxInactiveQueries = 10_000
        let store = try Store.open(directory: dir.path, options: o)
        try store.applyServerOverwrite(Self.messages(0..<1100), at: chat)
        let pages = try trackPages(store, 1000, last: 1050)
        let live = QueryLocation(path: chat, query: try QuerySpec(orderBy: .key).limitToLast(3))
        _ = try store.addListener(at: chat, query: live.query) { _ in }
        #expect(store.viewCount == 1)
        func looked(at written: Path) throws -> Int {
            let state = try store.state()
            let batch = StoreBatch(base: state, now: 0) { state.serverCache.child(at: $0) }
            return batch.candidates([written]).count
        }
        let newMessage = chat.appending(Path(keys: [Self.key(1100)]))
        #expect(try looked(at: newMessage) == 1001)
        // A write at a child of the location reaches every page there (whether it moves a
        // page's window is not worked out: that would cost every write O(pages)), so every page
        // is now incomplete and no later write looks at it.
        try store.applyServerOverwrite(.number(0), at: chat.appending(Path(keys: [Self.key(10)])))
        let stillComplete = try pages.filter { try store.state().trackedQuery(at: $0)?.complete == true }.count
        #expect(stillComplete == 0)
        #expect(try looked(at: newMessage) == 1)
        #expect(try store.state().checkInvariants() == nil)
        try store.close()
    }
}
