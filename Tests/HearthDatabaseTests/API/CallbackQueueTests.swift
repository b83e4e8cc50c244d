import Dispatch
import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Where handlers run: on the main queue by default, as Firebase's SDKs run them, and on
/// ``Database/Options/callbackQueue`` when it is set.
@Suite("Callback queues", .serialized)
struct CallbackQueueTests {
    /// Names the queue a handler runs on.
    static let place = DispatchSpecificKey<String>()

    func offline(_ queue: DispatchQueue?) throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = queue
        return try Database(url: "ws://127.0.0.1:9?ns=queues", options: o)
    }

    /// Where an observer's first event and a transaction's completion ran.
    func places(_ db: Database) async -> [String] {
        let ref = db.reference(withPath: "where")
        let observed = await withCheckedContinuation { (c: CheckedContinuation<String, Never>) in
            let once = OnceBox()
            ref.observe(.value) { _ in
                if once.fire() { c.resume(returning: DispatchQueue.getSpecific(key: Self.place) ?? "elsewhere") }
            }
            _ = try? ref.setValue(1, on: nil)
        }
        let completed = await withCheckedContinuation { (c: CheckedContinuation<String, Never>) in
            ref.runTransactionBlock({ _ in TransactionResult.abort() }) { _, _, _ in
                c.resume(returning: DispatchQueue.getSpecific(key: Self.place) ?? "elsewhere")
            }
        }
        return [observed, completed]
    }

    @Test func handlersRunOnTheMainQueueByDefault() async throws {
        DispatchQueue.main.setSpecific(key: Self.place, value: "main")
        let db = try offline(nil)
        #expect(await places(db) == ["main", "main"])
        try db.close()
    }

    @Test func handlersRunOnTheCallbackQueueWhenSet() async throws {
        let queue = DispatchQueue(label: "test.callbacks.custom")
        queue.setSpecific(key: Self.place, value: "custom")
        let db = try offline(queue)
        #expect(await places(db) == ["custom", "custom"])
        try db.close()
    }
}
