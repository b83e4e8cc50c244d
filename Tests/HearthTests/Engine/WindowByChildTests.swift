import Foundation
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A window by child, by value or by priority over a location cached whole is answered from
/// the checkpoint's order index of that ordering and the chunks of the children it names
/// (CheckpointReader+OrderWindow.swift), and selects exactly what the whole location selects;
/// anything the index does not cover, or a damaged index, reads the whole location instead.
@Suite struct WindowByChildTests {
    let big: Path = "chat/messages"

    /// The orderings the store tracks windows of before its checkpoint (so it indexes them).
    static let tracked: [QuerySpec] = [
        try! QuerySpec(orderBy: .child("ts")).limitToLast(50),
        try! QuerySpec(orderBy: .value).limitToFirst(3),
        try! QuerySpec(orderBy: .priority).limitToLast(10),
    ]

    /// `count` children at `chat/messages` with `ts` values that tie often, are missing, or are
    /// strings, booleans or objects; some children are leaves (by value: every type) and some
    /// carry priorities. Cached whole under a complete default query, the windows of
    /// ``tracked`` tracked (inactive, incomplete), checkpointed; then `tail` server events.
    func makeStore(_ dir: TempDir, seed: UInt64, count: Int, tail: Int, indexed: Bool = true) throws -> [StoreEvent] {
        var random = SeededRandom(seed: seed)
        let store = try Store.open(directory: dir.path, options: options())
        var pairs: [(key: ChildKey, value: Node)] = []
        for i in 0..<count {
            let key = ChildKey("m\(100_000 + i * 7)")
            var value: Node
            switch Int.random(in: 0..<20, using: &random) {
            case 0: value = .number(Double(Int.random(in: 0..<5, using: &random)))
            case 1: value = .string("leaf \(Int.random(in: 0..<5, using: &random))")
            case 2: value = Node(children: [("text", .string("no ts"))])
            case 3: value = Node(children: [("ts", .string("s\(Int.random(in: 0..<3, using: &random))"))])
            case 4: value = Node(children: [("ts", .bool(Bool.random(using: &random)))])
            case 5: value = Node(children: [("ts", Node(children: [("deep", .number(1))]))])
            default:
                let ts = Node.number(Double(Int.random(in: 0..<(count / 4), using: &random)))
                let text = String(repeating: "lorem ", count: Int.random(in: 5...40, using: &random))
                value = Node(children: [("text", .string(text)), ("ts", ts)])
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                value = value.withPriority(.number(Double(Int.random(in: 0..<4, using: &random))))
            }
            pairs.append((key, value))
        }
        try store.applyServerOverwrite(Node(children: pairs), at: big)
        try store.trackQuery(at: QueryLocation(path: big, query: .default), complete: true, active: false)
        for query in Self.tracked where indexed {
            try store.trackQuery(at: QueryLocation(path: big, query: query), complete: false, active: false)
        }
        try store.compact()
        var events: [StoreEvent] = []
        let existing = pairs.map(\.key)
        for _ in 0..<tail {
            let key = existing.randomElement(using: &random)!
            let event: StoreEvent =
                switch Int.random(in: 0..<3, using: &random) {
                case 0: .serverOverwrite(path: big.child(key), node: .empty, at: 0)
                case 1:
                    .serverOverwrite(
                        path: big.child(key).child("ts"),
                        node: .number(Double(count + Int.random(in: 0..<9, using: &random))),
                        at: 0)
                default:
                    .serverMerge(
                        path: big,
                        children: [
                            ChildUpdate(
                                path: Path(keys: [ChildKey("n\(Int.random(in: 0..<99, using: &random))")]),
                                node: .number(-1))
                        ],
                        at: 0)
                }
            events += try WindowFromChunksTests.commitServerEvent(event, to: store)
        }
        try store.close()
        return events
    }

    /// The lazily read state (chunks, deferred tail) and the whole state loaded, of `dir`.
    func states(
        _ dir: TempDir, tail: [StoreEvent]
    ) throws -> (lazy: PersistedCacheReader, loaded: PersistedCacheReader, log: Log) {
        try WindowFromChunksTests().states(dir, tail: tail)
    }

    /// Windows of the indexed orderings: from either end, several limits, with bounds.
    func queries() throws -> [QuerySpec] {
        var result: [QuerySpec] = []
        for index in [QueryIndex.child("ts"), .value, .priority] {
            let q = QuerySpec(orderBy: index)
            for n in [1, 7, 50, 400] {
                result.append(try q.limitToLast(n))
                result.append(try q.limitToFirst(n))
            }
            let bound: Node = if case .priority = index { .number(2) } else { .number(30) }
            result.append(try q.endAt(bound).limitToLast(20))
            result.append(try q.startAfter(bound).limitToFirst(20))
            result.append(try q.startAt(.string("s1")).limitToFirst(5))
        }
        return result
    }

