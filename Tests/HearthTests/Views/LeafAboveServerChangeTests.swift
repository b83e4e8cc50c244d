import HearthModel
import HearthTesting
import Synchronization
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A default view at `k` whose child `d` the listeners saw as a leaf, then a server change below
/// `d`: the child must be recomputed whole, not updated child by child (removing a child of a
/// leaf keeps the leaf). The simulator's seed 2092: the client's own `d = 2`, `d/x = 5`,
/// `d/x = null`, each acknowledged between the server's pushes of the same writes; the view
/// ended with `d: 2` while the server had no `d`.
@Suite struct LeafAboveServerChangeTests {
    @Test(arguments: [0, 1, 2])
    func writesUnderALeafAckedBetweenPushesLeaveNoStaleLeaf(grouping: Int) async throws {
        let fs = SimulatedFileSystem(seed: 1)
        let store = try Store.open(directory: "/db", options: options(fs))
        let last = Mutex<Node?>(nil)
        let token = try store.addListener(at: "k", kinds: [.value]) { e in last.withLock { $0 = e.node } }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(json(#"{"a":1,"d":"s3"}"#), at: "k")
            try b.applyListenComplete(QueryLocation(path: "k", query: .default))
        }
        let w11 = try store.saveWrite(.set(.number(2)), at: "k/d")
        let w12 = try store.saveWrite(.set(.number(5)), at: "k/d/x")
        let w13 = try store.saveWrite(.set(.empty), at: "k/d/x")
        func step(_ i: Int, _ b: inout StoreBatch) throws(StoreError) {
            switch i {
            case 0: try b.applyServerOverwrite(.number(2), at: "k/d")
            case 1: try b.applyAckedWrite(w11)
            case 2: try b.applyServerOverwrite(.number(5), at: "k/d/x")
            case 3: try b.applyAckedWrite(w12)
            case 4: try b.applyServerOverwrite(.empty, at: "k/d/x")
            default: try b.applyAckedWrite(w13)
            }
        }
        // One commit per message (as the simulator's client), all in one, or two halves.
        let groups: [[Int]] =
            switch grouping {
            case 0: (0..<6).map { [$0] }
            case 1: [Array(0..<6)]
            default: [[0, 1, 2], [3, 4, 5]]
            }
        for g in groups {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in for i in g { try step(i, &b) } }
        }
        #expect(try store.serverValue(at: "k") == json(#"{"a":1}"#))
        #expect(try store.query(.default, at: "k").window.node == json(#"{"a":1}"#))
        // Events are delivered on the store's callback queue: wait (bounded) for the last one.
        let deadline = ContinuousClock.now + .seconds(30)
        while last.withLock({ $0 }) != json(#"{"a":1}"#) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(last.withLock { $0 } == json(#"{"a":1}"#), "grouping \(grouping)")
        try store.removeListener(token)
        try store.close()
    }
}
