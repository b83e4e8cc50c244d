import Dispatch
import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// `runTransactionBlock(_:andCompletionBlock:withLocalEvents:)`: with `false` the block's
/// tentative results raise no events (Firebase's `applyLocally`); only the server's data does.
@Suite("Transactions withLocalEvents", .serialized)
struct LocalEventsTransactionTests {
    /// An offline database whose handlers run on `callbacks`.
    func offline(_ callbacks: DispatchQueue) throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = callbacks
        return try Database(url: "ws://127.0.0.1:9?ns=localevents", options: o)
    }

    /// Every event raised so far has run its handler: the store has delivered them, and the
    /// serial callback queue has run what they queued.
    func drain(_ db: Database, _ callbacks: DispatchQueue) {
        db.store.waitForEventDelivery()
        callbacks.sync {}
    }

    static func increment(_ data: MutableData) -> TransactionResult {
        data.value = (data.value as? Int ?? 0) + 1
        return TransactionResult.success(withValue: data)
    }

    /// Offline, the result waits for the server: with local events observers see it at once,
    /// without them they do not (the block's result is a hidden pending write).
    @Test(arguments: [true, false]) func aTentativeResultShowsOnlyWithLocalEvents(localEvents: Bool) throws {
        let callbacks = DispatchQueue(label: "test.local-events")
        let db = try offline(callbacks)
        let ref = db.reference(withPath: "n")
        let seen = Collected<Int?>()
        ref.observe(.value) { seen.add($0.value as? Int) }
        try ref.setValue(5, on: nil)
        drain(db, callbacks)
        #expect(seen.all == [5])
        let ran = Collected<Int?>()
        ref.runTransactionBlock(
            { data in
                ran.add(data.value as? Int)
                return Self.increment(data)
            }, andCompletionBlock: nil, withLocalEvents: localEvents)
        drain(db, callbacks)
        #expect(ran.all == [5], "the block ran at once on the local value")
        #expect(seen.all == (localEvents ? [5, 6] : [5]))
        #expect(db.pendingWriteIDs.count == 2, "the result is pending either way")
        try db.close()
    }

    /// Online: the block runs first on the empty cache (result 1) and again on the server's
    /// 10 (result 11). Without local events observers see the server's data only — 10, then
    /// the committed 11 — never the stale 1.
    @Test func onlyTheServersDataRaisesEvents() async throws {
        let server = try await TransportTestServer()
        var o = Database.Options()
        o.durability = .buffered
        let url = "ws://127.0.0.1:\(server.server.port)?ns=localevents"
        let seeder = try Database(url: url, options: o)
        try await seeder.reference(withPath: "counter").setValue(10)
        try seeder.close()
        let db = try Database(url: url, options: o)
        let ref = db.reference(withPath: "counter")
        let seen = Collected<Int?>()
        ref.observe(.value) { seen.add($0.value as? Int) }
        let outcome = Collected<String>()
        ref.runTransactionBlock(
            Self.increment,
            andCompletionBlock: { error, committed, snapshot in
                outcome.add("\(error == nil) \(committed) \(snapshot?.value as? Int ?? -1)")
            }, withLocalEvents: false)
        #expect(await eventually { outcome.all.count == 1 && seen.all.last == 11 })
        #expect(outcome.all == ["true true 11"])
        #expect(seen.all == [10, 11], "\(seen.all)")
        try db.close()
        try await server.stop()
    }
}
