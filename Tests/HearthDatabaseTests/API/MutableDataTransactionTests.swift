import Dispatch
import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Firebase's transactions (`runTransactionBlock` with ``MutableData``), over real sockets.
@Suite("MutableData transactions", .serialized)
struct MutableDataTransactionTests {
    func open(_ server: TransportTestServer) throws -> Database {
        var o = Database.Options()
        o.durability = .buffered
        return try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=mtx", options: o)
    }

    /// Writes `value` at `path` through another client and waits for the server to hold it.
    func seed(_ server: TransportTestServer, _ path: String, _ value: DatabaseValue) async throws {
        let other = try open(server)
        try await other.reference(withPath: path).setValue(value)
        try other.close()
    }

    /// Firebase calls the block first with the local value — nil when nothing is cached —
    /// and again with the server's value when the first guess was stale.
    @Test func firstRunOnNilThenOnTheServersValue() async throws {
        let server = try await TransportTestServer()
        try await seed(server, "counter", 10)
        let db = try open(server)
        let seen = Collected<String>()
        let outcome = Collected<String>()
        db.reference(withPath: "counter").runTransactionBlock { currentData in
            seen.add(currentData.value.map { "\($0)" } ?? "nil")
            currentData.value = (currentData.value as? Int ?? 0) + 1
            return TransactionResult.success(withValue: currentData)
        } andCompletionBlock: { error, committed, snapshot in
            outcome.add("\(error == nil) \(committed) \(snapshot?.value.map { "\($0)" } ?? "nil")")
        }
        #expect(await eventually { outcome.all.count == 1 })
        #expect(outcome.all == ["true true 11"])
        #expect(seen.all.first == "nil", "first run on the empty cache: \(seen.all)")
        #expect(seen.all.last == "10", "re-run on the server's value: \(seen.all)")
        #expect(try server.store.value(at: "counter") == Node(.integer(exactly: 11)))
        try db.close()
        try await server.stop()
    }

    /// Two clients increment one counter through MutableData: stale guesses run again, every
    /// increment counts once.
    @Test func concurrentIncrementsRetryOnStaleValues() async throws {
        let server = try await TransportTestServer()
        let a = try open(server)
        let b = try open(server)
        let refs = [a.reference(withPath: "hits"), b.reference(withPath: "hits")]
        let done = Collected<Bool>()
        for _ in 0..<5 {
            for ref in refs {
                ref.runTransactionBlock(
                    { data in
                        data.value = (data.value as? Int ?? 0) + 1
                        return .success(withValue: data)
                    }, andCompletionBlock: { error, committed, _ in done.add(error == nil && committed) })
            }
        }
        #expect(await eventually { done.all.count == 10 })
        #expect(done.all.allSatisfy { $0 })
        #expect(try server.store.value(at: "hits") == Node(.integer(exactly: 10)))
        try a.close()
        try b.close()
        try await server.stop()
    }

    @Test func abortCommitsNothing() async throws {
        let server = try await TransportTestServer()
        try await seed(server, "x", "keep")
        let db = try open(server)
        let (committed, snapshot) = try await db.reference(withPath: "x").runTransactionBlock { data in
            data.value = "changed"
            return TransactionResult.abort()
        }
        #expect(!committed)
        #expect(snapshot.value as? String != "changed")
        #expect(try server.store.value(at: "x") == .string("keep"))
        #expect(db.pendingWriteIDs.isEmpty)
        try db.close()
        try await server.stop()
    }

