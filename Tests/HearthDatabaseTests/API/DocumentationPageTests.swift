import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// The documentation page's persistence, keepSynced and offline-query examples
/// (`../shared/seeds/`), with the public API, over real sockets against an in-process
/// `hearth serve`, with app restarts in between.
@Suite("Documentation page", .serialized)
struct DocumentationPageTests {
    static let dinosaurs: DatabaseValue.Object = [
        "bruhathkayosaurus": 55, "lambeosaurus": 21, "linhenykus": 80, "pterodactyl": 93, "stegosaurus": 5,
        "triceratops": 22,
    ]

    func open(_ server: TransportTestServer, _ dir: String, online: Bool) throws -> Database {
        var o = Database.Options()
        o.storeDirectory = dir
        o.connectAtOpen = online
        return try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=docs", options: o)
    }

    /// Seeds the server's `scores` through a separate client.
    func seed(_ server: TransportTestServer) async throws {
        let admin = try open(server, TempDir().path, online: true)
        try await admin.reference(withPath: "scores").setValue(.object(Self.dinosaurs))
        try admin.close()
    }

    /// "Querying data offline", exactly as the page tells it.
    @Test func queryingDataOffline() async throws {
        let server = try await TransportTestServer()
        try await seed(server)
        let dir = TempDir()
        do {
            let db = try open(server, dir.path, online: true)
            let scoresRef = db.reference(withPath: "scores")
            let added = Collected<String>()
            scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded) { snapshot in
                added.add("\(snapshot.key)=\(snapshot.databaseValue)")
            }
            #expect(await eventually { added.all.count == 4 })
            #expect(added.all == ["triceratops=22", "bruhathkayosaurus=55", "linhenykus=80", "pterodactyl=93"])
            // The user loses the connection, and the app restarts.
            try db.close()
        }
        let db = try open(server, dir.path, online: false)
        let scoresRef = db.reference(withPath: "scores")
        let two = Collected<String>()
        let twoValues = Collected<String>()
        scoresRef.queryOrderedByValue().queryLimited(toLast: 2).observe(.childAdded) { snapshot in
            two.add(snapshot.key)
        }
        scoresRef.queryOrderedByValue().queryLimited(toLast: 2).observe(.value) { snapshot in
            twoValues.add("\(snapshot.databaseValue)")
        }
        #expect(await eventually { two.all.count == 2 })
        #expect(two.all == ["linhenykus", "pterodactyl"])
        let six = Collected<String>()
        let sixValues = Collected<String>()
        scoresRef.queryOrderedByValue().queryLimited(toLast: 6).observe(.childAdded) { snapshot in
            six.add(snapshot.key)
        }
        scoresRef.queryOrderedByValue().queryLimited(toLast: 6).observe(.value) { snapshot in
            sixValues.add("\(snapshot.childrenCount)")
        }
        #expect(await eventually { six.all.count == 4 })
        #expect(six.all == ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])
        // Offline, from the cache: child events, and no value event — the app never ran these
        // queries online.
        try await Task.sleep(for: .milliseconds(200))
        #expect(twoValues.all.isEmpty && sixValues.all.isEmpty)
        // Back online: "the final two child_added and value events".
        db.goOnline()
        #expect(await eventually { six.all.count == 6 && sixValues.all.count == 1 })
        #expect(Set(six.all.suffix(2)) == ["stegosaurus", "lambeosaurus"])
        #expect(sixValues.all == ["6"])
        #expect(await eventually { twoValues.all.count == 1 })
        try db.close()
        try await server.stop()
    }

    /// "Keeping data fresh": keepSynced loads a location with no listener; after a restart,
    /// offline, its data is complete (a `value` event) from the cache.
    @Test func keepSyncedSurvivesRestart() async throws {
        let server = try await TransportTestServer()
        try await seed(server)
        let dir = TempDir()
        do {
            let db = try open(server, dir.path, online: true)
            let scoresRef = db.reference(withPath: "scores")
            scoresRef.keepSynced(true)
            #expect(await eventually { (try? db.store.value(at: "scores").children.count) == 6 })
            // The listen's `ok` (after the data) marks it complete: wait for that before leaving.
            #expect(await eventually { db.store.trackedQueries().contains { $0.path == "scores" && $0.complete } })
            try db.close()
        }
        do {
            let db = try open(server, dir.path, online: false)
            let values = Collected<UInt>()
            db.reference(withPath: "scores").observe(.value) { values.add($0.childrenCount) }
            #expect(await eventually { values.all == [6] })
            // keepSynced is persisted: online again, the pin listens with no observer.
            #expect(db.store.pins().contains(QueryLocation(path: "scores", query: .default)))
            db.reference(withPath: "scores").keepSynced(false)
            #expect(db.store.pins().isEmpty)
            try db.close()
        }
        try await server.stop()
    }

    /// "Disk persistence": writes made offline are kept across a restart and sent when the
    /// connection returns; listeners fire for local writes at once.
    @Test func writesQueuedOfflineSurviveRestart() async throws {
        let server = try await TransportTestServer()
        let dir = TempDir()
        do {
            let db = try open(server, dir.path, online: false)
            let local = Collected<String>()
            db.reference(withPath: "notes").observe(.childAdded) { local.add($0.key) }
            for i in 0..<3 {
                try db.reference(withPath: "notes").childByAutoId().setValue(.string("note \(i)")) { _, _ in }
            }
            #expect(await eventually { local.all.count == 3 }, "local writes raise events at once, offline")
            #expect(local.all == local.all.sorted(), "push ids are time-ordered")
            try db.close()
        }
        let db = try open(server, dir.path, online: true)
        // The app's first reference connects; the kept writes go out then.
        _ = db.reference(withPath: "notes")
        #expect(await eventually { db.pendingWriteIDs.isEmpty })
        #expect(try server.store.value(at: "notes").children.count == 3)
        try db.close()
        try await server.stop()
    }
}
