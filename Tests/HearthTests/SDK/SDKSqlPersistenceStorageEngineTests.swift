// Ports of firebase-android-sdk
// `firebase-database/src/androidTest/java/com/google/firebase/database/core/persistence/SqlPersistenceStorageEngineTest.java`
// (at a089298e) — the Android storage engine's tests — run against Hearth's store. Most of
// them are the iOS `FLevelDBStorageEngineTests` cases under the same or a similar name; those
// run once, in `SDKLevelDBStorageEngineTests` (see that file for the mapping), and are listed
// here. The Android-only tests, and the cases whose data differs from iOS's, are ported here
// with the same conventions (`Engine.expectPersisted`: live, after a reopen, after a
// checkpoint).
//
// | SDK test                                          | Hearth test | notes |
// |---------------------------------------------------|-------------|-------|
// | testUserWriteIsPersisted                          | SDKLevelDBStorageEngineTests.userWriteIsPersisted | same case |
// | testUserMergeIsPersisted                          | SDKLevelDBStorageEngineTests.userMergeIsPersisted | same case |
// | testSameWriteIdOverwritesOldWrite                 | SDKLevelDBStorageEngineTests.sameWriteIdOverwritesOldWrite | same case |
// | testHugeWritesWork                                | SDKLevelDBStorageEngineTests.hugeWriteWorks | iOS merges at foo/bar, Android at foo/baz |
// | testHugeWritesCanBeDeleted                        | SDKLevelDBStorageEngineTests.hugeWritesCanBeDeleted | same case |
// | testHugeWritesCanBeInterleavedWithSmallWrites     | hugeWritesCanBeInterleavedWithSmallWrites | Android's 4th write is 10 MiB + 1 (iOS: 5 MiB) |
// | testSameWriteIdOverwritesOldMultiPartWrite        | SDKLevelDBStorageEngineTests.sameWriteIdOverwritesOldMultiPartWrite | same case |
// | testWritesAreReturnedInOrder                      | SDKLevelDBStorageEngineTests.writesAreReturnedInOrder | Android's ids run 19…0; the API's start at 1 |
// | testRemoveAllUserWrites                           | SDKLevelDBStorageEngineTests.removeAllUserWrites | Android reuses id 2 for the merge; the API cannot |
// | testCacheSavedIsReturned                          | SDKLevelDBStorageEngineTests.cacheSavedIsReturned | same case |
// | testCacheSavedIsReturnedAtRoot                    | SDKLevelDBStorageEngineTests.cacheSavedIsReturnedAtRoot | same case |
// | testCacheLaterWritesOverwriteOlderWrites          | SDKLevelDBStorageEngineTests.laterCacheWritesOverwriteOlderWrites | same case |
// | testCacheLaterWritesOverwriterOlderDeeperWrites   | SDKLevelDBStorageEngineTests.laterCacheWritesOverwriteOlderDeeperWrites | same case |
// | testCacheLaterWritesDontAffectEarlierWritesAtUnaffectedPath | SDKLevelDBStorageEngineTests.laterCacheWritesDontAffectEarlierWritesAtUnaffectedPath | same case |
// | testMergeOnEmptyCacheGivesResults                 | SDKLevelDBStorageEngineTests.mergeOnEmptyCacheGivesResults | same case |
// | testMergePartlyOverwritingPreviousWrite           | SDKLevelDBStorageEngineTests.mergePartlyOverwritingPreviousWrite | same case |
// | testMergePartlyOverwritingPreviousMerge           | SDKLevelDBStorageEngineTests.mergePartlyOverwritingPreviousMerge | same case |
// | testOverwriteRemovesPreviousMerges                | SDKLevelDBStorageEngineTests.overwriteRemovesPreviousMerge | same case |
// | testEmptyOverwriteDeletesNodeFromHigherWrite      | SDKLevelDBStorageEngineTests.emptyOverwriteDeletesNodeFromHigherWrite | same case |
// | testDeeperReadFromHigherSet                       | SDKLevelDBStorageEngineTests.deeperReadFromHigherSet | same case |
// | testHugeNodeWithSplit                             | SDKLevelDBStorageEngineTests.hugeNodeWithSplit | same shape (Android names keys inner-/outer-) |
// | testManyLargeLeafNodes                            | SDKLevelDBStorageEngineTests.manyLargeLeafNodes | same case |
// | testDeepOverwriteWithNestedLargeNode              | deepOverwriteWithNestedLargeNode | |
// | testAllowedSessionIdCharacters                    | allowedSessionIdCharacters | the session id names the database file; here, the store directory |
// | testPriorityWorks                                 | SDKLevelDBStorageEngineTests.priorityWorks | same case |
// | testSimilarSiblingsAreNotLoaded                   | SDKLevelDBStorageEngineTests.similarSiblingsAreNotLoaded | same case |
// | priorityIsCleared (@Ignore)                       | SDKLevelDBStorageEngineTests.priorityIsCleared | passes here |
// | testHugeLeafNode                                  | SDKLevelDBStorageEngineTests.hugeLeafNode | same case |
// | testHugeLeafNodeSiblings                          | hugeLeafNodeSiblings | Android's sibling is 10 MiB + 1 (iOS: − 1), read through the parent |
// | testHugeLeafNodeAndThenTinyLeafNode               | SDKLevelDBStorageEngineTests.hugeLeafNodeThenTinyLeafNode | Android's tiny leaf is 1 KiB, iOS's "tiny" |
// | testHugeLeafNodeAndThenSmallerLeafNode            | SDKLevelDBStorageEngineTests.hugeLeafNodeThenSmallerLeafNode | same case |
// | testHugeLeafNodeAndThenDeeperSet                  | SDKLevelDBStorageEngineTests.hugeLeafNodeThenDeeperSet | same case |
// | testEstimateServerSizeForNodes                    | estimateServerSizeForNodes | `StoreStats.serverCacheBytes`, the cache's exact encoded size; within the SDK's 20 bytes |
// | testEstimateServerSizeAccountsForPaths            | estimateServerSizeAccountsForPaths | the path counts (key bytes + 3 per level; the SDK's 20-byte tolerance is for its path string, 1 byte per level) |
// | testEstimateServerSizeForHundredsOfNodes          | estimateServerSizeForHundredsOfNodes | a tree stores the shared prefix once, so the size is below the SDK's per-row sum (by more than its tolerance) |
// | testSaveAndLoadTrackedQueries                     | SDKLevelDBStorageEngineTests.saveAndLoadTrackedQueries | same behaviour (the sets differ in which query is active/complete) |
// | testOverwriteTrackedQueryById                     | SDKLevelDBStorageEngineTests.overwriteTrackedQueryById | same case |
// | testDeleteTrackedQuery                            | SDKLevelDBStorageEngineTests.deleteTrackedQuery | same case |
// | testResetPreviouslyActiveTrackedQueries           | resetPreviouslyActiveTrackedQueries | a reopen is the reset (sessionStarted); lastUse = max(lastUse, reset time), not the reset time (FORMAT.md §11.5) |
// | testSaveAndLoadTrackedQueryKeys                   | SDKLevelDBStorageEngineTests.saveAndLoadTrackedQueryKeys | same case (iOS adds one key) |
// | testSaveOverwritesTrackedQueryKeys                | SDKLevelDBStorageEngineTests.saveOverwritesTrackedQueryKeys | same case |
// | testLoadTrackedQueryKeysBySet                     | loadTrackedQueryKeysBySet | the union of keys of the filtered queries at a path: `knownCompleteChildren(at:)` (its one use) |
// | testUpdateTrackedQueryKeys                        | updateTrackedQueryKeys | Android adds {d,e} (iOS {c,d,e}) |
// | testRemoveTrackedQueryRemovesTrackedQueryKeys     | SDKLevelDBStorageEngineTests.removeTrackedQueryRemovesTrackedQueryKeys | same case |
// | testConcurrentUsageFails                          | concurrentUsageFails | |
import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog

