import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// "Handling transactions offline", over real sockets, across restarts.
@Suite("Transactions", .serialized)
struct TransactionTests {
    func open(_ server: TransportTestServer, _ dir: String, online: Bool = true) throws -> Database {
        var o = Database.Options()
        o.storeDirectory = dir
        o.connectAtOpen = online
        return try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=tx", options: o)
    }

    static let increment: TransactionFunction = { current, argument in
        .success(withValue: .int((current.int64Value ?? 0) + (argument.int64Value ?? 1)))
    }

    /// firebase-ios-sdk #18: seven offline increments committed as six. Here a registered
    /// function's transactions are persisted, survive a restart, and add seven.
    @Test func sevenOfflineIncrementsAddSevenAcrossARestart() async throws {
        let server = try await TransportTestServer()
        let dir = TempDir()
        do {
            let db = try open(server, dir.path, online: false)
            db.registerTransactionFunction("increment", Self.increment)
            let local = Collected<DatabaseValue>()
            db.reference(withPath: "counter").observe(.value) { local.add($0.databaseValue) }
            for _ in 0..<7 { try db.reference(withPath: "counter").runTransaction(named: "increment", argument: 1) }
            #expect(await eventually { local.all.last == 7 }, "applied locally at once")
            #expect(db.store.transactions().count == 7)
            try db.close()
        }
        let db = try open(server, dir.path, online: true)
        let outcomes = Collected<TransactionOutcome>()
        db.observeTransactionResults { outcomes.add($0) }
        db.registerTransactionFunction("increment", Self.increment)
        #expect(await eventually { outcomes.all.count == 7 })
        #expect(outcomes.all.allSatisfy { $0.committed })
        #expect(try server.store.value(at: "counter") == Node(.number(7)))
        #expect(await eventually { db.store.transactions().isEmpty && db.pendingWriteIDs.isEmpty }, "acknowledged")
        try db.close()
        try await server.stop()
    }

    /// Outcomes reach the app in the order the server answered (a connection's writes are
    /// answered in the order they were sent): queued transactions and their completion blocks
    /// report in the order they were made, as the demo's "delivered in order" shows.
    @Test func outcomesArriveInTheOrderTheServerAnswered() async throws {
        let server = try await TransportTestServer()
        let db = try open(server, TempDir().path, online: false)
        db.registerTransactionFunction("increment", Self.increment)
        let outcomes = Collected<Int64>()
        let completions = Collected<Int>()
        db.observeTransactionResults { outcomes.add($0.committed ? $0.id : -$0.id) }
        var ids: [Int64] = []
        for i in 0..<30 {
            if let id = try db.reference(withPath: "named/c\(i)").runTransaction(named: "increment", argument: 1) {
                ids.append(id)
            }
            db.reference(withPath: "blocks/c\(i)").runTransactionBlock(
                { _ in .success(withValue: 1) },
                andCompletionBlock: { _, committed, _ in completions.add(committed ? i : -1) })
        }
        db.goOnline()
        #expect(await eventually { outcomes.all.count == 30 && completions.all.count == 30 })
        #expect(ids.count == 30)
        #expect(outcomes.all == ids, "named transactions' outcomes, in the order reported")
        #expect(completions.all == Array(0..<30), "completion blocks, in the order run")
        try db.close()
        try await server.stop()
    }

    /// Two clients increment the same counter at once: compare-and-set failures (`datastale`)
    /// re-run the function on the newer data; every increment counts once.
    @Test func concurrentIncrementsRetryOnStaleData() async throws {
        let server = try await TransportTestServer()
        let a = try open(server, TempDir().path)
        let b = try open(server, TempDir().path)
        // Each connects at its first use.
        let hits = [a.reference(withPath: "hits"), b.reference(withPath: "hits")]
        #expect(await eventually { a.isConnected && b.isConnected })
        let done = Collected<Bool>()
        for _ in 0..<10 {
            for ref in hits {
                try ref.runTransactionBlock(
                    { current in
                        .success(withValue: .int((current.int64Value ?? 0) + 1))
                    }, andCompletionBlock: { error, committed, _ in done.add(error == nil && committed) })
            }
        }
        #expect(await eventually(30) { done.all.count == 20 })
        #expect(done.all.allSatisfy { $0 })
        #expect(try server.store.value(at: "hits") == Node(.number(20)))
        try a.close()
        try b.close()
        try await server.stop()
    }

    /// A set at a transaction's location made after it aborts it with `set` (Firebase's
    /// `repoAbortTransactions`): offline, the transaction is withdrawn before it is sent.
    @Test func aLaterSetAbortsAQueuedTransaction() async throws {
        let server = try await TransportTestServer()
        let db = try open(server, TempDir().path, online: false)
        let outcome = Collected<String>()
        db.reference(withPath: "x").runTransactionBlock(
            { _ in .success(withValue: 1) },
            andCompletionBlock: { error, committed, _ in
                outcome.add("\(committed) \(error.map { "\($0)" } ?? "nil")")
            })
        db.reference(withPath: "x").setValue(5) { _, _ in }
        #expect(await eventually { outcome.all.count == 1 })
        #expect(outcome.all.first?.hasPrefix("false server error set") == true, "\(outcome.all)")
        db.goOnline()
        #expect(await eventually { db.pendingWriteIDs.isEmpty })
        #expect(try server.store.value(at: "x") == Node(.number(5)))
        try db.close()
        try await server.stop()
    }

    /// An update function that aborts commits nothing and says so.
    @Test func abortReportsNotCommitted() async throws {
        let server = try await TransportTestServer()
        let db = try open(server, TempDir().path)
        let (committed, _) = try await db.reference(withPath: "x").runTransactionBlock { _ in .abort() }
        #expect(!committed)
        try db.close()
        try await server.stop()
    }
}