    /// Every window of an indexed ordering is answered from the index, and is the whole
    /// location's window — with server changes below the location after the checkpoint too.
    @Test(arguments: [(1, 0), (2, 0), (3, 5), (4, 12)] as [(UInt64, Int)])
    func windowsFromTheIndexEqualTheWholeLocations(seed: UInt64, tail: Int) throws {
        let dir = TempDir()
        let events = try makeStore(dir, seed: seed, count: 4000, tail: tail)
        let (lazy, loaded, log) = try states(dir, tail: events)
        defer { try? log.close() }
        let reader = try #require(lazy.reader)
        #expect(reader.directory.orderIndexes.count == 3)
        #expect(reader.directory.orderIndexes.allSatisfy { $0.runs.count > 1 && $0.path == big })
        for query in try queries() {
            let windows = PersistedWindows()
            let got = try #require(lazy.servingWindows(windows).serverCache(at: big, query: query))
            let want = try #require(loaded.serverCache(at: big, query: query))
            #expect(got.complete)
            #expect(query.window(of: got.node) == query.window(of: want.node), "\(query)")
            #expect(windows.answered == [QueryLocation(path: big, query: query)], "\(query): answered from the index")
        }
    }

    /// A `limitToLast(50)` by child reads one run of the index and the chunks of its children,
    /// not the location's chunks; the views built from it raise the whole location's events.
    @Test func aWindowByChildReadsLittleAndRaisesTheSameEvents() throws {
        let dir = TempDir()
        _ = try makeStore(dir, seed: 9, count: 6000, tail: 0)
        let (lazy, loaded, log) = try states(dir, tail: [])
        defer { try? log.close() }
        let reader = try #require(lazy.reader)
        let query = Self.tracked[0]
        let listener = ViewHost.Listener(
            location: QueryLocation(path: big, query: query), query: query, handler: { _ in })
        let windowedHost = ViewHost(), wholeHost = ViewHost()
        let (_, got) = try windowedHost.addListener(listener, kinds: .all, lazy)
        let (_, want) = try wholeHost.addListener(listener, kinds: .all, loaded)
        #expect(got == want && got.count == 51)
        #expect(windowedHost.windowed == [QueryLocation(path: big, query: query)])
        // Its 50 children lie anywhere in key order: at most one chunk each, fewer than all.
        #expect(reader.directory.chunks.count > 8)
        #expect(reader.decodedChunkCount < reader.directory.chunks.count)
        // A child of the window removed: the view is completed from the whole location, as for
        // a window by key, and refills from it.
        let first = try #require(got.first { $0.kind == .childAdded }?.childKey)
        let change: [StoreEvent] = [.serverOverwrite(path: big.child(first), node: .empty, at: 0)]
        try windowedHost.completeWindows(for: change, [], lazy)
        var (l, w) = (lazy.loading, loaded.loading)
        for e in change {
            l.apply(e)
            w.apply(e)
        }
        let after = windowedHost.apply(change, [], PersistedCacheReader(loading: l, reader: reader), now: 0).map(\.0)
        let wantAfter = wholeHost.apply(change, [], PersistedCacheReader(loading: w, reader: nil), now: 0).map(\.0)
        #expect(after == wantAfter)
        #expect(after.contains { $0.kind == .childRemoved } && after.contains { $0.kind == .childAdded })
    }

    /// A server overwrite at the location after the checkpoint reads the whole location.
    @Test func anOverwriteOfTheLocationReadsTheWholeLocation() throws {
        let dir = TempDir()
        let overwrite: [StoreEvent] = [
            .serverOverwrite(path: big, node: Node(children: [("a", Node(children: [("ts", .number(1))]))]), at: 0)
        ]
        _ = try makeStore(dir, seed: 5, count: 3000, tail: 0)
        let query = Self.tracked[0]
        let (lazy, loaded, log) = try states(dir, tail: overwrite)
        defer { try? log.close() }
        let windows = PersistedWindows()
        let got = try #require(lazy.servingWindows(windows).serverCache(at: big, query: query))
        let want = try #require(loaded.serverCache(at: big, query: query))
        #expect(query.window(of: got.node) == query.window(of: want.node))
        #expect(windows.answered.isEmpty, "\(query): the whole location")
    }

