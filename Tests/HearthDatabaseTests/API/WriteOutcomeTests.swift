import Dispatch
import Foundation
import Hearth
import HearthModel
import HearthTesting
import Testing
@testable import HearthDatabase

/// A plain write's answer stays in the store until the app's handlers have run: power cuts on a
/// simulated disk between the answer and the handler, and between the handler and its
/// acknowledgement.
@Suite("Write outcomes across a crash", .serialized)
struct WriteOutcomeTests {
    func options(_ fs: SimulatedFileSystem, online: Bool) -> Database.Options {
        TransactionOutcomeTests().options(fs, online: online)
    }

    /// The process dies after the server's answer was committed and before the write's
    /// completion and observer ran: the next start reports it, once, to the observer registered
    /// then — and the write, decided, is neither pending nor sent again.
    @Test func aResultWhoseHandlerDidNotRunIsReportedAtTheNextStart() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=wonce"
        let fs = SimulatedFileSystem(seed: 47)
        let stalled = DispatchQueue(label: "test.stalled")
        stalled.suspend()
        let id: WriteID
        do {
            let db = try Database(url: url, options: options(fs, online: true))
            let heard = Collected<WriteResult>()
            db.observeWriteResults(on: stalled) { heard.add($0) }
            let completed = Collected<Bool>()
            id = try db.reference(withPath: "a").setValue(.int(1), on: stalled) { e, _ in completed.add(e == nil) }
            #expect(await eventually { db.store.transactions().map(\.status) == [.writeApplied] })
            #expect(db.pendingWriteIDs.isEmpty, "decided: no longer a pending write")
            #expect(heard.all.isEmpty && completed.all.isEmpty)
            fs.powerCut(mode: .dropAllUnsynced)
            try? db.close()
        }
        stalled.resume()  // the handlers run after the close: too late to acknowledge anything
        do {
            let db = try Database(url: url, options: options(fs, online: false))
            #expect(db.store.transactions().map(\.status) == [.writeApplied], "kept, decided")
            #expect(db.pendingWriteIDs.isEmpty, "not sent again")
            #expect(try db.store.value(at: "a") == Node(.number(1)), "the write's value, as server data")
            let heard = Collected<WriteResult>()
            db.observeWriteResults { heard.add($0) }
            #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
            #expect(heard.all == [WriteResult(id: id, error: nil)])
            try db.close()
        }
        let db = try Database(url: url, options: options(fs, online: false))
        #expect(db.store.transactions().isEmpty, "acknowledged and closed: never reported again")
        try db.close()
        #expect(try server.store.value(at: "a") == Node(.number(1)))
        try await server.stop()
    }

    /// A write of this run that nothing will hear of — no completion, no observer when its
    /// answer arrives (Firebase's `setValue(_:)` as most apps call it) — leaves the store with
    /// its answer: no outcome is kept for it, none waits, none is dropped and logged.
    @Test func aWriteNothingHearsOfKeepsNoOutcome() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=wunheard"
        let fs = SimulatedFileSystem(seed: 48)
        let db = try Database(url: url, options: options(fs, online: true))
        for i in 0..<5 {
            _ = try db.reference(withPath: "k\(i)").setValue(.int(Int64(i)), on: nil, withCompletionBlock: nil)
        }
        #expect(await eventually { db.pendingWriteIDs.isEmpty })
        #expect(await eventually { (try? server.store.value(at: "k4")) == Node(.number(4)) })
        #expect(db.store.transactions().isEmpty, "no outcome kept for writes nothing hears of")
        #expect(db.acknowledger.ledger.writes.waiting.isEmpty)
        try db.close()
        try await server.stop()
    }

    /// The handler ran, and the process died before its acknowledgement was durable: the next
    /// start reports it again (at least once), identical, under the same id.
    @Test func aResultWhoseAcknowledgementWasLostIsReportedAgain() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=wagain"
        let fs = SimulatedFileSystem(seed: 47)
        let id: WriteID
        do {
            let db = try Database(url: url, options: options(fs, online: true))
            let heard = Collected<WriteResult>()
            db.observeWriteResults { heard.add($0) }
            id = try db.reference(withPath: "a").updateChildValues(["b": .int(2)])
            #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
            fs.powerCut(mode: .dropAllUnsynced)
            try? db.close()
        }
        let db = try Database(url: url, options: options(fs, online: false))
        let heard = Collected<WriteResult>()
        db.observeWriteResults { heard.add($0) }
        #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
        #expect(heard.all == [WriteResult(id: id, error: nil)])
        try db.close()
        try await server.stop()
    }

    /// The completion ran (no observer) and the database was closed: the acknowledgement is
    /// durable, and the result is never reported again.
    @Test func anAcknowledgedResultIsNotReportedAfterACleanClose() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=wclosed"
        let fs = SimulatedFileSystem(seed: 47)
        do {
            let db = try Database(url: url, options: options(fs, online: true))
            let completed = Collected<Bool>()
            try db.reference(withPath: "a").removeValue(withCompletionBlock: { e, _ in completed.add(e == nil) })
            #expect(await eventually { completed.all == [true] && db.store.transactions().isEmpty })
            try db.close()
            fs.powerCut(mode: .dropAllUnsynced)
        }
        let db = try Database(url: url, options: options(fs, online: false))
        #expect(db.store.transactions().isEmpty)
        let heard = Collected<WriteResult>()
        db.observeWriteResults { heard.add($0) }
        db.work.sync {}
        try db.close()
        #expect(heard.all.isEmpty)
        try await server.stop()
    }

    /// A write left pending by an earlier run (never answered) is still sent at the next start,
    /// and its result reaches the observer once.
    @Test func aPendingWriteIsStillSentAfterARestart() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=wpending"
        let fs = SimulatedFileSystem(seed: 47)
        let id: WriteID
        do {
            let db = try Database(url: url, options: options(fs, online: false))
            id = try db.reference(withPath: "a").setValue(.int(3))
            try db.close()
        }
        let db = try Database(url: url, options: options(fs, online: false))
        #expect(db.pendingWriteIDs == [id])
        let heard = Collected<WriteResult>()
        db.observeWriteResults { heard.add($0) }
        db.goOnline()
        #expect(await eventually { heard.all.count == 1 && db.store.transactions().isEmpty })
        #expect(heard.all == [WriteResult(id: id, error: nil)])
        #expect(db.pendingWriteIDs.isEmpty)
        try db.close()
        #expect(try server.store.value(at: "a") == Node(.number(3)))
        try await server.stop()
    }

    /// Results of writes restored from an earlier run (their completions died with it), answered
    /// before any observer is registered, are kept up to ``WriteAcknowledger/maxUndeliveredOutcomes``;
    /// past it the oldest is dropped, from memory and from the store.
    @Test func resultsWaitingForAnObserverAreBounded() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=wbound"
        let fs = SimulatedFileSystem(seed: 47)
        let n = WriteAcknowledger.maxUndeliveredOutcomes + 1
        var ids: [WriteID] = []
        do {
            let earlier = try Database(url: url, options: options(fs, online: false))
            for i in 0..<n { ids.append(try earlier.reference(withPath: "w/\(i)").setValue(.int(Int64(i)))) }
            try earlier.close()
        }
        let db = try Database(url: url, options: options(fs, online: false))
        db.goOnline()
        #expect(await eventually { db.pendingWriteIDs.isEmpty && db.store.transactions().count == n - 1 })
        db.work.sync {}
        #expect(db.store.transactions().count == n - 1, "the oldest left the store")
        let heard = Collected<WriteResult>()
        db.observeWriteResults { heard.add($0) }
        #expect(await eventually { heard.all.count == n - 1 && db.store.transactions().isEmpty })
        #expect(heard.all.map(\.id) == Array(ids.dropFirst()))
        #expect(heard.all.allSatisfy { $0.error == nil })
        try db.close()
        try await server.stop()
    }

    /// A decided write's record keeps the write's id and the server's refusal, and reads back
    /// as the same result; a transaction's record is not a write's.
    /// A write's outcome record whose argument names no write id (a damaged or foreign store:
    /// Hearth writes the id as an integer) can never be delivered: the next open removes it and
    /// says so, instead of keeping it in the store forever. A readable one beside it is kept.
    @Test func anOutcomeRecordNamingNoWriteIsRemovedAtOpen() async throws {
        let fs = SimulatedFileSystem(seed: 48)
        do {
            let db = try Database(url: "ws://127.0.0.1:1?ns=wonce", options: options(fs, online: false))
            try db.store.commit { (b: inout StoreBatch) throws(StoreError) in
                let bad = try b.enqueueTransaction(
                    at: "a", functionName: "", argument: .string("x"), localResult: .empty)
                try b.updateTransaction(bad.id, status: .writeApplied)
                try b.saveWriteOutcome(writeID: 7, at: "b", status: .writeApplied, reason: .empty)
            }
            try db.close()
        }
        var o = options(fs, online: false)
        let lines = Collected<String>()
        o.logHandler = { lines.add($0) }
        let db = try Database(url: "ws://127.0.0.1:1?ns=wonce", options: o)
        #expect(db.store.transactions().map(\.path) == ["b"], "the unreadable record removed, the readable one kept")
        #expect(lines.all.contains { $0.contains("naming no write id") })
        let heard = Collected<WriteResult>()
        db.observeWriteResults { heard.add($0) }
        #expect(await eventually { heard.all == [WriteResult(id: WriteID(rawValue: 7), error: nil)] })
        try db.close()
    }

    @Test func decidedWriteRecordsKeepTheResult() throws {
        let errors: [DatabaseError?] = [nil, .permissionDenied("rules"), .serverError(status: "x", message: "[\"y\"]")]
        for (i, error) in errors.enumerated() {
            let (status, reason) = Database.decidedRecord(committed: error == nil, error: error)
            let tx = QueuedTransaction(
                id: 9, path: "a", functionName: "", argument: Node(.integer(exactly: Int64(i) + (1 << 60))),
                localResult: reason, status: status == .committed ? .writeApplied : .writeRefused)
            #expect(
                Database.writeResult(of: tx) == WriteResult(id: WriteID(rawValue: Int64(i) + (1 << 60)), error: error))
            #expect(Database.outcome(of: tx) == nil)
        }
        let committed = QueuedTransaction(
            id: 9, path: "a", functionName: "f", argument: .number(1), localResult: .empty, status: .committed)
        #expect(Database.writeResult(of: committed) == nil)
    }
}
