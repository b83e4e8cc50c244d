@_spi(HearthInternals) import HearthLog
import Testing
@_spi(HearthInternals) @testable import Hearth

/// Views built before the background load read only the children the persistence rules
/// select — and decode only the checkpoint chunks holding them — yet start from exactly
/// what they would start from with the whole cache loaded.
@Suite struct PartialViewReadTests {
    let rooms: Path = "rooms"
    let big: Path = "rooms/big"

    /// A store whose checkpoint splits `rooms/big` (4,000 children) into many range chunks,
    /// with a complete limitToLast(50) by key tracked there, a complete default query at
    /// `rooms/small`, an incomplete query, and a cache tail after the checkpoint that changes
    /// tracked children (deferred until the load). Returns the directory and the tail.
    func makeStore(_ dir: TempDir, overwriteParent: Bool = false) throws -> [StoreEvent] {
        let store = try Store.open(directory: dir.path, options: options())
        var pairs: [(key: ChildKey, value: Node)] = []
        for i in 0..<4000 {
            let key = ChildKey("m\(String(i + 100_000))")
            pairs.append((key, json(#"{"text":"message \#(i) \#(String(repeating: "lorem ", count: 30))","n":\#(i)}"#)))
        }
        let node = Node(children: pairs)
        try store.applyServerOverwrite(node, at: big)
        let last50 = try QuerySpec(orderBy: .key).limitToLast(50)
        // Active (listened to), so its keys follow the tail: an inactive one would become
        // incomplete at the tail's first write into its window.
        try store.trackQuery(
            at: QueryLocation(path: big, query: last50), complete: true, active: true,
            keys: Set(last50.window(of: node).keys))
        let first5 = try QuerySpec(orderBy: .key).limitToFirst(5)
        try store.trackQuery(
            at: QueryLocation(path: big, query: first5), complete: false, active: false,
            keys: Set(first5.window(of: node).keys))
        try store.applyServerOverwrite(json(#"{"a":1,"b":{"c":2}}"#), at: "rooms/small")
        try store.trackQuery(at: QueryLocation(path: "rooms/small", query: .default), complete: true, active: false)
        try store.compact()
        // The tail: deferred while the cache loads.
        var tail: [StoreEvent] = []
        tail += try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(.string("edited"), at: "rooms/big/m103999/text")
        }.events
        tail += try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerMerge(
                [ChildUpdate(path: "m103998", node: .empty), ChildUpdate(path: "m104000", node: .string("new"))],
                at: big)
        }.events
        tail += try store.commit { (b: inout StoreBatch) throws(StoreError) in
            // Through an ancestor, below the location.
            try b.applyServerMerge(
                [
                    ChildUpdate(path: "big/m103997/n", node: .number(-1)),
                    ChildUpdate(path: "small/a", node: .number(9)),
                ], at: rooms)
        }.events
        if overwriteParent {
            // At the location itself, then below it again: the order of the two kinds matters.
            tail += try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(json(#"{"m103999":{"text":"replaced"},"m103990":1,"zzz":2}"#), at: big)
            }.events
            tail += try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(.string("after"), at: "rooms/big/m103999/text")
            }.events
        }
        try store.close()
        return tail
    }

    /// The source's answer before the load (partial chunks + deferred tail) equals its answer
    /// with the whole cache loaded, for every kind of rule.
    @Test(arguments: [false, true]) func partialReadsMatchTheLoadedCache(overwriteParent: Bool) throws {
        let dir = TempDir()
        let tail = try makeStore(dir, overwriteParent: overwriteParent)
        let log = try Log.open(directory: dir.path)
        defer { try? log.close() }
        let checkpoint = try #require(log.checkpoint)

        var loaded = LoadingState(state: try CheckpointReader(checkpoint).directory.state, cacheLoaded: false)
        loaded.finishLoading(cache: try CheckpointReader(checkpoint).fullCache())
        for e in tail { loaded.apply(e) }

        let queries: [(Path, QuerySpec)] = [
            (big, try QuerySpec(orderBy: .key).limitToLast(50)),  // complete, tracked keys
            (big, try QuerySpec(orderBy: .key).limitToLast(3)),  // incomplete: known-complete children
            (big, .default),  // incomplete
            (big, try QuerySpec(orderBy: .key).limitToFirst(5)),  // tracked but incomplete
            ("rooms/small", .default),  // complete default: whole value
            ("rooms/small/b", try QuerySpec(orderBy: .key).limitToFirst(1)),
            ("rooms/none", .default),
        ]
        for (path, query) in queries {
            let reader = try CheckpointReader(checkpoint)
            var partial = LoadingState(state: reader.directory.state, cacheLoaded: false)
            for e in tail { partial.apply(e) }
            let lazy = PersistedCacheReader(loading: partial, reader: reader)
            let full = PersistedCacheReader(loading: loaded, reader: nil)
            let got = lazy.serverCache(at: path, query: query)
            let want = full.serverCache(at: path, query: query)
            #expect(got?.node == want?.node && got?.complete == want?.complete, "\(path) \(query)")
            if path == big {
                #expect(
                    reader.decodedChunkCount <= 3,
                    "\(query): decoded \(reader.decodedChunkCount) of \(reader.directory.chunks.count) chunks")
            }
        }
        let complete = try #require(
            full(loaded).serverCache(at: big, query: try QuerySpec(orderBy: .key).limitToLast(50)))
        if overwriteParent {
            // The overwrite at the location replaced the view's children; the keys followed.
            #expect(complete.complete && complete.node.childCount == 3)
            #expect(complete.node.child(at: "m103999/text") == .string("after"))
        } else {
            // The tail removed m103998 and added m104000: the tracked keys followed both.
            #expect(complete.complete && complete.node.childCount == 50)
            #expect(complete.node.child(at: "m104000") == .string("new"))
            #expect(complete.node.child(at: "m103999/text") == .string("edited"))
            #expect(complete.node.child(at: "m103997/n") == .number(-1))
        }
        #expect(try CheckpointReader(checkpoint).directory.chunks.count > 10)
    }

    private func full(_ loading: LoadingState) -> PersistedCacheReader {
        PersistedCacheReader(loading: loading, reader: nil)
    }

    /// Through the store: a tracked window's query right after a lazy open equals the one
    /// after the load.
    @Test func queryAfterLazyOpenEqualsQueryAfterLoad() throws {
        let dir = TempDir()
        _ = try makeStore(dir)
        var o = options()
        o.lazyCacheLoad = true
        o.backgroundMaintenance = true
        let store = try Store.open(directory: dir.path, options: o)
        let last50 = try QuerySpec(orderBy: .key).limitToLast(50)
        let early = try store.query(last50, at: big)
        try store.waitUntilLoaded()
        store.waitUntilViewsRebuilt()
        let late = try store.query(last50, at: big)
        #expect(early.window.keys == late.window.keys && early.complete == late.complete)
        #expect(late.complete && late.window.keys.count == 50)
        try store.close()
    }
}
