@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A key-ordered, limited view over a location cached whole is built from the checkpoint
/// chunks its window needs (ViewHost+Windows.swift), and raises exactly the events — at once
/// and after later changes — that a view built from the whole location raises.
@Suite struct WindowFromChunksTests {
    let big: Path = "rooms/big"

    /// A store whose checkpoint holds `count` children at `rooms/big` (split into range chunks,
    /// two children large enough for chunks of their own), covered by a complete default
    /// query; then `tail` server events after the checkpoint. Returns those events.
    func makeStore(_ dir: TempDir, seed: UInt64, count: Int, tail: Int) throws -> [StoreEvent] {
        var random = SeededRandom(seed: seed)
        let store = try Store.open(directory: dir.path, options: options())
        var pairs: [(key: ChildKey, value: Node)] = []
        var keys = Set<String>()
        while keys.count < count {
            // Integer keys sort before the others (Firebase key order).
            let key =
                Bool.random(using: &random)
                ? "\(Int.random(in: 0..<100_000, using: &random))" : "m\(Int.random(in: 0..<1_000_000, using: &random))"
            keys.insert(key)
        }
        for (i, key) in keys.sorted().enumerated() {
            // Two children of over 64 KiB: chunks of their own, one among the last keys.
            let large = i == count / 2 || i == count - 3
            let text = String(repeating: "lorem ", count: large ? 12_000 : Int.random(in: 5...60, using: &random))
            var value = Node(children: [
                ("text", .string(text)), ("n", .number(Double(Int.random(in: 0..<50, using: &random)))),
            ])
            if i % 5 == 0 { value = value.withPriority(.number(Double(i % 3))) }
            pairs.append((ChildKey(key), value))
        }
        try store.applyServerOverwrite(Node(children: pairs), at: big)
        try store.trackQuery(at: QueryLocation(path: big, query: .default), complete: true, active: false)
        try store.compact()
        var events: [StoreEvent] = []
        let existing = pairs.map(\.key)
        for _ in 0..<tail {
            events += try Self.commitServerEvent(
                Self.randomServerEvent(&random, existing: existing, big: big), to: store)
        }
        try store.close()
        return events
    }

