import Dispatch
import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Firebase's spellings of the calls, as a Firebase app writes them: `Any?` bounds and `UInt`
/// limits, no `try` where Firebase has none, Firebase's labels, raw values and return types.
/// Each test calls the Firebase form and checks it means what the Hearth form means.
///
/// In an `async` function Swift chooses a call's `async` overload (Firebase's SDK has the same
/// pairs), so the calls an app makes from a synchronous handler are made here inside
/// ``synchronously(_:)``.
@Suite("Firebase's call forms", .serialized)
struct FirebaseFormsTests {
    func offline(_ log: Collected<String>? = nil) throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.firebase-forms")
        if let log { o.logHandler = { log.add($0) } }
        return try Database(url: "ws://127.0.0.1:9?ns=forms", options: o)
    }

    /// An `Any?` bound means the typed bound it converts to, on a reference and on a query,
    /// with and without a child key; a `UInt` limit means the `Int` one.
    @Test func untypedBoundsMeanTheTypedOnes() throws {
        let db = try offline()
        let ref = db.reference(withPath: "scores")
        let number: Any? = 10, name: Any? = "ada", none: Any? = nil, flag: Any? = true
        let key: String? = "k"
        let byValue = ref.queryOrderedByValue()
        #expect(ref.queryStarting(atValue: number) == ref.queryStarting(atValue: DatabaseValue.int(10)))
        #expect(ref.queryEnding(atValue: none) == ref.queryEnding(atValue: DatabaseValue.null))
        #expect(
            byValue.queryStarting(atValue: name, childKey: key)
                == byValue.queryStarting(atValue: .string("ada"), childKey: "k"))
        #expect(byValue.queryStarting(afterValue: flag) == byValue.queryStarting(afterValue: DatabaseValue.bool(true)))
        #expect(
            byValue.queryStarting(afterValue: number, childKey: key)
                == byValue.queryStarting(afterValue: .int(10), childKey: "k"))
        #expect(
            byValue.queryEnding(atValue: number, childKey: key) == byValue.queryEnding(atValue: .int(10), childKey: "k")
        )
        #expect(byValue.queryEnding(beforeValue: name) == byValue.queryEnding(beforeValue: DatabaseValue.string("ada")))
        #expect(
            byValue.queryEnding(beforeValue: name, childKey: key)
                == byValue.queryEnding(beforeValue: .string("ada"), childKey: "k"))
        #expect(byValue.queryEqual(toValue: number) == byValue.queryEqual(toValue: DatabaseValue.int(10)))
        #expect(
            byValue.queryEqual(toValue: number, childKey: key) == byValue.queryEqual(toValue: .int(10), childKey: "k"))
        #expect(ref.queryEqual(toValue: NSNumber(value: 2.5)) == ref.queryEqual(toValue: DatabaseValue.double(2.5)))
        let three: UInt = 3
        #expect(ref.queryLimited(toFirst: three) == ref.queryLimited(toFirst: 3))
        #expect(byValue.queryLimited(toLast: three) == byValue.queryLimited(toLast: 3))
        #expect(ref.queryLimited(toLast: three).invalid == nil)
        try db.close()
    }

    /// What Firebase refuses with an exception gives a query that reports `invalidQuery`: a
    /// value that is no database value, one the ordering refuses, a limit beyond `Int`.
    @Test func refusedUntypedBoundsFailTheQuery() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "scores")
        let date: Any? = Date(timeIntervalSince1970: 0)
        let object: Any? = ["a": 1]
        for query in [
            ref.queryStarting(atValue: date), ref.queryOrderedByValue().queryEqual(toValue: date, childKey: "k"),
            ref.queryEnding(atValue: object), ref.queryOrderedByKey().queryStarting(afterValue: 5 as Any?),
            ref.queryLimited(toFirst: UInt.max), ref.queryOrderedByKey().queryLimited(toLast: UInt(Int.max) + 1),
        ] {
            guard case .invalidQuery = query.invalid else {
                Issue.record("not refused: \(query)")
                continue
            }
            await #expect(throws: DatabaseError.self) { _ = try await query.getData() }
        }
        // The first refusal in a chain is the one reported, as for the typed builders.
        let chained = ref.queryStarting(atValue: date).queryLimited(toLast: 2)
        #expect("\(chained.invalid.map { "\($0)" } ?? "")".contains("queryStarting(atValue:)"))
        try db.close()
    }

    /// `keepSynced`, `removeValue`, `onDisconnectRemoveValue` and `cancelDisconnectOperations`
    /// take no `try`, as Firebase's; what Firebase would raise for is logged and changes nothing,
    /// and the completion forms hand it to the block.
    @Test func callsWithoutTryReportRefusals() async throws {
        let log = Collected<String>()
        let db = try offline(log)
        let scores = db.reference(withPath: "scores")
        scores.keepSynced(true)
        #expect(db.store.pins().contains(QueryLocation(path: "scores", query: .default)))
        scores.keepSynced(false)
        #expect(db.store.pins().isEmpty)
        #expect(log.all.isEmpty)

        let info = db.reference(withPath: ".info/connected")
        info.keepSynced(true)
        #expect(db.store.pins().isEmpty)
        synchronously {
            info.removeValue()
            info.onDisconnectRemoveValue()
            info.cancelDisconnectOperations()
        }
        #expect(log.all.count == 4, "\(log.all)")
        #expect(log.all.first?.contains("keepSynced(true)") == true)

        let errors = Collected<String>()
        info.removeValue { error, ref in errors.add("remove \(ref.key ?? "") \(error != nil)") }
        info.onDisconnectRemoveValue { error, _ in errors.add("onDisconnect \(error != nil)") }
        info.cancelDisconnectOperations { error, _ in errors.add("cancel \(error != nil)") }
        #expect(await eventually { errors.all.count == 3 })
        #expect(Set(errors.all) == ["remove connected true", "onDisconnect true", "cancel true"])
        try db.close()
    }

    /// `removeValue()` removes the data locally at once, as the typed form does.
    @Test func removeValueWithoutTryRemoves() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "a")
        synchronously { ref.setValue(["x": 1]) }
        let values = Collected<String>()
        ref.observe(.value) { values.add("\($0.databaseValue)") }
        #expect(await eventually { values.all.count == 1 })
        synchronously { ref.removeValue() }
        #expect(await eventually { values.all.count == 2 })
        #expect(values.all.last == "\(DatabaseValue.null)")
        #expect(db.pendingWriteIDs.count == 2, "both writes queued for the server")
        try db.close()
    }

    /// Event types carry Firebase's raw values (`FIRDataEventType`).
    @Test func eventTypesHaveFirebasesRawValues() {
        #expect(DataEventType(rawValue: 0) == .childAdded)
        #expect(DataEventType(rawValue: 1) == .childRemoved)
        #expect(DataEventType(rawValue: 2) == .childChanged)
        #expect(DataEventType(rawValue: 3) == .childMoved)
        #expect(DataEventType(rawValue: 4) == .value)
        #expect(DataEventType(rawValue: 5) == nil)
    }

    /// A snapshot's count is a `UInt` and its export format a method, as Firebase's.
    @Test func snapshotCountAndExportAreFirebases() throws {
        let db = try offline()
        let node = try Node(jsonText: #"{"a":1,"b":2,".priority":3}"#)
        let snapshot = DataSnapshot(ref: db.reference(withPath: "s"), node: node)
        let count: UInt = snapshot.childrenCount
        #expect(count == 2)
        let export = try #require(snapshot.valueInExportFormat() as? [String: Any])
        #expect(export[".priority"] as? Int == 3)
        try db.close()
    }

    /// The single-event forms with the previous key: the first child event, then no more.
    @Test func singleEventWithPreviousKey() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "list")
        synchronously { ref.setValue(["a": 1, "b": 2]) }
        let (first, previous) = try await ref.queryOrderedByKey().observeSingleEventAndPreviousSiblingKey(
            of: .childAdded)
        #expect(first.key == "a" && previous == nil)
        let seen = Collected<String>()
        ref.queryOrderedByKey().queryStarting(atValue: "b").observeSingleEvent(of: .childAdded) { snap, previous in
            seen.add("\(snap.key) after \(previous ?? "-")")
        }
        #expect(await eventually { seen.all.count == 1 })
        synchronously { ref.child("c").setValue(3) }
        let (value, _) = try await ref.observeSingleEventAndPreviousSiblingKey(of: .value)
        #expect(value.childrenCount == 3)
        #expect(seen.all == ["b after -"], "a single event fires once")
        // A change: the awaited event has the key before it.
        let observers = db.state.withLock { $0.registrations.count }
        let changed = Task {
            try await ref.queryOrderedByKey().observeSingleEventAndPreviousSiblingKey(of: .childChanged)
        }
        #expect(await eventually { db.state.withLock { $0.registrations.count } == observers + 1 })
        synchronously { ref.child("b").setValue(20) }
        let (b, beforeB) = try await changed.value
        #expect(b.key == "b" && beforeB == "a")
        #expect(await eventually { db.state.withLock { $0.registrations.count } == observers }, "observer removed")
        try db.close()
    }

    /// A cancelled listen ends the `async` single event with its error.
    @Test func singleEventThrowsACancelledListen() async throws {
        let db = try offline()
        await #expect(throws: DatabaseError.self) {
            _ = try await db.reference(withPath: "x").queryOrderedByKey().queryStarting(atValue: 1 as Any?)
                .observeSingleEventAndPreviousSiblingKey(of: .value)
        }
        try db.close()
    }

    /// `ServerValue`'s placeholders are Firebase's `[AnyHashable: Any]`, and `increment` takes
    /// its `NSNumber`; written, each is the typed placeholder.
    @Test func serverValuesAreFirebasesDictionaries() throws {
        func written(_ value: [AnyHashable: Any]) throws -> Node {
            try HearthDatabase.node(from: DatabaseValue(any: value), at: .root)
        }
        var values: [AnyHashable: Any] = ServerValue.timestamp()
        #expect(values[".sv"] as? String == "timestamp")
        #expect(try written(values) == Node(.serverValue(.timestamp)))
        values = ServerValue.increment(NSNumber(value: 2))
        #expect(try written(values) == Node(.serverValue(.increment(2))))
        #expect(
            try written(ServerValue.increment(NSNumber(value: Int64.max)))
                == HearthDatabase.node(from: .increment(Int64.max), at: .root))
        #expect(try written(ServerValue.increment(NSNumber(value: 1.5))) == Node(.serverValue(.increment(1.5))))
        #expect(try written(ServerValue.increment(true as NSNumber)) == Node(.serverValue(.increment(1))))
        #expect(try written(ServerValue.increment(3)) == HearthDatabase.node(from: .increment(3), at: .root))
        #expect(try written(ServerValue.increment(0.25)) == HearthDatabase.node(from: .increment(0.25), at: .root))
        #expect(throws: DatabaseError.self) { try written(ServerValue.increment(.nan)) }
    }

    /// The `async` forms return the reference, as Firebase's do.
    @Test func asyncFormsReturnTheReference() async throws {
        let server = try await TransportTestServer()
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=forms")
        let ref = db.reference(withPath: "users/ada")
        let values: [AnyHashable: Any] = ["online": false]
        var returned: [DatabaseReference] = []
        returned.append(try await ref.setValue(["online": true] as Any?))
        returned.append(try await ref.onDisconnectSetValue(false as Any?, andPriority: 1 as Any?))
        returned.append(try await ref.onDisconnectUpdateChildValues(values))
        returned.append(try await ref.onDisconnectRemoveValue())
        returned.append(try await ref.cancelDisconnectOperations())
        returned.append(try await ref.removeValue())
        #expect(returned.allSatisfy { $0 == ref })
        #expect(try await ref.getData().exists() == false)
        try db.close()
        try await server.stop()
    }
}

/// Runs `body` as a synchronous caller (a button's action, a delegate method) would.
private func synchronously(_ body: () -> Void) { body() }
