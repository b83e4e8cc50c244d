import Dispatch
import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// The typed asynchronous sequences of events: what they yield, how they end, how they buffer.
@Suite("Event sequences", .serialized)
struct EventSequenceTests {
    /// An offline memory-only database: every event comes from local writes.
    func offline() throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.sequences")
        return try Database(url: "ws://127.0.0.1:9?ns=sequences", options: o)
    }

    /// Every event raised so far has reached `sequence`'s buffer.
    func drain<E>(_ db: Database, _ sequence: DatabaseEventSequence<E>) {
        db.store.waitForEventDelivery()
        sequence.queue.sync {}
    }

    func observers(_ db: Database) -> Int { db.state.withLock { $0.registrations.count } }

    @Test func valuesYieldTheDataAfterEachChange() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "v")
        var values = ref.values().makeAsyncIterator()
        try ref.setValue(1, on: nil)
        #expect(try await values.next()?.value as? Int == 1)
        try ref.setValue(2, on: nil)
        #expect(try await values.next()?.value as? Int == 2)
        try db.close()
    }

    /// A consumer slower than the changes gets the newest data (the buffer holds one value).
    @Test func aSlowConsumerSkipsToTheNewestValue() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "v")
        let sequence = ref.values()
        for n in 1...3 { try ref.setValue(.int(Int64(n)), on: nil) }
        drain(db, sequence)
        var values = sequence.makeAsyncIterator()
        #expect(try await values.next()?.value as? Int == 3)
        try db.close()
    }

    /// Cancelling the iterating task removes the observer.
    @Test func cancellingTheTaskEndsTheListen() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "c")
        let sequence = ref.values()
        #expect(observers(db) == 1)
        let task = Task {
            var n = 0
            for try await _ in sequence { n += 1 }
            return n
        }
        task.cancel()
        _ = try await task.value
        #expect(observers(db) == 0)
        try db.close()
    }

    /// Releasing the sequence removes the observer.
    @Test func releasingTheSequenceEndsTheListen() throws {
        let db = try offline()
        do {
            let sequence = db.reference(withPath: "r").childEvents()
            #expect(observers(db) == 1)
            _ = sequence
        }
        #expect(observers(db) == 0)
        try db.close()
    }

    /// A failed listen ends the sequence by throwing its typed error.
    @Test func aFailedListenThrowsItsError() async throws {
        let db = try offline()
        let invalid = db.reference(withPath: "q").queryOrderedByKey().queryOrderedByValue()
        var values = invalid.values().makeAsyncIterator()
        do {
            _ = try await values.next()
            Issue.record("an invalid query throws")
        } catch {
            guard case .invalidQuery = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(try await values.next() == nil, "ended")
        try db.close()
    }

    /// The child events of one change come in Firebase's order, each with its type, snapshot
    /// and previous sibling key.
    @Test func childEventsInFirebasesOrder() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "kids")
        let sequence = ref.childEvents()
        try ref.setValue(["a": 1, "b": 2] as DatabaseValue, on: nil)
        try ref.setValue(["a": 3] as DatabaseValue, on: nil)
        drain(db, sequence)
        var events = sequence.makeAsyncIterator()
        var seen: [String] = []
        for _ in 0..<4 {
            let e = try #require(try await events.next())
            seen.append("\(e.event) \(e.snapshot.key) \(e.previousKey ?? "-")")
        }
        #expect(seen == ["childAdded a -", "childAdded b a", "childRemoved b -", "childChanged a -"])
        try db.close()
    }

    /// A sequence of events holds at most its limit, then ends with `eventBufferFull` rather
    /// than drop an event.
    @Test func aFullBufferEndsTheSequence() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "many")
        let sequence = ref.events(.childAdded, bufferingLimit: 2)
        try ref.setValue(["a": 1, "b": 2, "c": 3] as DatabaseValue, on: nil)
        drain(db, sequence)
        var events = sequence.makeAsyncIterator()
        #expect(try await events.next()?.snapshot.key == "a")
        #expect(try await events.next()?.snapshot.key == "b")
        await #expect(throws: DatabaseError.eventBufferFull(limit: 2)) { _ = try await events.next() }
        #expect(observers(db) == 0, "the listen ended")
        try db.close()
    }
}
