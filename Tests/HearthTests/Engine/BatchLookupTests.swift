// A batch answers what it changed itself — its saved, acked and reverted writes, its server
// time offset — from what it records beside its events, and an acknowledged write walks the
// default queries above it once: the answers must be those of the state the events leave.
import Testing
@_spi(HearthInternals) @testable import Hearth

@Suite struct BatchLookupTests {
    @Test func aBatchSeesTheWritesItSavesAcksAndRevertsInOrder() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let stored = try (0..<3).map { i in
            try store.saveWrite(.set(.number(Double(i))), at: Path(keys: ["s", ChildKey("k\(i)")]))
        }
        try store.commit { (b: inout StoreBatch) in
            let saved = try (0..<3).map { i in
                try b.saveWrite(.set(.number(Double(10 + i))), at: Path(keys: ["b", ChildKey("k\(i)")]))
            }
            for id in stored + saved {
                let seen = b.pendingWrite(id)
                #expect(seen?.id == id)
            }
            let second = b.pendingWrite(saved[1])
            #expect(second?.operation == .set(.number(11)))
            try b.applyAckedWrite(stored[0])
            try b.applyAckedWrite(saved[0])
            try b.revertWrite(stored[1])
            try b.revertWrite(saved[1])
            for id in [stored[0], saved[0], stored[1], saved[1]] {
                let seen = b.pendingWrite(id)
                #expect(seen == nil)
                #expect(Self.isUnknownWrite(id) { () throws(StoreError) in try b.ackWrite(id) })
                #expect(Self.isUnknownWrite(id) { () throws(StoreError) in try b.revertWrite(id) })
                #expect(Self.isUnknownWrite(id) { () throws(StoreError) in try b.applyAckedWrite(id) })
            }
            let left = [b.pendingWrite(stored[2])?.id, b.pendingWrite(saved[2])?.id]
            #expect(left == [stored[2], saved[2]])
            let removed = try b.removeAllWrites()
            #expect(removed == [stored[2], saved[2]])
            let gone = [b.pendingWrite(stored[2]), b.pendingWrite(saved[2])]
            #expect(gone == [nil, nil])
        }
        #expect(store.pendingWrites().isEmpty)
        // The acked ones are the server's data now, the reverted ones nowhere.
        #expect(try store.serverValue(at: "s/k0") == .number(0) && store.serverValue(at: "b/k0") == .number(10))
        #expect(try store.value(at: "s/k1").isEmpty && store.value(at: "b/k1").isEmpty)
        try store.close()
    }

    /// Whether `body` throws ``StoreError/unknownWrite(id:)`` for `id`.
    static func isUnknownWrite(_ id: Int64, _ body: () throws(StoreError) -> Void) -> Bool {
        do throws(StoreError) {
            try body()
            return false
        } catch {
            if case .unknownWrite(let unknown) = error { return unknown == id }
            return false
        }
    }

    @Test func anAckResolvesItsTimestampWithTheOffsetItsBatchSetLast() throws {
        let dir = TempDir()
        let clock = TestClock()
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        try store.setServerTimeOffset(100)
        let first = try store.saveWrite(.set(try Node(jsonText: #"{".sv":"timestamp"}"#)), at: "t/first")
        let second = try store.saveWrite(.set(try Node(jsonText: #"{".sv":"timestamp"}"#)), at: "t/second")
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyAckedWrite(first)  // the store's offset
            try b.setServerTimeOffset(5_000)
            try b.setServerTimeOffset(7_000)
            try b.applyAckedWrite(second)  // the batch's last one
        }
        #expect(try store.serverValue(at: "t/first") == .number(Double(clock() + 100)))
        #expect(try store.serverValue(at: "t/second") == .number(Double(clock() + 7_000)))
        try store.close()
    }

    /// The query an acknowledged write completes is the one at its own path: a tracked default
    /// query above it that is neither active nor complete is left as it is.
    @Test func anAckCompletesTheQueryAtItsPathNotAnIncompleteOneAbove() throws {
        let dir = TempDir()
        let clock = TestClock()
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        let parent = QueryLocation(path: "p", query: .default)
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.setQueryActive(parent)
            try b.setQueryInactive(parent)
        }
        let parentBefore = try #require(try store.state().trackedQuery(at: parent))
        #expect(!parentBefore.complete && !parentBefore.active)
        clock.advance(1)
        let id = try store.saveWrite(.set(.number(1)), at: "p/c")
        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.applyAckedWrite(id) }
        let state = try store.state()
        #expect(state.trackedQuery(at: parent) == parentBefore)
        let child = try #require(state.trackedQuery(at: QueryLocation(path: "p/c", query: .default)))
        #expect(child.complete && !child.active && child.lastUse == clock())
        #expect(try store.serverValue(at: "p/c") == .number(1))
        try store.close()
    }

    /// A complete default query above the write covers it (no query is tracked at the write's
    /// path), an active one keeps the write out of the cache; one below the write does neither.
    @Test func anAckLooksAtTheQueriesAboveItsPathOnly() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.trackQuery(at: QueryLocation(path: "done", query: .default), complete: true)
            try b.setQueryActive(QueryLocation(path: "live", query: .default))
            try b.trackQuery(at: QueryLocation(path: "deep/er", query: .default), complete: true, active: true)
        }
        let ids = try ["done/x", "live/x", "deep"].map {
            try store.saveWrite(.set(.number(2)), at: Path(validating: $0))
        }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in for id in ids { try b.applyAckedWrite(id) } }
        let state = try store.state()
        #expect(state.trackedQuery(at: QueryLocation(path: "done/x", query: .default)) == nil)
        #expect(try store.serverValue(at: "done/x") == .number(2))
        #expect(state.trackedQuery(at: QueryLocation(path: "live/x", query: .default)) == nil)
        #expect(try store.serverValue(at: "live/x").isEmpty)
        #expect(state.trackedQuery(at: QueryLocation(path: "deep", query: .default))?.complete == true)
        #expect(try store.serverValue(at: "deep") == .number(2))
        try store.close()
    }
}