@Suite struct SDKSqlPersistenceStorageEngineTests {
    typealias Engine = SDKLevelDBStorageEngineTests.Engine
    typealias L = SDKLevelDBStorageEngineTests

    static let tenMegPlusOne = L.leafNodeOfSize(10 * 1024 * 1024 + 1)

    @Test func hugeWritesCanBeInterleavedWithSmallWrites() throws {
        let e = try Engine()
        let nodes: [(Path, Node)] = [
            ("foo/1", .string("node-1")), ("foo/2", L.tenMeg), ("foo/3", .string("node-3")),
            ("foo/4", Self.tenMegPlusOne),
        ]
        var expected: [PendingWrite] = []
        for (path, node) in nodes {
            expected.append(L.overwriteRecord(path, node, try e.saveOverwrite(node, at: path)))
        }
        try e.expectPersisted { store throws in
            #expect(L.same(store.pendingWrites(), expected))
        }
    }

    @Test func deepOverwriteWithNestedLargeNode() throws {
        let e = try Engine()
        let first = json(#"{"a":{"aa":1}}"#)
        let newA = Node.empty.updating("ab", with: L.oneMeg)
        try e.overwrite(first, at: .root)
        try e.overwrite(newA, at: "a")
        try e.expectPersisted { _ throws in
            #expect(L.same(try e.serverCache(.root), first.updating("a", with: newA)))
        }
    }

    /// Android names its database file after the session id; Hearth's store is a directory,
    /// so the same characters name the directory (the `/` in the id makes two levels).
    @Test func allowedSessionIdCharacters() throws {
        let parent = TempDir()
        let id = ".?!@$%^&*()\\/-~{}π∞٩(-̮̮̃-̃)۶ ٩(●̮̮̃•̃)۶ ٩(͡๏̯͡๏)۶"
        let directory = parent.path + "/" + id
        do {
            let store = try Store.open(directory: directory, options: options())
            try store.applyServerOverwrite(L.sample, at: "foo")
            try store.close()
        }
        let store = try Store.open(directory: directory, options: options())
        #expect(try store.serverValue(at: "foo") == L.sample)
        try store.close()
        #expect(FileManager.default.fileExists(atPath: directory + "/MANIFEST"))
    }

    @Test func hugeLeafNodeSiblings() throws {
        let e = try Engine()
        try e.overwrite(L.tenMeg, at: "foo/one")
        try e.overwrite(Self.tenMegPlusOne, at: "foo/two")
        try e.expectPersisted { _ throws in
            let node = try e.serverCache("foo")
            #expect(L.same(node.child("one"), L.tenMeg))
            #expect(L.same(node.child("two"), Self.tenMegPlusOne))
        }
    }

    // MARK: - The size of the server cache

    /// `StoreStats.serverCacheBytes` after the engine's writes.
    func serverCacheBytes(_ writes: [(Path, Node)]) throws -> Int {
        let e = try Engine()
        for (path, node) in writes { try e.overwrite(node, at: path) }
        var bytes: [Int] = []
        try e.expectPersisted { store throws in bytes.append(try store.stats().serverCacheBytes) }
        #expect(Set(bytes).count == 1, "the figure is the same after a reopen and from a checkpoint: \(bytes)")
        return bytes[0]
    }

    /// What a path costs in the cache tree: per level a children tag, a child count and the
    /// key's length (one byte each for these small nodes and short keys), and the key.
    static func pathBytes(_ path: Path) -> Int {
        path.keys.reduce(0) { $0 + 3 + $1.string.utf8.count }
    }

    @Test func estimateServerSizeForNodes() throws {
        let sampleNodeSize = NodeCodec.encodedSize(L.sample)
        let estimated = try serverCacheBytes([("foo", L.sample)])
        #expect(estimated == sampleNodeSize + Self.pathBytes("foo"))
        let expectedSize = sampleNodeSize + 4  // the SDK: + the path "/foo"
        #expect(abs(estimated - expectedSize) < 20)  // not off more than 20 bytes
    }

    @Test func estimateServerSizeAccountsForPaths() throws {
        let sampleNodeSize = NodeCodec.encodedSize(L.sample)
        let pathString = "super/duper/long/mega/deep/but/also/super/insightful/but/not/quite/max/path/depth/length"
        let path = try Path(validating: pathString)
        let estimated = try serverCacheBytes([(path, L.sample)])
        #expect(estimated == sampleNodeSize + Self.pathBytes(path))
        // The path is accounted for: at least its key bytes, at most 3 more per level.
        #expect(estimated >= sampleNodeSize + pathString.utf8.count)
        #expect(estimated - (sampleNodeSize + pathString.utf8.count) <= 2 * path.keys.count + 1)
    }

    @Test func estimateServerSizeForHundredsOfNodes() throws {
        let sampleNodeSize = NodeCodec.encodedSize(L.sample)
        let numNodes = 200
        var writes: [(Path, Node)] = []
        var sdkExpected = 0
        for i in 0..<numNodes {
            let pathString = "super/duper/long/path/\(i)"
            writes.append((try Path(validating: pathString), L.sample))
            sdkExpected += sampleNodeSize + pathString.utf8.count
        }
        let estimated = try serverCacheBytes(writes)
        // One tree: the shared prefix once, then the `path` node (its tag and a 2-byte child
        // count), then per node its key (a length byte and the digits) and the node.
        let keys = (0..<numNodes).reduce(0) { $0 + 1 + "\($1)".utf8.count }
        #expect(estimated == Self.pathBytes("super/duper/long/path") + 3 + keys + numNodes * sampleNodeSize)
        #expect(estimated < sdkExpected && estimated > numNodes * sampleNodeSize)
    }

    // MARK: - Tracked queries

    @Test func resetPreviouslyActiveTrackedQueries() throws {
        let e = try Engine()
        let t0 = e.clock()
        let specs: [(Path, Int64, active: Bool)] = [
            ("a", 200, false), ("b", 300, true), ("c", 400, false), ("d", 500, true),
        ]
        var saved: [TrackedQuery] = []
        for (path, lastUse, active) in specs {
            e.clock.advance(t0 + lastUse - e.clock())
            try e.commit { b in try b.trackQuery(at: L.defaultAt(path), complete: false, active: active) }
            saved.append(
                TrackedQuery(
                    id: Int64(saved.count + 1), location: L.defaultAt(path), complete: false, active: active,
                    lastUse: t0 + lastUse))
        }
        #expect(e.store.trackedQueries() == saved)
        // The reset is what a new session does: reopening at t0 + 734.
        e.clock.advance(234)
        try e.reopen()
        let reset = t0 + 734
        let expected = [
            saved[0], TrackedQuery(id: 2, location: L.defaultAt("b"), complete: false, active: false, lastUse: reset),
            saved[2], TrackedQuery(id: 4, location: L.defaultAt("d"), complete: false, active: false, lastUse: reset),
        ]
        #expect(e.store.trackedQueries() == expected)
        try e.reopen(compacting: true)
        #expect(e.store.trackedQueries() == expected)
        // The SDK resets lastUse to the reset time even when that is earlier (234 < 300, a
        // clock that went back); Hearth keeps the later of the two, so a query's recency
        // never moves backwards (sessionStarted in FORMAT.md §11.5).
        var s = StoreState()
        s.apply(saved.map(StoreEvent.trackedQuerySaved))
        s.apply(.sessionStarted(at: t0 + 234))
        #expect(
            s.trackedQueries[2]
                == TrackedQuery(id: 2, location: L.defaultAt("b"), complete: false, active: false, lastUse: t0 + 300))
        #expect(s.trackedQueries[4]?.lastUse == t0 + 500 && s.trackedQueries[4]?.active == false)
    }

