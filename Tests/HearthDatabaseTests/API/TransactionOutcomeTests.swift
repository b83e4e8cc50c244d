import Dispatch
import Foundation
import Hearth
import HearthModel
import HearthTesting
import Testing
@testable import HearthDatabase

/// A named transaction's outcome stays in the store until the app's handlers have run: power
/// cuts on a simulated disk between the answer and the handler, and between the handler and
/// its acknowledgement.
@Suite("Transaction outcomes across a crash", .serialized)
struct TransactionOutcomeTests {
    func options(_ fs: SimulatedFileSystem, online: Bool) -> Database.Options {
        var o = Database.Options()
        o.storeDirectory = "/db"
        o.fileSystem = fs
        o.connectAtOpen = online
        o.callbackQueue = DispatchQueue(label: "test.callbacks")
        return o
    }

    /// Runs one named increment online and waits until its outcome is decided in the store,
    /// with the observer's queue held (`stalled`), or the observer's handler has run and
    /// its acknowledgement was committed (`stalled` nil). Returns the transaction's id.
    func decideOne(_ db: Database, observerQueue stalled: DispatchQueue?) async throws -> Int64 {
        db.registerTransactionFunction("increment", TransactionTests.increment)
        let heard = Collected<TransactionOutcome>()
        db.observeTransactionResults(on: stalled) { heard.add($0) }
        let id = try #require(try db.reference(withPath: "counter").runTransaction(named: "increment", argument: 1))
        if stalled != nil {
            #expect(await eventually { db.store.transactions().first?.status == .committed })
            #expect(heard.all.isEmpty)
        } else {
            #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
        }
        return id
    }