    /// Commits a server overwrite or merge to `store`; returns the events committed.
    static func commitServerEvent(_ event: StoreEvent, to store: Store) throws -> [StoreEvent] {
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            switch event {
            case let .serverOverwrite(path, node, _): try b.applyServerOverwrite(node, at: path)
            case let .serverMerge(path, children, _): try b.applyServerMerge(children, at: path)
            default: break
            }
        }.events
    }

    /// A server overwrite or merge below `big`: a child added, removed, changed or edited deep.
    static func randomServerEvent(_ random: inout SeededRandom, existing: [ChildKey], big: Path) -> StoreEvent {
        func key() -> ChildKey {
            Int.random(in: 0..<3, using: &random) == 0
                ? ChildKey("m\(Int.random(in: 0..<1_000_000, using: &random))")
                : existing.randomElement(using: &random)!
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .serverOverwrite(path: big.child(key()), node: .empty, at: 0)
        case 1:
            let n = Node.number(Double(Int.random(in: 0..<50, using: &random)))
            return .serverOverwrite(path: big.child(key()).child(ChildKey("n")), node: n, at: 0)
        case 2:
            let children = [
                ChildUpdate(path: Path(keys: [key()]), node: .empty),
                ChildUpdate(path: Path(keys: [key()]), node: .string("new")),
            ]
            return .serverMerge(path: big, children: children, at: 0)
        default:
            return .serverOverwrite(path: big.child(key()), node: Node(children: [("text", .string("added"))]), at: 0)
        }
    }

    /// The lazily read state (chunks, deferred tail) and the whole state loaded, of `dir`.
    func states(
        _ dir: TempDir, tail: [StoreEvent]
    ) throws -> (lazy: PersistedCacheReader, loaded: PersistedCacheReader, log: Log) {
        let log = try Log.open(directory: dir.path)
        let checkpoint = try #require(log.checkpoint)
        let reader = try CheckpointReader(checkpoint)
        var partial = LoadingState(state: reader.directory.state, cacheLoaded: false)
        var loaded = LoadingState(state: reader.directory.state, cacheLoaded: false)
        loaded.finishLoading(cache: try CheckpointReader(checkpoint).fullCache())
        for e in tail {
            partial.apply(e)
            loaded.apply(e)
        }
        return (
            PersistedCacheReader(loading: partial, reader: reader), PersistedCacheReader(loading: loaded, reader: nil),
            log
        )
    }

    /// A `limitToLast(50)` by key over 3,000 cached children decodes the last chunks only,
    /// not the location's.
    @Test func aWindowDecodesOnlyTheChunksItNeeds() throws {
        let dir = TempDir()
        _ = try makeStore(dir, seed: 7, count: 3000, tail: 0)
        let (lazy, loaded, log) = try states(dir, tail: [])
        defer { try? log.close() }
        let reader = try #require(lazy.reader)
        let query = try QuerySpec(orderBy: .key).limitToLast(50)
        let windows = PersistedWindows()
        let got = try #require(lazy.servingWindows(windows).serverCache(at: big, query: query))
        let want = try #require(loaded.serverCache(at: big, query: query))
        #expect(got.complete && query.window(of: got.node) == query.window(of: want.node))
        #expect(windows.answered == [QueryLocation(path: big, query: query)])
        #expect(reader.directory.chunks.count > 10)
        // The runs at the end (the large child among the last keys cuts one short) and the
        // large child's own two chunks: 5 of the 17.
        #expect(
            reader.decodedChunkCount <= 5, "decoded \(reader.decodedChunkCount) of \(reader.directory.chunks.count)")
    }

    /// The queries compared: key-ordered windows from either end with every kind of bound
    /// (answered from chunks), and other orders (the whole location, as before).
    func queries(_ random: inout SeededRandom) throws -> [QuerySpec] {
        func key() -> String {
            Bool.random(using: &random)
                ? "\(Int.random(in: 0..<100_000, using: &random))" : "m\(Int.random(in: 0..<1_000_000, using: &random))"
        }
        func bound() -> Node { .string(key()) }
        let byKey = QuerySpec(orderBy: .key)
        var result: [QuerySpec] = []
        for n in [1, 7, 50] {
            result.append(try byKey.limitToLast(n))
            result.append(try byKey.limitToFirst(n))
            result.append(try byKey.startAt(bound()).limitToLast(n))
            result.append(try byKey.endAt(bound()).limitToLast(n))
            result.append(try byKey.startAfter(bound()).limitToFirst(n))
            result.append(try byKey.endBefore(bound()).limitToFirst(n))
        }
        let (a, b) = (key(), key())
        let (low, high) = ChildKey.compare(ChildKey(a), ChildKey(b)) <= 0 ? (a, b) : (b, a)
        result.append(try byKey.startAt(.string(low)).endAt(.string(high)).limitToLast(5))
        result.append(try byKey.equalTo(.string(low)).limitToFirst(1))
        result.append(try QuerySpec(orderBy: .child("n")).limitToLast(5))
        result.append(try QuerySpec(orderBy: .priority).limitToFirst(5))
        result.append(try QuerySpec(orderBy: .value).limitToLast(5))
        return result
    }

    /// The views built from the chunks raise the events the views built from the whole location
    /// raise: the initial ones, and those of random server data, writes and acks after — the
    /// later ones going through the same completion the store's commits run.
    @Test(arguments: [1, 2, 3])
    func eventsEqualTheWholeLocationsEvents(seed: UInt64) throws {
        let dir = TempDir()
        let tail = try makeStore(dir, seed: seed, count: 1500, tail: 6)
        let opened = try states(dir, tail: tail)
        defer { try? opened.log.close() }
        var (lazy, loaded) = (opened.lazy, opened.loaded)
        var random = SeededRandom(seed: seed &+ 100)
        let windowedHost = ViewHost(), wholeHost = ViewHost()
        for query in try queries(&random) {
            let listener = ViewHost.Listener(
                location: QueryLocation(path: big, query: query), query: query, handler: { _ in })
            let (_, got) = try windowedHost.addListener(listener, kinds: .all, lazy)
            let (_, want) = try wholeHost.addListener(listener, kinds: .all, loaded)
            #expect(got == want, "\(query)")
        }
        #expect(!windowedHost.windowed.isEmpty)
        let existing = try loaded.serverValue(at: big).children.map(\.key)
        var nextWrite: Int64 = 1
        for step in 0..<40 {
            let events: [StoreEvent]
            if step % 10 == 9 {
                let write = PendingWrite(
                    id: nextWrite, path: big.child(existing.randomElement(using: &random)!), operation: .set(.empty))
                nextWrite += 1
                events = [.writeSaved(write)]
            } else if step % 10 == 0, nextWrite > 1 {
                events = [.writeAcked(id: nextWrite - 1)]
            } else if step % 10 < 3 {
                // A third of the children removed from one end: more than the runs a window was
                // read from hold, so the windows refill from the rest of the location.
                let keys = try loaded.serverValue(at: big).children.map(\.key)
                let removed = step % 10 == 1 ? keys.suffix(keys.count / 3) : keys.prefix(keys.count / 3)
                let children = removed.map { ChildUpdate(path: Path(keys: [$0]), node: .empty) }
                events = [.serverMerge(path: big, children: children, at: 0)]
            } else {
                events = [Self.randomServerEvent(&random, existing: existing, big: big)]
            }
            try windowedHost.completeWindows(for: events, [], lazy)
            var (l, w) = (lazy.loading, loaded.loading)
            for e in events {
                l.apply(e)
                w.apply(e)
            }
            lazy = PersistedCacheReader(loading: l, reader: lazy.reader)
            loaded = PersistedCacheReader(loading: w, reader: nil)
            let got = windowedHost.apply(events, [], lazy, now: 0).map(\.0)
            let want = wholeHost.apply(events, [], loaded, now: 0).map(\.0)
            #expect(got == want, "step \(step): \(events)")
        }
    }
}