    /// An ordering the checkpoint has no index of (the app never showed it before) is answered
    /// by a pass over the location's range chunks that decodes only each child's indexed value
    /// (CheckpointReader+ScanWindow.swift) and keeps no chunk: every window is the whole
    /// location's, with server changes after the checkpoint too, and the views built from it
    /// raise the same events.
    @Test(arguments: [(21, 0), (22, 7)] as [(UInt64, Int)])
    func windowsOfAnUnindexedOrderingEqualTheWholeLocations(seed: UInt64, tail: Int) throws {
        let dir = TempDir()
        let events = try makeStore(dir, seed: seed, count: 4000, tail: tail, indexed: false)
        let (lazy, loaded, log) = try states(dir, tail: events)
        defer { try? log.close() }
        let reader = try #require(lazy.reader)
        #expect(reader.directory.orderIndexes.isEmpty)
        #expect(reader.directory.chunks.count >= 4)
        // The pass itself keeps no chunk decoded.
        let before = reader.decodedChunkCount
        let found = try #require(try reader.scannedOrderWindow(of: big, query: Self.tracked[0], margin: 0))
        #expect(found.count == 50 && reader.decodedChunkCount == before, "the pass keeps no chunk")
        var queries = try queries()
        queries.append(try QuerySpec(orderBy: .child("ts/deep")).limitToLast(3))
        queries.append(try QuerySpec(orderBy: .child("text")).limitToFirst(9))
        for query in queries {
            let windows = PersistedWindows()
            let got = try #require(lazy.servingWindows(windows).serverCache(at: big, query: query))
            let want = try #require(loaded.serverCache(at: big, query: query))
            #expect(got.complete)
            #expect(query.window(of: got.node) == query.window(of: want.node), "\(query)")
            #expect(windows.answered == [QueryLocation(path: big, query: query)], "\(query): answered by the pass")
        }
        let query = Self.tracked[0]
        let listener = ViewHost.Listener(
            location: QueryLocation(path: big, query: query), query: query, handler: { _ in })
        let (_, got) = try ViewHost().addListener(listener, kinds: .all, lazy)
        let (_, want) = try ViewHost().addListener(listener, kinds: .all, loaded)
        #expect(got == want && got.count == 51)
    }

    /// The pass's decoder reads each child's indexed value exactly as decoding the child and
    /// taking it does, for every ordering, every kind of child, and the malformed bytes
    /// decoding refuses.
    @Test func theIndexedScanEqualsDecodingEachChild() throws {
        var random = SeededRandom(seed: 77)
        var pairs: [(key: ChildKey, value: Node)] = []
        for i in 0..<300 {
            var value: Node =
                switch i % 7 {
                case 0: .number(Double(Int.random(in: -5..<5, using: &random)))
                case 1: .string("s\(i)")
                case 2: Node(children: [("ts", .bool(i % 2 == 0)), ("a", Node(children: [("b", .number(Double(i)))]))])
                case 3: Node(children: [("a", .string("x")), ("ts", Node(children: [("deep", .number(1))]))])
                case 4: Node(children: [("ts", .number(Double(i)).withPriority(.string("p")))])
                case 5: Node(children: [("zz", .number(1))])
                default: Node(children: [("text", .string("t")), ("ts", .number(Double(i % 11)))])
                }
            if i % 3 == 0 { value = value.withPriority(i % 2 == 0 ? .number(Double(i)) : .string("q\(i)")) }
            pairs.append((ChildKey("k\(1000 + i)"), value))
        }
        let node = Node(children: pairs)
        let bytes = NodeCodec.encode(node)
        for index in [QueryIndex.child("ts"), .child("a/b"), .child("ts/deep"), .child("missing"), .value, .priority] {
            let got = try NodeCodec.indexedChildren(bytes, by: index)
            let want = node.children.map {
                ($0.key, CheckpointFormat.storedIndexValue(index.indexedValue(of: $0.value)))
            }
            #expect(got.map(\.key) == want.map(\.0), "\(index)")
            #expect(got.map(\.value) == want.map(\.1), "\(index)")
        }
        #expect(try NodeCodec.indexedChildren(NodeCodec.encode(.empty), by: .value).isEmpty)
        #expect(throws: DecodeError.self) { try NodeCodec.indexedChildren(Array(bytes.dropLast()), by: .child("ts")) }
        #expect(throws: DecodeError.self) { try NodeCodec.indexedChildren(bytes + [0], by: .child("ts")) }
        #expect(throws: DecodeError.self) { try NodeCodec.indexedChildren(NodeCodec.encode(.number(1)), by: .value) }
        // Damaged bytes (which a chunk's CRC normally stops first): a typed error or, where the
        // full decode accepts them, the same entries — never a trap.
        for round in 0..<3000 {
            var damaged = bytes
            for _ in 0...(round % 3) {
                let at = Int.random(in: 0..<damaged.count, using: &random)
                damaged[at] ^= UInt8.random(in: 1...255, using: &random)
            }
            if round % 5 == 0 { damaged.removeLast(Int.random(in: 0..<damaged.count, using: &random)) }
            let index = [QueryIndex.child("ts"), .child("a/b"), .value, .priority][round % 4]
            let got = try? NodeCodec.indexedChildren(damaged, by: index)
            if let whole = try? NodeCodec.decode(damaged), !whole.isLeaf, whole.priority == nil {
                let want = whole.children.map {
                    ($0.key, CheckpointFormat.storedIndexValue(index.indexedValue(of: $0.value)))
                }
                #expect(got?.map(\.key) == want.map(\.0) && got?.map(\.value) == want.map(\.1), "round \(round)")
            }
        }
    }

