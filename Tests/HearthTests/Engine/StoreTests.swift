import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog

/// A fresh temporary directory for one test, removed at the end.
final class TempDir {
    let path: String
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-test-\(UUID().uuidString)").path
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A clock tests can move.
final class TestClock: Sendable {
    private let now = Mutex<Int64>(1_700_000_000_000)
    func callAsFunction() -> Int64 { now.withLock { $0 } }
    func advance(_ ms: Int64) { now.withLock { $0 += ms } }
}

import Synchronization
import HearthTesting

func options(
    _ fs: any FileSystem = POSIXFileSystem(), clock: TestClock = TestClock(), cap: Int = Store.defaultCacheSize,
    inline: Bool = true
) -> Store.Options {
    var o = Store.Options()
    o.fileSystem = fs
    o.clock = { clock() }
    o.cacheSizeBytes = cap
    o.backgroundMaintenance = !inline
    // Every maintenance pass drops a resident cache, as soon as it can: the tests exercise the
    // drop paths (ResidentCacheTests checks the default quiet period on its own).
    o.residentCacheQuietNanos = 0
    return o
}

func json(_ text: String) -> Node { try! Node(jsonText: text) }

@Suite struct StoreTests {
    @Test func everyKindOfStateSurvivesReopen() throws {
        let dir = TempDir()
        let clock = TestClock()
        var expected: StoreState
        do {
            let store = try Store.open(directory: dir.path, options: options(clock: clock))
            try store.applyServerOverwrite(json(#"{"a":1,"b":{"c":"x"}}"#), at: "root")
            try store.applyServerMerge([ChildUpdate(path: "b/d", node: .bool(true))], at: "root")
            let w1 = try store.saveWrite(.set(json(#"{".sv":"timestamp"}"#)), at: "root/t")
            let w2 = try store.saveWrite(
                .update([ChildUpdate(path: "n", node: json(#"{".sv":{"increment":2}}"#))]), at: "root")
            #expect(w2 == w1 + 1)
            let loc = QueryLocation(path: "root", query: try QuerySpec(orderBy: .value).limitToLast(2))
            try store.trackQuery(at: loc, complete: true, active: true, keys: ["a", "b"])
            try store.keepSynced(QueryLocation(path: "pinned", query: .default), true)
            try store.saveAuth(AuthToken(token: "secret", expiresAt: 42))
            let tx = try store.enqueueTransaction(
                at: "counter", functionName: "inc", argument: .number(1), localResult: .number(5))
            try store.updateTransaction(tx.id, retryCount: 2, status: .needsRetry)
            try store.queueOnDisconnect(.set(.string("offline")), at: "status")
            let od = try store.queueOnDisconnect(.remove, at: "presence")
            try store.ackOnDisconnect(od.id)
            try store.setServerTimeOffset(-1500)
            expected = try store.state()
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        let reopened = try store.state()
        #expect(reopened.checkInvariants() == nil)
        // The previous session's active query is inactive now, last used at open.
        let q = try #require(reopened.trackedQueries.values.first)
        #expect(!q.active)
        #expect(q.keys == ["a", "b"])
        expected.apply(.sessionStarted(at: clock()))
        #expect(reopened == expected)
        #expect(store.pendingWrites().count == 2)
        #expect(store.auth()?.token == "secret")
        #expect(store.transactions().first?.status == .needsRetry)
        #expect(store.onDisconnectOperations().map(\.acknowledged) == [false, true])
        #expect(store.serverTimeOffset() == -1500)
        // Pending writes overlaid, server values resolved.
        let value = try store.value(at: "root")
        #expect(value.child("t") == .number(Double(clock() - 1500)))
        #expect(value.child("n") == .number(2))
        #expect(value.child(at: "b/d") == .bool(true))
        #expect(try store.serverValue(at: "root").hasChild("t") == false)
        try store.close()
    }

    @Test func ackWithServerOverwriteIsOneCommit() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let id = try store.saveWrite(.set(.string("hi")), at: "m/1")
        let before = store.lastLSN
        let result = try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.ackWrite(id)
            try b.applyServerOverwrite(.string("hi"), at: "m/1")
        }
        #expect(result.lsn == before + 1)
        #expect(result.events.count == 2)
        #expect(store.pendingWrites().isEmpty)
        #expect(try store.serverValue(at: "m/1") == .string("hi"))
        try store.close()
    }

    @Test func invalidOperationsThrowTypedErrorsAndCommitNothing() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let lsn = store.lastLSN
        #expect(throws: StoreError.self) { try store.ackWrite(99) }
        #expect(throws: StoreError.self) { try store.revertWrite(1) }
        #expect(throws: StoreError.self) { try store.untrackQuery(at: QueryLocation(path: "x", query: .default)) }
        #expect(throws: StoreError.self) { try store.completeTransaction(5) }
        #expect(throws: StoreError.self) { try store.ackOnDisconnect(5) }
        #expect(throws: StoreError.self) { try store.saveWrite(.set(.number(1)), at: ".info/connected") }
        #expect(throws: StoreError.self) { try store.saveWrite(.update([]), at: ".info") }
        // Store.saveWrite checks the data before taking the lock: too deep is still refused.
        var deep = Node.number(1)
        for _ in 0..<(NodeCodec.maxDepth + 1) { deep = Node(children: [(key: "d", value: deep)]) }
        #expect(throws: StoreError.self) { try store.saveWrite(.set(deep), at: "a") }
        #expect(throws: StoreError.self) {
            try store.saveWrite(.update([ChildUpdate(path: "x", node: deep)]), at: "a")
        }
        #expect(store.pendingWrites().isEmpty)
        // A batch that throws half-way commits none of it.
        #expect(throws: StoreError.self) {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(.number(1), at: "a")
                try b.ackWrite(12345)
            }
        }
        #expect(store.lastLSN == lsn)
        #expect(try store.serverValue(at: "a").isEmpty)
        try store.close()
        for cap in [Store.minimumCacheSize - 1, Store.maximumCacheSize + 1] {
            var o = options()
            o.cacheSizeBytes = cap
            #expect(throws: StoreError.self) { try Store.open(directory: dir.path, options: o) }
        }
    }

    @Test func secondOpenerIsToldTheStoreIsLocked() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        do {
            _ = try Store.open(directory: dir.path, options: options())
            Issue.record("second open succeeded")
        } catch {
            #expect("\(error)".contains("already open in this process"))
        }
        try store.close()
    }

    /// Checkpoint + tail replay gives the same state as the full replay and as applying the
    /// events directly.
    @Test func checkpointPlusTailEqualsFullReplay() throws {
        let dir = TempDir()
        let clock = TestClock()
        var model = StoreState()
        var rng = SeededRandom(seed: 11)
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        for i in 0..<400 {
            clock.advance(1)
            let path = Path(keys: ["items", ChildKey("k\(rng.next() % 50)")])
            let result: Store.CommitResult
            switch rng.next() % 4 {
            case 0:
                result = try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.applyServerOverwrite(
                        json(#"{"v":\#(i),"s":"\#(String(repeating: "x", count: Int(rng.next() % 200)))"}"#), at: path)
                }
            case 1:
                result = try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.saveWrite(.set(.number(Double(i))), at: path)
                }
            case 2:
                let writes = store.pendingWrites()
                guard let w = writes.first else { continue }
                result = try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.ackWrite(w.id)
                    try b.applyServerOverwrite(.number(Double(i)), at: w.path)
                }
            default:
                result = try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.trackQuery(
                        at: QueryLocation(path: path, query: .default), complete: true, active: rng.next() % 2 == 0)
                }
            }
            model.apply(result.events)
            if i == 250 { try store.compact() }
        }
        #expect(try store.state() == model)
        try store.close()
        var o = options(clock: clock)
        o.lazyCacheLoad = false
        let reopened = try Store.open(directory: dir.path, options: o)
        model.apply(.sessionStarted(at: clock()))
        #expect(try reopened.state() == model)
        try reopened.close()
    }

    /// A read right after open, before the background load, decodes just the chunks it needs
    /// and sees the tail's changes.
    @Test func lazyOpenServesReadsBeforeTheCacheIsLoaded() throws {
        let dir = TempDir()
        do {
            let store = try Store.open(directory: dir.path, options: options())
            var pairs: [(key: ChildKey, value: Node)] = []
            for i in 0..<3000 {
                pairs.append(
                    (
                        ChildKey("user\(i)"),
                        json(#"{"name":"User \#(i)","score":\#(i),"bio":"\#(String(repeating: "lorem ", count: 20))"}"#)
                    ))
            }
            try store.applyServerOverwrite(Node(children: pairs), at: "users")
            try store.compact()
            try store.applyServerOverwrite(.string("changed"), at: "users/user7/name")
            try store.close()
        }
        var o = options()
        o.lazyCacheLoad = true
        o.backgroundMaintenance = true
        let store = try Store.open(directory: dir.path, options: o)
        #expect(try store.serverValue(at: "users/user7/name") == .string("changed"))
        #expect(try store.serverValue(at: "users/user2999/score") == .number(2999))
        #expect(try store.serverValue(at: "users").childCount == 3000)
        try store.waitUntilLoaded()
        #expect(try store.serverValue(at: "users/user7/name") == .string("changed"))
        try store.close()
    }

    /// The partial read path itself: only the chunks on the way to a location are decoded,
    /// and the result equals the full cache at that location.
    @Test func partialCacheReadsMatchTheFullCache() throws {
        let dir = TempDir()
        var pairs: [(key: ChildKey, value: Node)] = []
        for i in 0..<2000 {
            pairs.append(
                (
                    ChildKey("u\(i)"),
                    json(#"{"name":"User \#(i)","tags":{"a":\#(i),"b":"\#(String(repeating: "z", count: i % 300))"}}"#)
                ))
        }
        let big = Node(children: pairs, priority: .number(3))
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(big, at: "a/users")
            try store.applyServerOverwrite(.string("small"), at: "b")
            try store.compact()
            try store.close()
        }
        let log = try Log.open(directory: dir.path)
        let reader = try CheckpointReader(try #require(log.checkpoint))
        #expect(reader.directory.chunks.count > 4)
        let full = try reader.fullCache()
        for path: Path in ["b", "a/users/u17", "a/users/u1999/tags", "a/users", "a", "/", "a/users/missing", "c"] {
            let fresh = try CheckpointReader(try #require(log.checkpoint))
            #expect(try fresh.partialCache(for: path).child(at: path) == full.child(at: path), "\(path)")
        }
        let fresh = try CheckpointReader(try #require(log.checkpoint))
        _ = try fresh.partialCache(for: "a/users/u17/name")
        let decodedForOneUser = reader.directory.chunks.indices.count { i in
            reader.directory.chunks[i].isRelevant(to: "a/users/u17/name")
        }
        #expect(decodedForOneUser <= 2, "a small read decodes at most the chunk holding it (and its range)")
        #expect(full.child(at: "a/users").priority == .number(3))
        try log.close()
    }

    /// Pruning brings the footprint under the cap and never touches pinned, active or
    /// pending data.
    @Test func pruningRespectsTheCapAndProtectedData() throws {
        let dir = TempDir()
        let clock = TestClock()
        let cap = Store.minimumCacheSize
        let store = try Store.open(directory: dir.path, options: options(clock: clock, cap: cap))
        func blob(_ i: Int) -> Node {
            var pairs: [(key: ChildKey, value: Node)] = []
            var rng = SeededRandom(seed: UInt64(bitPattern: Int64(i)))
            for j in 0..<40 {
                pairs.append(
                    (
                        ChildKey("f\(j)"),
                        .string(String((0..<60).map { _ in Character(Unicode.Scalar(UInt8(97 + rng.next() % 26))) }))
                    ))
            }
            return Node(children: pairs)
        }
        try store.applyServerOverwrite(blob(-1), at: "pinned")
        try store.keepSynced(QueryLocation(path: "pinned", query: .default), true)
        try store.applyServerOverwrite(blob(-2), at: "active")
        try store.trackQuery(at: QueryLocation(path: "active", query: .default), complete: true, active: true)
        try store.applyServerOverwrite(blob(-3), at: "pending/server")
        try store.saveWrite(.set(.string("mine")), at: "pending")
        for i in 0..<900 {
            clock.advance(10)
            try store.applyServerOverwrite(blob(i), at: Path(keys: ["cache", ChildKey("item\(i)")]))
        }
        try store.compact()
        let stats = try store.stats()
        #expect(stats.footprintBytes <= UInt64(cap), "footprint \(stats.footprintBytes)")
        #expect(!stats.capExceededByUnprunableData)
        #expect(stats.pruneRounds > 0)
        #expect(try store.serverValue(at: "pinned") == blob(-1))
        #expect(try store.serverValue(at: "active") == blob(-2))
        #expect(try store.serverValue(at: "pending/server") == blob(-3))
        #expect(try store.value(at: "pending") == .string("mine"))
        // The most recent data survived, the oldest was pruned.
        #expect(try store.serverValue(at: "cache/item899") == blob(899))
        #expect(try store.serverValue(at: "cache/item0").isEmpty)
        try store.close()
    }

    @Test func failedSyncPoisonsTheStoreUntilReopened() throws {
        let fs = SimulatedFileSystem(seed: 3)
        let store = try Store.open(directory: "/db", options: options(fs))
        try store.applyServerOverwrite(.number(1), at: "a")
        fs.injectFault(.sync, .ioError)
        #expect(throws: StoreError.self) { try store.applyServerOverwrite(.number(2), at: "b") }
        do {
            try store.applyServerOverwrite(.number(3), at: "c")
            Issue.record("write after a failed sync succeeded")
        } catch {
            #expect("\(error)".contains("reopen") || "\(error)".contains("poison"))
        }
        #expect(try store.serverValue(at: "a") == .number(1))
    }
}
