import Testing
@_spi(HearthInternals) @testable import Hearth

/// A filtered view rebuilt from its tracked keys (Firebase's persistence gives a complete
/// filtered query only those children) holds a window, not the whole location: a child
/// outside it is unknown, so server data meant for other listeners must not complete it from
/// nothing and bring it into the window.
@Suite struct FilteredViewFromTrackedKeysTests {
    /// Found by the simulator (seed 56 of the v3 workload): after a restart a pinned root query
    /// (`orderByChild x endAt 2 limitToFirst 2`) showed `k` as `{"b":1,"d":0}` — `k` holds
    /// `x: 3` on the server, outside the window. The view was rebuilt from the tracked keys
    /// (`t` only) as a complete, unfiltered cache; then a default listen at `/k/b` brought
    /// `k/b = 1` (and a window query at `/k` a merge of `b`, `d`), and the view completed `k`
    /// from those alone: `x` looked null, so `k` entered the window. Android's
    /// `serverCache(query)` marks such a cache filtered; its View drops the mark, and Hearth's
    /// view keeps it.
    @Test func deepServerUpdateDoesNotBringAnUnknownChildIntoTheWindow() throws {
        let dir = TempDir()
        let query = try QuerySpec(orderBy: .child("x")).endAt(Node(.number(2))).limitToFirst(2)
        let root = QueryLocation(path: .root, query: query)
        do {
            let store = try Store.open(directory: dir.path, options: options())
            _ = try store.addListener(at: .root, query: query) { _ in }
            let window = try Node(jsonText: #"{"t":{"n":1}}"#)
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyTaggedServerOverwrite(window, at: .root, for: root)
                try b.applyListenComplete(root)
            }
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        let log = EventLog()
        _ = try store.addListener(at: .root, query: query) { log.record($0) }
        #expect(try store.query(query, at: .root).window.node.plainJSONString() == #"{"t":{"n":1}}"#)
        // Another listener's data below `k`, which the window does not hold.
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerMerge(
                [ChildUpdate(path: "b", node: Node(.number(1))), ChildUpdate(path: "d", node: Node(.number(0)))],
                at: "k")
        }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(Node(.number(1)), at: "k/b")
        }
        store.waitForEventDelivery()
        #expect(try store.query(query, at: .root).window.node.plainJSONString() == #"{"t":{"n":1}}"#)
        #expect(!summary(log.take()).contains { $0.hasPrefix("child_added k") })
    }

    func options() -> Store.Options {
        var o = Store.Options()
        o.backgroundMaintenance = false
        return o
    }
}
