import Foundation
import Synchronization
import Testing
@_spi(HearthInternals) @testable import Hearth

/// Collects a listener's events.
final class EventLog: Sendable {
    private let events = Mutex<[ViewEvent]>([])
    func record(_ e: ViewEvent) { events.withLock { $0.append(e) } }
    func take() -> [ViewEvent] {
        events.withLock { all in
            defer { all = [] }; return all
        }
    }
}

func summary(_ events: [ViewEvent]) -> [String] {
    events.map { e in
        switch e.kind {
        case .value: "value \(e.node.plainJSONString())"
        default: "\(e.kind.rawValue) \(e.childKey?.string ?? "?")\(e.previousChildKey.map { " after \($0)" } ?? "")"
        }
    }
}

/// Views over the persistent store, through the listener API.
@Suite struct StoreViewTests {
    let scores: Path = "scores"
    let dinosaurs = try! Node(
        jsonText:
            #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
    )

    func listen(_ store: Store, _ query: QuerySpec, at path: Path? = nil) throws -> (ListenerToken, EventLog) {
        let log = EventLog()
        let token = try store.addListener(at: path ?? scores, query: query) { log.record($0) }
        store.waitForEventDelivery()
        return (token, log)
    }

    /// "Querying data offline", exactly as the documentation tells it.
    @Test func documentationOfflineQueries() throws {
        let dir = TempDir()
        let top4 = try QuerySpec(orderBy: .value).limitToLast(4)
        do {
            let store = try Store.open(directory: dir.path, options: options())
            let (token, log) = try listen(store, top4)
            #expect(log.take().isEmpty)
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(dinosaurs, at: scores)
                try b.trackQuery(at: QueryLocation(path: scores, query: top4), complete: true)
            }
            store.waitForEventDelivery()
            #expect(
                summary(log.take()) == [
                    "child_added triceratops", "child_added bruhathkayosaurus after triceratops",
                    "child_added linhenykus after bruhathkayosaurus", "child_added pterodactyl after linhenykus",
                    #"value {"bruhathkayosaurus":55,"linhenykus":80,"pterodactyl":93,"triceratops":22}"#,
                ])
            try store.removeListener(token)
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        let (_, two) = try listen(store, try QuerySpec(orderBy: .value).limitToLast(2))
        #expect(summary(two.take()) == ["child_added linhenykus", "child_added pterodactyl after linhenykus"])
        let (_, six) = try listen(store, try QuerySpec(orderBy: .value).limitToLast(6))
        #expect(
            summary(six.take()) == [
                "child_added triceratops", "child_added bruhathkayosaurus after triceratops",
                "child_added linhenykus after bruhathkayosaurus", "child_added pterodactyl after linhenykus",
            ])
        let (_, four) = try listen(store, top4)
        let events = summary(four.take())
        #expect(events.count == 5)
        #expect(events.last == #"value {"bruhathkayosaurus":55,"linhenykus":80,"pterodactyl":93,"triceratops":22}"#)
        try store.close()
    }

    @Test func localWritesRaiseEventsAtOnceAndAcksCompensate() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(try Node(jsonText: #"{"a":1,"b":2}"#), at: "list")
        try store.trackQuery(at: QueryLocation(path: "list", query: .default), complete: true)
        let (_, log) = try listen(store, .default, at: "list")
        #expect(summary(log.take()) == ["child_added a", "child_added b after a", #"value {"a":1,"b":2}"#])

        // A local write: events before any server answer.
        let id = try store.saveWrite(.set(.number(3)), at: "list/c")
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["child_added c after b", #"value {"a":1,"b":2,"c":3}"#])

        // Reverted (say, permission denied): the optimistic child goes away.
        try store.revertWrite(id)
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["child_removed c", #"value {"a":1,"b":2}"#])

        // Acked together with the server's data: no flicker, no duplicate value event.
        let id2 = try store.saveWrite(.set(.number(4)), at: "list/d")
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["child_added d after b", #"value {"a":1,"b":2,"d":4}"#])
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.ackWrite(id2)
            try b.applyServerOverwrite(.number(4), at: "list/d")
        }
        store.waitForEventDelivery()
        #expect(log.take().isEmpty)
        try store.close()
    }

    @Test func viewsAreRebuiltAfterOpenAndQueriesAnswerFromThem() throws {
        let dir = TempDir()
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(dinosaurs, at: scores)
            for n in 1...5 {
                try store.trackQuery(
                    at: QueryLocation(path: scores, query: try QuerySpec(orderBy: .value).limitToLast(n)),
                    complete: true)
            }
            try store.keepSynced(QueryLocation(path: "elsewhere", query: .default), true)
            try store.compact()
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        store.waitUntilViewsRebuilt()
        #expect(store.viewCount == 1, "the pin's view: tracked queries no one listens to have none")
        let result = try store.query(try QuerySpec(orderBy: .value).limitToLast(2), at: scores)
        #expect(result.window.keys == ["linhenykus", "pterodactyl"])
        #expect(result.complete)
        #expect(store.viewCount == 1, "an ad-hoc query's view is dropped after answering")
        try store.close()
    }

    @Test func eventsAsAnAsyncSequence() async throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(.number(1), at: "counter")
        try store.trackQuery(at: QueryLocation(path: "counter", query: .default), complete: true)
        let stream = try store.events(at: "counter", kinds: .value)
        try store.applyServerOverwrite(.number(2), at: "counter")
        var values: [Node] = []
        for await e in stream {
            values.append(e.node)
            if values.count == 2 { break }
        }
        #expect(values == [.number(1), .number(2)])
        try store.close()
    }
}
