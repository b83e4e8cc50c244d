// The caller's side of `setValue`: how long each call holds the app's thread, offline, on a
// store on disk — what a tap on the main thread pays per write.
import Dispatch
import Foundation
import Hearth
import HearthDatabase

/// One run's figures: the calls' latencies (seconds, sorted), the calls' total, and the time
/// from the last call until `close()` returned (the writes' syncs the calls left to the
/// database's queue, and the close's own).
struct CallerCostRun {
    let latencies: [Double]
    let calls: Double
    let drained: Double

    /// The `q`-quantile of the latencies (nearest rank).
    func quantile(_ q: Double) -> Double {
        latencies[min(latencies.count - 1, Int((Double(latencies.count) * q).rounded(.up)) - 1)]
    }
}

/// `n` `setValue`s on `chat/mNNNNNN` (100-byte strings) from this thread, offline (the server is
/// never reached: `connectAtOpen = false`), each call timed alone.
func callerCostRun(n: Int, durability: Durability) throws -> CallerCostRun {
    let dir = tempDir("caller")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var o = Database.Options()
    o.storeDirectory = dir
    o.durability = durability
    o.connectAtOpen = false
    o.callbackQueue = DispatchQueue(label: "hearth.callbacks")
    let db = try Database(url: "ws://127.0.0.1:9?ns=test", options: o)
    let chat = db.reference(withPath: "chat")
    let value = DatabaseValue.string(chatValue)
    let refs = (0..<n).map { chat.child(chatKey($0)) }
    var latencies = [Double](repeating: 0, count: n)
    let t0 = now()
    for i in 0..<n {
        let start = now()
        _ = try refs[i].setValue(value, on: nil, withCompletionBlock: nil)
        latencies[i] = now() - start
    }
    let t1 = now()
    try db.close()
    return CallerCostRun(latencies: latencies.sorted(), calls: t1 - t0, drained: now() - t1)
}
