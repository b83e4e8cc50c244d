import Testing
import Hearth

/// The code of the `Hearth` DocC articles (Sources/Hearth/Hearth.docc), compiled and run here;
/// DocSampleTests (HearthToolTests) checks each block is copied verbatim between the markers.
@Suite struct ArticleSampleTests {
    @Test func gettingStarted() throws {
        let dir = TempDir()
        let directory = dir.path
        // doc-sample: Sources/Hearth/Hearth.docc/GettingStarted.md
        let store = try Store.open(directory: directory)

        // Data the server sent, and a user write the server has not answered yet.
        try store.applyServerOverwrite(try Node(jsonText: #"{"ada":{"score":5}}"#), at: "players")
        let id = try store.saveWrite(.set(.number(7)), at: "players/ada/score")
        print(try store.value(at: "players/ada/score"))  // 7: reads overlay pending writes
        #expect(try store.value(at: "players/ada/score") == .number(7))  // doc-sample: test
        print(try store.serverValue(at: "players/ada/score"))  // 5: the server's view
        #expect(try store.serverValue(at: "players/ada/score") == .number(5))  // doc-sample: test

        // The server's answer and its data, as one atomic commit.
        try store.commit { batch in
            try batch.ackWrite(id)
            try batch.applyServerOverwrite(.number(7), at: "players/ada/score")
        }
        // doc-sample end
        #expect(store.pendingWrites().isEmpty)
        #expect(try store.serverValue(at: "players/ada/score") == .number(7))

        let log = EventLog()
        // doc-sample: Sources/Hearth/Hearth.docc/GettingStarted.md
        let top = try QuerySpec(orderBy: .child(try Path(validating: "score"))).limitToLast(10)
        // The server answered this query: its cached data is complete (Firebase's tracked queries).
        try store.trackQuery(at: QueryLocation(path: "players", query: top), complete: true, active: true)
        let token = try store.addListener(at: "players", query: top) { event in
            print(event.kind, event.childKey?.string ?? "", event.node)
            log.record(event)  // doc-sample: test
        }
        print(try store.query(top, at: "players").window.keys)
        let keys = try store.query(top, at: "players").window.keys  // doc-sample: test
        let players = try store.value(at: "players")  // doc-sample: test
        #expect(keys == ["ada"], "\(keys) \(players)")  // doc-sample: test
        store.waitForEventDelivery()  // doc-sample: test
        #expect(log.take().map(\.kind) == [.childAdded, .value])  // doc-sample: test
        try store.removeListener(token)
        try store.close()
        // doc-sample end
    }

    @Test func offlineBehaviour() throws {
        let dir = TempDir()
        do {
            let store = try Store.open(directory: dir.path)
            try store.applyServerOverwrite(try Node(jsonText: #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}"#), at: "scores")
            try store.close()
        }
        let store = try Store.open(directory: dir.path)
        // doc-sample: Sources/Hearth/Hearth.docc/OfflineBehaviour.md
        let top4 = QueryLocation(path: "scores", query: try QuerySpec(orderBy: .value).limitToLast(4))
        try store.trackQuery(at: top4, complete: true, active: true)
        let top2 = try QuerySpec(orderBy: .value).limitToLast(2)
        print(try store.query(top2, at: "scores").complete)  // false: two child_added, no value
        #expect(try store.query(top2, at: "scores").complete == false)  // doc-sample: test
        // doc-sample end
        #expect(try store.query(top4.query, at: "scores").complete)
        try store.close()
    }
}