    /// A damaged index run is never a wrong window: the window reads the whole location, and
    /// `verify` names the run.
    @Test func aDamagedIndexRunReadsTheWholeLocation() throws {
        let dir = TempDir()
        _ = try makeStore(dir, seed: 11, count: 3000, tail: 0)
        let run: CheckpointFormat.OrderIndex.Run
        let fileName: String
        do {
            let (lazy, _, log) = try states(dir, tail: [])
            defer { try? log.close() }
            let reader = try #require(lazy.reader)
            let i = try #require(reader.orderIndex(at: big, by: .child("ts")))
            run = try #require(reader.directory.orderIndexes[i].runs.last)
            fileName = reader.checkpoint.fileName
        }
        let file = try #require(
            FileManager.default.subpaths(atPath: dir.path)?.first { $0.hasSuffix(fileName) }.map { dir.path + "/" + $0 }
        )
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        // The body starts after the checkpoint file's 64-byte header (FORMAT.md §7).
        let at = 64 + run.offset + UInt64(run.storedLength / 2)
        try handle.seek(toOffset: at)
        let byte = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: at)
        try handle.write(contentsOf: [byte ^ 0x5A])
        try handle.close()

        let (lazy, loaded, log) = try states(dir, tail: [])
        defer { try? log.close() }
        let query = Self.tracked[0]
        let windows = PersistedWindows()
        let got = try #require(lazy.servingWindows(windows).serverCache(at: big, query: query))
        let want = try #require(loaded.serverCache(at: big, query: query))
        #expect(query.window(of: got.node) == query.window(of: want.node))
        #expect(windows.answered.isEmpty)
        let reader = try #require(lazy.reader)
        #expect(throws: CheckpointError.self) { try reader.verifyAllChunks() }
    }

    /// A run whose entries are out of order is refused (a writer's bug or damage the CRC did
    /// not see), as is a count that disagrees with the directory's.
    @Test func aRunOutOfOrderIsRefused() throws {
        let entries: [(key: ChildKey, value: Node)] = [("a", .number(2)), ("b", .number(1))]
        let raw = CheckpointFormat.encodeOrderIndexRun(entries[...])
        #expect(throws: DecodeError.self) { try CheckpointFormat.decodeOrderIndexRun(raw, count: 2) }
        let sorted = CheckpointFormat.encodeOrderIndexRun(Array(entries.reversed())[...])
        #expect(try CheckpointFormat.decodeOrderIndexRun(sorted, count: 2).map(\.key) == ["b", "a"])
        #expect(throws: DecodeError.self) { try CheckpointFormat.decodeOrderIndexRun(sorted, count: 3) }
    }

    /// A store whose checkpoint an earlier build wrote (body format 4: no order indexes) opens,
    /// its window by child reads the whole location, and the next checkpoint indexes it.
    @Test func aFormat4CheckpointOpensAndTheNextIndexes() throws {
        let dir = TempDir()
        _ = try makeStore(dir, seed: 3, count: 3000, tail: 0)
        let want: [ChildKey]
        do {
            let (_, loaded, log) = try states(dir, tail: [])
            defer { try? log.close() }
            let node = try #require(loaded.serverCache(at: big, query: Self.tracked[0])).node
            want = Self.tracked[0].window(of: node).keys
        }
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(.string("x"), at: "elsewhere")
        try closeWithCheckpoint(store, directory: dir.path, bodyVersion: 4)

        func keysSeen() throws -> [ChildKey] {
            final class Seen: @unchecked Sendable { var keys: [ChildKey] = [] }
            let seen = Seen()
            let store = try Store.open(directory: dir.path, options: options())
            _ = try store.addListener(at: big, query: Self.tracked[0]) { event in
                if event.kind == .childAdded, let key = event.childKey { seen.keys.append(key) }
            }
            store.waitForEventDelivery()
            try store.applyServerOverwrite(.string("y"), at: "elsewhere")
            try store.compact()
            try store.close()
            return seen.keys
        }
        let log = try Log.open(directory: dir.path)
        #expect(try CheckpointReader(#require(log.checkpoint)).directory.orderIndexes.isEmpty)
        try log.close()
        #expect(try keysSeen() == want)
        let again = try Log.open(directory: dir.path)
        #expect(try CheckpointReader(#require(again.checkpoint)).directory.orderIndexes.count == 3)
        try again.close()
        #expect(try keysSeen() == want)
    }
}
