import Dispatch
import Foundation
import Hearth
import HearthModel
import Observation
import Testing
@testable import HearthDatabase

/// The `@Observable` live query, tracked as SwiftUI tracks it (`withObservationTracking`).
@MainActor
@Suite("Live snapshots", .serialized)
struct LiveSnapshotTests {
    func offline() throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.live")
        return try Database(url: "ws://127.0.0.1:9?ns=live", options: o)
    }

    func observers(_ db: Database) -> Int { db.state.withLock { $0.registrations.count } }

    /// Tracks what `read` reads, runs `act`, and returns once a tracked property changed.
    /// Observation calls `onChange` as the change begins, on the main actor; this task runs
    /// again after that main-actor job, so the change has landed when it returns.
    func change(reading read: () -> Void, after act: () -> Void) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            withObservationTracking(read, onChange: { c.resume() })
            act()
        }
    }

    @Test func aWriteChangesTheSnapshot() async throws {
        let db = try offline()
        let ref = db.reference(withPath: "live")
        let live = ref.live()
        #expect(live.isLoading && live.snapshot == nil && live.error == nil)
        await change(reading: { _ = live.snapshot }, after: { _ = try? ref.setValue(7, on: nil) })
        #expect(live.snapshot?.value as? Int == 7)
        #expect(!live.isLoading)
        await change(reading: { _ = live.snapshot }, after: { _ = try? ref.setValue(8, on: nil) })
        #expect(live.snapshot?.value as? Int == 8)
        try db.close()
    }

    /// A failed listen shows as ``LiveSnapshot/error``.
    @Test func aFailedListenSetsTheError() async throws {
        let db = try offline()
        let live = db.reference(withPath: "q").queryOrderedByKey().queryOrderedByValue().live()
        await change(reading: { _ = live.error }, after: {})
        guard case .invalidQuery = live.error else {
            Issue.record("an invalid query: \(String(describing: live.error))")
            return
        }
        #expect(!live.isLoading && live.snapshot == nil)
        try db.close()
    }

    /// Releasing the live snapshot, or cancelling it, removes its observer.
    @Test func releasingOrCancellingEndsTheListen() throws {
        let db = try offline()
        var live: LiveSnapshot? = db.reference(withPath: "a").live()
        #expect(observers(db) == 1)
        live = nil
        #expect(observers(db) == 0)
        let cancelled = db.reference(withPath: "b").live()
        #expect(observers(db) == 1)
        cancelled.cancel()
        #expect(observers(db) == 0)
        _ = live
        try db.close()
    }
}
