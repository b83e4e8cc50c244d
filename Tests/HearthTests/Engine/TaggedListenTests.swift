import Testing
@_spi(HearthInternals) @testable import Hearth

/// A listen's answers as a sync client commits them (StoreBatch+Listens.swift): tagged data
/// replaces a filtered view's window, completion completes the view.
@Suite struct TaggedListenTests {
    let scores: Path = "scores"

    /// A child deleted on the server leaves a `limitToLast(2)` window when the server's new
    /// window arrives tagged — although the persisted merge still holds it — and stays out
    /// after a restart, because the query's tracked keys followed the view.
    @Test func taggedWindowDropsADeletedChild() throws {
        let dir = TempDir()
        let last2 = QueryLocation(path: scores, query: try QuerySpec(orderBy: .value).limitToLast(2))
        do {
            let store = try Store.open(directory: dir.path, options: options())
            let log = EventLog()
            _ = try store.addListener(at: scores, query: last2.query) { log.record($0) }
            let cd = try Node(jsonText: #"{"c":3,"d":4}"#), bc = try Node(jsonText: #"{"b":2,"c":3}"#)
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyTaggedServerOverwrite(cd, at: scores, for: last2)
                try b.applyListenComplete(last2)
            }
            store.waitForEventDelivery()
            #expect(summary(log.take()) == ["child_added c", "child_added d after c", #"value {"c":3,"d":4}"#])
            // The server deleted d; b (2) enters the window.
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyTaggedServerOverwrite(bc, at: scores, for: last2)
            }
            store.waitForEventDelivery()
            #expect(summary(log.take()) == ["child_removed d", "child_added b", #"value {"b":2,"c":3}"#])
            #expect(try store.query(last2.query, at: scores).window.node.plainJSONString() == #"{"b":2,"c":3}"#)
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        let log = EventLog()
        _ = try store.addListener(at: scores, query: last2.query) { log.record($0) }
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["child_added b", "child_added c after b", #"value {"b":2,"c":3}"#])
    }

    /// An empty answer: the server sends no data for an absent location, only `ok`; the
    /// filtered view then raises an empty `value`.
    @Test func listenCompleteRaisesValueForAnEmptyFilteredQuery() throws {
        let dir = TempDir()
        let first1 = QueryLocation(path: "empty", query: try QuerySpec(orderBy: .key).limitToFirst(1))
        let store = try Store.open(directory: dir.path, options: options())
        let log = EventLog()
        _ = try store.addListener(at: first1.path, query: first1.query) { log.record($0) }
        store.waitForEventDelivery()
        #expect(log.take().isEmpty)
        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.applyListenComplete(first1) }
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["value null"])
        #expect(store.trackedQueries().first { $0.location == first1 }?.complete == true)
    }
}
