import Testing
import Hearth

/// The samples of the engine API article (Hearth.docc/TheEngineAPI.md), verbatim between the
/// `doc-sample` markers (DocSampleTests in HearthToolTests checks that): if the documented API
/// changes, this stops compiling.
@Suite struct EngineAPISampleTests {
    @Test func modelSample() throws {
        // doc-sample: Sources/Hearth/Hearth.docc/TheEngineAPI.md
        // Data in plain or Firebase export format (.value / .priority / .sv), validated as Firebase
        // validates it; errors name the offending path.
        let scores = try Node(jsonText: #"{"stegosaurus":5,"lambeosaurus":21,"triceratops":22,"pterodactyl":93}"#)
        print(scores.child("pterodactyl"))  // 93, O(log n)
        #expect(scores.child("pterodactyl") == .number(93))  // doc-sample: test
        let updated = scores.updating(try Path(validating: "linhenykus"), with: .number(80))

        // Firebase's node hash, bit-exact.
        print(updated.hash)
        #expect(!updated.hash.isEmpty)  // doc-sample: test

        // Queries, validated as Firebase validates them, with Firebase's wire identifier.
        let top2 = try QuerySpec(orderBy: .value).limitToLast(2)
        print(top2.identifier)  // {"i":".value","l":2,"vf":"r"}
        #expect(top2.identifier == #"{"i":".value","l":2,"vf":"r"}"#)  // doc-sample: test
        print(top2.window(of: updated).keys)  // ["linhenykus", "pterodactyl"]
        #expect(top2.window(of: updated).keys == ["linhenykus", "pterodactyl"])  // doc-sample: test
        // doc-sample end
    }

    @Test func storeSample() throws {
        let dir = TempDir()
        let scores = try Node(jsonText: #"{"stegosaurus":5,"lambeosaurus":21,"triceratops":22,"pterodactyl":93}"#)
        let log = EventLog()

        // doc-sample: Sources/Hearth/Hearth.docc/TheEngineAPI.md
        // doc-sample-replace: "/path/to/store" => dir.path
        let store = try Store.open(directory: dir.path)  // Options: cap, durability, …

        // Server data as received; user writes queued, unresolved, until the server answers.
        try store.applyServerOverwrite(scores, at: "scores")
        let id = try store.saveWrite(.set(try Node(jsonText: #"{".sv":"timestamp"}"#)), at: "scores/lastPlayed")

        // One atomic commit: the ack and the server's data for that path.
        try store.commit { (batch: inout StoreBatch) throws(StoreError) in
            try batch.ackWrite(id)
            try batch.applyServerOverwrite(.number(1_700_000_000_000), at: "scores/lastPlayed")
        }

        // Tracked queries and keepSynced pins persist; pinned data is never pruned.
        let top4 = QueryLocation(path: "scores", query: try QuerySpec(orderBy: .value).limitToLast(4))
        try store.trackQuery(at: top4, complete: true, active: true)
        try store.keepSynced(top4, true)

        // Reads overlay pending writes (server values resolved) unless asked for the server's view.
        let result = try store.query(top4.query, at: "scores")
        print(result.window.keys, result.complete)
        #expect(result.window.keys == ["lambeosaurus", "triceratops", "pterodactyl", "lastPlayed"])  // doc-sample: test
        #expect(result.complete)  // doc-sample: test

        // Listeners get Firebase's events — child_removed, child_added, child_moved, child_changed,
        // value — in commit order, from the listened query's view (a closure, or `store.events(at:query:)`
        // as an AsyncStream).
        let token = try store.addListener(at: "scores", query: top4.query) { event in
            print(event.kind, event.childKey?.string ?? "", event.node)
            log.record(event)  // doc-sample: test
        }
        store.waitForEventDelivery()  // doc-sample: test
        #expect(log.take().map(\.kind) == [.childAdded, .childAdded, .childAdded, .childAdded, .value])  // doc-sample: test
        try store.removeListener(token)
        try store.close()
        // doc-sample end
    }
}