    /// A write to a child ``MutableData`` is a write to its parent's data; the whole data is
    /// committed, priorities included.
    @Test func childDataWritesThroughToItsParent() async throws {
        let server = try await TransportTestServer()
        try await seed(server, "doc", ["old": 1, "list": ["x", "y"]])
        let db = try open(server)
        let report = Collected<String>()
        let (committed, _) = try await db.reference(withPath: "doc").runTransactionBlock { data in
            guard data.hasChildren() else { return .success(withValue: data) }
            let b = data.childData(byAppendingPath: "a/b")
            #expect(b.key == "b")
            b.value = 5
            b.priority = "p"
            data.childData(byAppendingPath: "old").value = nil
            report.add(
                "\(data.key ?? "nil") \(data.childrenCount) \(data.hasChild(atPath: "a/b")) \(data.hasChild(atPath: "old"))"
                    + " \(data.children.map { $0.key ?? "" }) \((data.value as? [String: Any])?["a"] != nil)")
            return .success(withValue: b)  // Firebase commits the whole data, whichever child is returned
        }
        #expect(committed)
        #expect(report.all.last == #"nil 2 true false ["a", "list"] true"#, "\(report.all)")
        let expected = try Node(jsonText: #"{"a":{"b":{".value":5,".priority":"p"}},"list":{"0":"x","1":"y"}}"#)
        #expect(try server.store.value(at: "doc") == expected)
        try db.close()
        try await server.stop()
    }

    /// An invalid value set on the MutableData ends the transaction with the error, not
    /// committed; nothing is written (Firebase raises an exception).
    @Test func anInvalidValueEndsTheTransactionWithItsError() async throws {
        let server = try await TransportTestServer()
        let db = try open(server)
        let outcome = Collected<String>()
        db.reference(withPath: "bad").runTransactionBlock(
            { data in
                data.value = ["a.b": 1]
                data.value = 2  // ignored: the transaction already failed
                return .success(withValue: data)
            },
            andCompletionBlock: { error, committed, _ in
                outcome.add("\((error as? DatabaseError).map { "\($0)" } ?? "nil") \(committed)")
            })
        #expect(await eventually { outcome.all.count == 1 })
        #expect(outcome.all.first?.hasPrefix("invalid value") == true, "\(outcome.all)")
        #expect(outcome.all.first?.hasSuffix(" false") == true)
        #expect(db.pendingWriteIDs.isEmpty)
        #expect(try db.store.value(at: "bad") == .empty)
        try db.close()
        try await server.stop()
    }

    /// The block may use the database — write elsewhere, read — without deadlocking: it runs
    /// holding no lock of the database. It is started off the test's task, so that a deadlock
    /// fails the wait rather than hanging the test.
    @Test func aBlockThatUsesTheDatabaseDoesNotDeadlock() async throws {
        let server = try await TransportTestServer()
        let db = try open(server)
        let ref = db.reference(withPath: "tx")
        let other = db.reference(withPath: "side")
        let read = Collected<String>()
        let outcome = Collected<Bool>()
        DispatchQueue.global().async {
            ref.runTransactionBlock(
                { data in
                    other.setValue("written from the block")
                    other.observeSingleEvent(of: .value) { snapshot in read.add(snapshot.value as? String ?? "nil") }
                    data.value = "done"
                    return .success(withValue: data)
                }, andCompletionBlock: { error, committed, _ in outcome.add(error == nil && committed) })
        }
        #expect(await eventually { outcome.all.count == 1 && !read.all.isEmpty })
        #expect(outcome.all == [true])
        #expect(read.all.first == "written from the block")
        #expect(await eventually { db.pendingWriteIDs.isEmpty })
        #expect(try server.store.value(at: "tx") == .string("done"))
        #expect(try server.store.value(at: "side") == .string("written from the block"))
        try db.close()
        try await server.stop()
    }

    /// Firebase's form without a completion (from synchronous code, where Swift does not pick
    /// the `async` form).
    func startWithoutCompletion(_ ref: DatabaseReference) {
        ref.runTransactionBlock { data in
            data.value = 1
            return TransactionResult.success(withValue: data)
        }
    }

    /// Firebase's other forms: no completion, `withLocalEvents:`, a reference under `.info`
    /// (the error goes to the completion; nothing throws).
    @Test func theOtherForms() async throws {
        let server = try await TransportTestServer()
        let db = try open(server)
        startWithoutCompletion(db.reference(withPath: "plain"))
        let outcome = Collected<String>()
        db.reference(withPath: "events").runTransactionBlock(
            { data in
                data.value = 2
                return TransactionResult.success(withValue: data)
            }, andCompletionBlock: { error, committed, _ in outcome.add("\(error == nil) \(committed)") },
            withLocalEvents: false)
        db.reference(withPath: ".info/x").runTransactionBlock({ data in .success(withValue: data) }) {
            error, committed, _ in
            outcome.add("info \(error == nil) \(committed)")
        }
        #expect(await eventually { outcome.all.count == 2 && db.pendingWriteIDs.isEmpty })
        #expect(Set(outcome.all) == ["true true", "info false false"])
        #expect(await eventually { (try? server.store.value(at: "plain")) == Node(.integer(exactly: 1)) })
        #expect(try server.store.value(at: "events") == Node(.integer(exactly: 2)))
        try db.close()
        try await server.stop()
    }

    /// MutableData on its own: write-through, priorities, invalid paths.
    @Test func mutableDataAlone() throws {
        let data = MutableData()
        #expect(data.value == nil && data.key == nil && !data.hasChildren() && data.childrenCount == 0)
        data.childData(byAppendingPath: "a").value =
            ["x": 1, "y": [".value": "v", ".priority": 3] as [String: Any]] as [String: Any]
        data.childData(byAppendingPath: "/b/").value = true
        #expect(data.childrenCount == 2)
        #expect(data.childData(byAppendingPath: "a/y").priority as? Int == 3)
        #expect(data.childData(byAppendingPath: "b").value as? Bool == true)
        #expect(data.childData(byAppendingPath: "a/x").value as? Int == 1)
        data.childData(byAppendingPath: "a").priority = "pa"
        #expect(data.childData(byAppendingPath: "a").priority as? String == "pa")
        #expect(data.children.map(\.key) == ["a", "b"])
        for child in data.children { child.value = nil }
        #expect(data.value == nil)
        guard case .data(let node) = TransactionResult.success(withValue: data).outcome else {
            Issue.record("a success")
            return
        }
        #expect(node == .empty)
        #expect(!data.hasChild(atPath: "a.b"))
        _ = data.childData(byAppendingPath: "a#b")
        guard case .invalid = TransactionResult.success(withValue: data).outcome else {
            Issue.record("an invalid path fails the transaction")
            return
        }
        guard case .abort = TransactionResult().outcome else {
            Issue.record("TransactionResult() aborts, as Firebase's")
            return
        }
    }
}