    @Test func loadTrackedQueryKeysBySet() throws {
        let e = try Engine()
        let q1 = QueryLocation(path: "p", query: try QuerySpec(orderBy: .key).limitToFirst(3))
        let q2 = QueryLocation(path: "p", query: try QuerySpec(orderBy: .key).limitToLast(3))
        let q3 = QueryLocation(path: "other", query: try QuerySpec(orderBy: .key).limitToFirst(3))
        try e.commit { b in try b.trackQuery(at: q1, keys: ["a", "b", "c"]) }
        try e.commit { b in try b.trackQuery(at: q2, keys: ["c", "d", "e"]) }
        try e.commit { b in try b.trackQuery(at: q3, keys: ["not", "included"]) }
        try e.expectPersisted { store throws in
            #expect(try store.state().knownCompleteChildren(at: "p") == ["a", "b", "c", "d", "e"])
        }
    }

    @Test func updateTrackedQueryKeys() throws {
        let e = try Engine()
        let q = L.filtered("q")
        try e.commit { b in try b.trackQuery(at: q, keys: ["a", "b", "c"]) }
        try e.commit { b in try b.updateTrackedQueryKeys(at: q, added: ["d", "e"], removed: ["a", "b"]) }
        try e.expectPersisted { store throws in
            #expect(try store.state().trackedQuery(at: q)?.keys == ["c", "d", "e"])
        }
    }

    /// A second engine on the same database fails while the first is open.
    @Test func concurrentUsageFails() throws {
        let e = try Engine()
        do {
            _ = try Store.open(directory: e.dir.path, options: options())
            Issue.record("We should have failed to access the database again.")
        } catch {
            guard case .log(.storeAlreadyOpen) = error else {
                Issue.record("unexpected error: \(error)")
                return
            }
            #expect(error.description.contains("already open"))
        }
        // The first one is unaffected.
        try e.overwrite(.number(1), at: "a")
        #expect(try e.serverCache("a") == .number(1))
    }
}
