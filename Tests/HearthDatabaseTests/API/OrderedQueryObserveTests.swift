import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Observers of ordered queries get Firebase's events — `child_moved` when a child's indexed
/// value changes, previous keys in the query's order — also for queries that load all data
/// (which listen to the server as the default query but keep their own order), and one
/// observer of several types gets each change's events in Firebase's type order.
@Suite("Ordered query observers", .serialized)
struct OrderedQueryObserveTests {
    func options(online: Bool) -> Database.Options {
        var o = Database.Options()
        o.connectAtOpen = online
        o.durability = .buffered
        return o
    }

    /// Records `"type key prev"` lines from any number of observers, in delivery order (the
    /// handlers all run on the database's one callback queue).
    final class Recorder: Sendable {
        let lines = Collected<String>()
        func handler(_ type: DataEventType) -> @Sendable (DataSnapshot, String?) -> Void {
            { snap, previous in self.add(type, snap, previous) }
        }
        func add(_ type: DataEventType, _ snap: DataSnapshot, _ previous: String?) {
            switch type {
            case .value: lines.add("value")
            case .childRemoved: lines.add("child_removed \(snap.key)")
            default: lines.add("\(Self.name(type)) \(snap.key) \(previous ?? "null")")
            }
        }
        static func name(_ type: DataEventType) -> String {
            switch type {
            case .value: "value"
            case .childAdded: "child_added"
            case .childChanged: "child_changed"
            case .childRemoved: "child_removed"
            case .childMoved: "child_moved"
            }
        }
    }

    /// End to end against the in-process server: the reported case — a child whose score
    /// changes its place under `orderByChild("score")` (no limit) — and the key index, which
    /// never moves a child for a priority change.
    @Test func orderedQueriesWithoutLimitRaiseFirebasesEvents() async throws {
        let server = try await TransportTestServer()
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=test", options: options(online: true))
        let scores = db.reference().child("scores")
        try await scores.setValue(["a": ["score": 1], "b": ["score": 2], "c": ["score": 3]])

        let byScore = Recorder()
        let ordered = scores.queryOrdered(byChild: "score")
        for type in [DataEventType.childMoved, .childChanged, .value] {
            ordered.observe(type, andPreviousSiblingKeyWith: byScore.handler(type))
        }
        let byKey = Recorder()
        let keyed = scores.queryOrderedByKey()
        for type in [DataEventType.childMoved, .childChanged, .value] {
            keyed.observe(type, andPreviousSiblingKeyWith: byKey.handler(type))
        }
        #expect(await eventually { byScore.lines.all == ["value"] && byKey.lines.all == ["value"] })

        try await scores.child("b/score").setValue(0)
        #expect(await eventually { byScore.lines.all.count == 4 })
        #expect(byScore.lines.all == ["value", "child_moved b null", "child_changed b null", "value"])
        // Ordered by key, b follows a whatever its score.
        #expect(await eventually { byKey.lines.all.count == 3 })

        try await scores.child("c").setPriority(7)
        #expect(await eventually { byKey.lines.all.count == 5 })
        #expect(byKey.lines.all == ["value", "child_changed b a", "value", "child_changed c b", "value"])
        try db.close()
        try await server.stop()
    }

    /// One observer of `value` and `child_added` (in that order) on data already complete
    /// locally: the child events come first, as one change's events do.
    @Test func oneObserverOfSeveralTypesGetsChildEventsBeforeValue() throws {
        let db = try Database(url: "ws://127.0.0.1:1?ns=test", options: options(online: false))
        let list = db.reference().child("list")
        list.setValue(["b": 2, "a": 1])
        let recorder = Recorder()
        let handles = db.observe(
            list.databaseQuery, [.value, .childAdded], queue: nil,
            handler: { type, snap, previous in recorder.add(type, snap, previous) }, cancel: nil)
        #expect(handles.count == 1)
        list.child("c").setValue(3)
        db.store.waitForEventDelivery()
        db.callbacks.sync {}
        #expect(
            recorder.lines.all == ["child_added a null", "child_added b a", "value", "child_added c b", "value"])
        try db.close()
    }
}