    /// The process dies after the outcome was decided and before the app's handler ran: the
    /// next start reports it, once, to the observer registered then.
    @Test func anOutcomeWhoseHandlerDidNotRunIsReportedAtTheNextStart() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=once"
        let fs = SimulatedFileSystem(seed: 47)
        let stalled = DispatchQueue(label: "test.stalled")
        stalled.suspend()
        let id: Int64
        do {
            let db = try Database(url: url, options: options(fs, online: true))
            id = try await decideOne(db, observerQueue: stalled)
            fs.powerCut(mode: .dropAllUnsynced)
            try? db.close()
        }
        stalled.resume()  // the handler runs after the close: too late to acknowledge anything
        do {
            let db = try Database(url: url, options: options(fs, online: false))
            #expect(db.store.transactions().map(\.status) == [.committed], "kept, decided")
            let heard = Collected<TransactionOutcome>()
            db.observeTransactionResults { heard.add($0) }
            #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
            #expect(heard.all == [TransactionOutcome(id: id, committed: true, error: nil)])
            try db.close()
        }
        let db = try Database(url: url, options: options(fs, online: false))
        #expect(db.store.transactions().isEmpty, "acknowledged and closed: never reported again")
        try db.close()
        #expect(try server.store.value(at: "counter") == Node(.number(1)))
        try await server.stop()
    }

    /// The handler ran, and the process died before its acknowledgement was durable: the
    /// next start reports it again (at least once), identical.
    @Test func anOutcomeWhoseAcknowledgementWasLostIsReportedAgain() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=again"
        let fs = SimulatedFileSystem(seed: 47)
        let id: Int64
        do {
            let db = try Database(url: url, options: options(fs, online: true))
            id = try await decideOne(db, observerQueue: nil)
            fs.powerCut(mode: .dropAllUnsynced)
            try? db.close()
        }
        let db = try Database(url: url, options: options(fs, online: false))
        let heard = Collected<TransactionOutcome>()
        db.observeTransactionResults { heard.add($0) }
        #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
        #expect(heard.all == [TransactionOutcome(id: id, committed: true, error: nil)])
        try db.close()
        try await server.stop()
    }

    /// The handler ran and the database was closed: the acknowledgement is durable, and the
    /// outcome is never reported again.
    @Test func anAcknowledgedOutcomeIsNotReportedAfterACleanClose() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=closed"
        let fs = SimulatedFileSystem(seed: 47)
        do {
            let db = try Database(url: url, options: options(fs, online: true))
            _ = try await decideOne(db, observerQueue: nil)
            try db.close()
            fs.powerCut(mode: .dropAllUnsynced)
        }
        let db = try Database(url: url, options: options(fs, online: false))
        #expect(db.store.transactions().isEmpty)
        try db.close()
        try await server.stop()
    }

    /// An outcome decided before any observer was registered (and without a completion)
    /// waits in the store for the first observer, and an earlier run's `disconnect` (a
    /// transaction in flight when it stopped) is kept the same way.
    @Test func anOutcomeWithoutAHandlerWaitsForTheFirstObserver() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=later"
        let fs = SimulatedFileSystem(seed: 47)
        let db = try Database(url: url, options: options(fs, online: true))
        db.registerTransactionFunction("increment", TransactionTests.increment)
        let id = try #require(try db.reference(withPath: "counter").runTransaction(named: "increment", argument: 1))
        #expect(await eventually { db.store.transactions().first?.status == .committed })
        let heard = Collected<TransactionOutcome>()
        db.observeTransactionResults { heard.add($0) }
        #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
        #expect(heard.all == [TransactionOutcome(id: id, committed: true, error: nil)])
        try db.close()
        try await server.stop()
    }

    /// Outcomes without a handler are kept up to ``WriteAcknowledger/maxUndeliveredOutcomes``; past it
    /// the oldest is dropped, from memory and from the store.
    @Test func outcomesWaitingForAnObserverAreBounded() async throws {
        let fs = SimulatedFileSystem(seed: 47)
        let db = try Database(url: "ws://127.0.0.1:9?ns=bound", options: options(fs, online: false))
        db.registerTransactionFunction("increment", TransactionTests.increment)
        let n = WriteAcknowledger.maxUndeliveredOutcomes + 1
        var ids: [Int64] = []
        for i in 0..<n {
            ids.append(try #require(try db.reference(withPath: "c/\(i)").runTransaction(named: "increment")))
        }
        // Offline, a set above them withdraws every one: each aborts `set` at once, unheard.
        try db.reference(withPath: "c").setValue(.null, on: nil, withCompletionBlock: nil)
        db.work.sync {}
        #expect(db.store.transactions().count == n - 1, "the oldest left the store")
        let heard = Collected<TransactionOutcome>()
        db.observeTransactionResults { heard.add($0) }
        #expect(await eventually { heard.all.count == n - 1 && db.store.transactions().isEmpty })
        #expect(heard.all.map(\.id) == Array(ids.dropFirst()))
        #expect(heard.all.allSatisfy { !$0.committed && $0.error == .transactionAborted("set") })
        try db.close()
    }

    /// Every error an outcome can carry survives the store's record.
    @Test func decidedRecordsKeepTheError() {
        let errors: [DatabaseError?] = [
            nil, .transactionAborted("disconnect"), .permissionDenied("rules"), .storage("full"), .offline,
            .eventBufferFull(limit: 3), .serverError(status: "x", message: "[\"y\"]"),
        ]
        for error in errors {
            let (status, reason) = Database.decidedRecord(committed: false, error: error)
            let tx = QueuedTransaction(
                id: 9, path: "a", functionName: "f", argument: .empty, localResult: reason, status: status)
            #expect(Database.outcome(of: tx) == TransactionOutcome(id: 9, committed: false, error: error))
        }
        let (status, reason) = Database.decidedRecord(committed: true, error: nil)
        let tx = QueuedTransaction(
            id: 9, path: "a", functionName: "f", argument: .empty, localResult: reason, status: status)
        #expect(Database.outcome(of: tx) == TransactionOutcome(id: 9, committed: true, error: nil))
    }
}
