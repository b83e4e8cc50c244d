import Foundation
import Hearth
import HearthModel
import Synchronization
import Testing
@testable import HearthDatabase

/// Polls `condition` until it holds or `seconds` pass; returns whether it held.
func eventually(_ seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Collects values across threads.
final class Collected<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func add(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
}

/// The Database runtime over real sockets against an in-process `hearth serve`.
@Suite("Database over loopback", .serialized)
struct DatabaseLoopbackTests {
    func options(_ dir: String?, online: Bool = true) -> Database.Options {
        var o = Database.Options()
        o.storeDirectory = dir
        o.connectAtOpen = online
        o.durability = .buffered
        return o
    }

    func url(_ server: TransportTestServer) -> String { "ws://127.0.0.1:\(server.server.port)?ns=test" }

    @Test func writeReachesServerAndOtherClient() async throws {
        let server = try await TransportTestServer()
        let a = try Database(url: url(server), options: options(nil))
        let b = try Database(url: url(server), options: options(nil))
        let seen = Collected<String>()
        b.reference().databaseQuery.ref.child("greeting").observe(.value) { snap in
            seen.add(snap.node.plainJSONString())
        }
        let done = Collected<DatabaseError?>()
        let ref = a.reference().child("greeting")
        _ = try a.saveWrite(.set(.string("hello")), at: ref, queue: nil) { done.add($0) }
        #expect(await eventually { done.all.count == 1 })
        #expect(done.all.first! == nil)
        #expect(try server.store.value(at: "greeting") == .string("hello"))
        #expect(await eventually { seen.all.last == #""hello""# })
        #expect(await eventually { a.isConnected })
        try a.close()
        try b.close()
        try await server.stop()
    }

    @Test func infoConnectedFollowsTheConnection() async throws {
        let server = try await TransportTestServer()
        let dir = TempDir()
        // Opened offline, so the observer is registered before any connection can be made.
        let db = try Database(url: url(server), options: options(dir.path, online: false))
        let states = Collected<String>()
        db.reference().child(".info/connected").observe(.value) { snap in states.add(snap.node.plainJSONString()) }
        #expect(await eventually { states.all.first == "false" })
        db.goOnline()
        #expect(await eventually { states.all.last == "true" })
        #expect(states.all.first == "false")
        try await server.stop()
        #expect(await eventually { states.all.last == "false" })
        #expect(throws: DatabaseError.self) {
            try db.saveWrite(
                .set(.bool(true)), at: db.reference().child(".info/connected"), queue: nil, completion: nil)
        }
        try db.close()
    }

    /// Writes made offline survive a restart, are sent when the connection comes, and their
    /// outcome reaches the write-result observer of the next run (Firebase calls no completion
    /// for writes restored after a restart).
    @Test func offlineWritesSurviveRestartAndReportResults() async throws {
        let server = try await TransportTestServer()
        let dir = TempDir()
        var ids: [WriteID] = []
        do {
            let db = try Database(url: url(server), options: options(dir.path, online: false))
            for i in 0..<10 {
                ids.append(
                    try db.saveWrite(
                        .set(.number(Double(i))), at: db.reference().child("items/\(i)"), queue: nil, completion: nil))
            }
            #expect(db.pendingWriteIDs == ids)
            try db.close()
        }
        let db = try Database(url: url(server), options: options(dir.path, online: false))
        let results = Collected<WriteResult>()
        db.observeWriteResults { results.add($0) }
        #expect(db.pendingWriteIDs == ids)
        db.goOnline()
        #expect(await eventually { results.all.count == 10 })
        #expect(results.all.map(\.id) == ids)
        #expect(results.all.allSatisfy { $0.error == nil })
        #expect(db.pendingWriteIDs.isEmpty)
        #expect(try server.store.value(at: "items").children.count == 10)
        try db.close()
        try await server.stop()
    }

    /// keepSynced without observers tracks its query, so the listen's `ok` marks the cache
    /// complete and a later connection (after a restart too) sends the cached data's hash —
    /// an unchanged location is then not sent again.
    @Test func keepSyncedCacheIsHashedAfterRestart() async throws {
        let server = try await TransportTestServer()
        let dir = TempDir()
        let location = QueryLocation(path: "pinned", query: .default)
        do {
            let db = try Database(url: url(server), options: options(dir.path))
            db.reference(withPath: "pinned").keepSynced(true)
            try await db.reference(withPath: "pinned/x").setValue(.string("kept"))
            #expect(await eventually { Database.cachedHash(db.store, location) != "" })
            try db.close()
        }
        let db = try Database(url: url(server), options: options(dir.path, online: false))
        #expect(try Database.cachedHash(db.store, location) == server.store.value(at: "pinned").hash)
        try db.close()
        try await server.stop()
    }
}

/// A memory-only database that never connects (for tests of references, queries, snapshots).
func offlineDatabase() -> Database {
    var o = Database.Options()
    o.connectAtOpen = false
    return try! Database(url: "ws://127.0.0.1:9?ns=offline", options: o)
}
