@_spi(HearthInternals) @testable import Hearth
import HearthTesting

// Seeded random generators shared by the engine tests. Everything is driven by a
// `SeededRandom`, so a failure message that names the seed reproduces the case exactly.

extension SeededRandom {
    /// A uniform integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &self) }
    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    /// A uniformly chosen element.
    mutating func pick<T>(_ items: [T]) -> T { items[int(0..<items.count)] }
}

enum Gen {
    // MARK: - Keys

    /// Keys that stress Firebase key order and exact (non-normalizing) key equality:
    /// integer-like keys with leading zeros and signs, the Int32 boundaries, canonically
    /// equivalent pairs (precomposed vs. decomposed), astral characters (surrogate pairs in
    /// UTF-16, which sort below U+E000…U+FFFF) and private-use / fullwidth BMP characters.
    static let trickyKeys: [String] = [
        "0", "1", "-1", "7", "07", "007", "-0", "00", "10", "2147483647", "-2147483648",
        "2147483648", "-2147483649", "a", "b", "A", "-a", "a b", "\u{E9}", "e\u{301}",
        "\u{212B}", "\u{C5}", "A\u{30A}", "😀", "𝄞", "\u{FFFD}", "\u{E000}", "\u{FF5E}", "日本",
        "k\u{7E}", "z\u{10FFFF}",
    ]

    /// A random valid key: usually a tricky one, sometimes random text.
    static func key(_ rng: inout SeededRandom) -> ChildKey {
        if rng.chance(0.8) { return ChildKey(rng.pick(trickyKeys)) }
        if rng.chance(0.05) { return ChildKey(String(repeating: "x", count: ChildKey.maxUTF8Length)) }
        let alphabet: [Character] = ["a", "b", "0", "9", "-", " ", "é", "😀", "\u{301}", "Ω", "_"]
        var s = ""
        for _ in 0..<rng.int(1...6) { s.append(rng.pick(alphabet)) }
        // A lone combining mark or any mix is still a valid key.
        return ChildKey(s)
    }

    // MARK: - Leaves

    static let specialDoubles: [Double] = [
        0, -0.0, 1, -1, 0.5, -2.25, 1e300, -1e-300, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude,
        9_007_199_254_740_992, 9_007_199_254_740_994, 123_456_789.125, .pi, 1e21, 4_294_967_296,
    ]

    static func double(_ rng: inout SeededRandom) -> Double {
        if rng.chance(0.6) { return rng.pick(specialDoubles) }
        if rng.chance(0.5) { return Double(rng.int(-1_000_000...1_000_000)) }
        while true {
            let d = Double(bitPattern: rng.next())
            if d.isFinite { return d }
        }
    }

    static func string(_ rng: inout SeededRandom) -> String {
        switch rng.int(0..<5) {
        case 0: return ""
        case 1: return rng.pick(trickyKeys)
        case 2: return "line\nbreak\t\"quoted\"\\ \u{0}\u{1F}\u{7F}"
        case 3: return String(repeating: "é😀", count: rng.int(1...40))
        default:
            let alphabet: [Character] = ["a", "Z", " ", "/", ".", "$", "[", "é", "e\u{301}", "😀", "\u{2028}"]
            var s = ""
            for _ in 0..<rng.int(0...12) { s.append(rng.pick(alphabet)) }
            return s
        }
    }

    static func priority(_ rng: inout SeededRandom) -> Priority {
        rng.chance(0.5) ? .number(double(&rng)) : .string(string(&rng))
    }

    static func leaf(_ rng: inout SeededRandom, serverValues: Bool = true) -> LeafValue {
        switch rng.int(0..<(serverValues ? 6 : 4)) {
        case 0: return .bool(rng.chance(0.5))
        case 1:
            return rng.chance(0.8)
                ? .number(double(&rng))
                : .integer(exactly: rng.pick([.max, .min, (1 << 53) + 1, 1_542_405_709_418_655_810, 7]))
        case 2, 3: return .string(string(&rng))
        case 4: return .serverValue(.timestamp)
        default: return .serverValue(.increment(double(&rng)))
        }
    }

    // MARK: - Nodes

    /// A random node: leaves of every kind (server values included unless disabled),
    /// priorities on leaves and children nodes, nesting up to `depth` levels.
    static func node(
        _ rng: inout SeededRandom, depth: Int = 6, keys: (inout SeededRandom) -> ChildKey = Gen.key,
        serverValues: Bool = true, emptyChance: Double = 0.05, maxChildren: Int = 4
    ) -> Node {
        if rng.chance(emptyChance) { return .empty }
        let priority: Priority? = rng.chance(0.3) ? Gen.priority(&rng) : nil
        if depth == 0 || rng.chance(0.35) {
            return Node(leaf(&rng, serverValues: serverValues), priority: priority)
        }
        var pairs: [(key: ChildKey, value: Node)] = []
        for _ in 0..<rng.int(1...maxChildren) {
            let child = node(
                &rng, depth: depth - 1, keys: keys, serverValues: serverValues, emptyChance: 0, maxChildren: maxChildren
            )
            pairs.append((keys(&rng), child))
        }
        return Node(children: pairs, priority: priority)
    }

    // MARK: - Paths and queries

    static func path(
        _ rng: inout SeededRandom, maxDepth: Int = 4, keys: (inout SeededRandom) -> ChildKey = Gen.key
    ) -> Path {
        Path(keys: (0..<rng.int(0...maxDepth)).map { _ in keys(&rng) })
    }

    /// A key valid in a query bound or orderByChild path (no tricky non-validating keys).
    static func boundValue(_ rng: inout SeededRandom, for index: QueryIndex) -> Node {
        switch index {
        case .key: return .string(rng.pick(["a", "b", "07", "-0", "\u{E9}", "e\u{301}", "😀"]))
        case .priority:
            switch rng.int(0..<3) {
            case 0: return .empty
            case 1: return .number(double(&rng))
            default: return .string(string(&rng))
            }
        case .value, .child:
            switch rng.int(0..<4) {
            case 0: return .empty
            case 1: return .bool(rng.chance(0.5))
            case 2: return .number(double(&rng))
            default: return .string(string(&rng))
            }
        }
    }

    /// A random query built through the validating builders (so it is always valid).
    static func query(_ rng: inout SeededRandom) -> QuerySpec {
        let index: QueryIndex = rng.pick([.priority, .key, .value, .child("score"), .child("a/b"), .child("\u{E9}")])
        var q = QuerySpec(orderBy: index)
        func boundKey(_ rng: inout SeededRandom) -> ChildKey? {
            index == .key || rng.chance(0.5) ? nil : ChildKey(rng.pick(["k", "07", "-0", "😀", "e\u{301}"]))
        }
        if rng.chance(0.2) {
            q = (try? q.equalTo(boundValue(&rng, for: index), key: boundKey(&rng))) ?? q
        } else {
            switch rng.int(0..<3) {
            case 0: q = (try? q.startAt(boundValue(&rng, for: index), key: boundKey(&rng))) ?? q
            case 1: q = (try? q.startAfter(boundValue(&rng, for: index), key: boundKey(&rng))) ?? q
            default: break
            }
            switch rng.int(0..<3) {
            case 0: q = (try? q.endAt(boundValue(&rng, for: index), key: boundKey(&rng))) ?? q
            case 1: q = (try? q.endBefore(boundValue(&rng, for: index), key: boundKey(&rng))) ?? q
            default: break
            }
        }
        switch rng.int(0..<3) {
        case 0: q = (try? q.limitToFirst(rng.int(1...QuerySpec.maxLimit))) ?? q
        case 1: q = (try? q.limitToLast(rng.int(1...100))) ?? q
        default: break
        }
        return q
    }

    static func location(_ rng: inout SeededRandom, keys: (inout SeededRandom) -> ChildKey = Gen.key) -> QueryLocation {
        QueryLocation(path: path(&rng, maxDepth: 3, keys: keys), query: rng.chance(0.4) ? .default : query(&rng))
    }

    // MARK: - Events

    static func int64(_ rng: inout SeededRandom) -> Int64 {
        switch rng.int(0..<4) {
        case 0: return rng.pick([0, 1, -1, .max, .min, 1_700_000_000_000])
        case 1: return Int64(bitPattern: rng.next())
        default: return Int64(rng.int(-100_000...100_000))
        }
    }

    static func id(_ rng: inout SeededRandom) -> Int64 {
        rng.chance(0.1) ? rng.pick([0, Int64.max, Int64(Int32.max) + 1]) : Int64(rng.int(0...1000))
    }

    static func children(
        _ rng: inout SeededRandom, keys: (inout SeededRandom) -> ChildKey = Gen.key, depth: Int = 3
    ) -> [ChildUpdate] {
        (0..<rng.int(0...4)).map { _ in
            var p = path(&rng, maxDepth: 3, keys: keys)
            if p.isRoot { p = Path(keys: [keys(&rng)]) }
            return ChildUpdate(path: p, node: node(&rng, depth: depth, keys: keys, emptyChance: 0.2))
        }
    }

    /// One random event of the given case number (0..<eventKinds, in `StoreEvent` declaration order).
    static func event(_ rng: inout SeededRandom, kind: Int) -> StoreEvent {
        switch kind {
        case 0:
            return .serverOverwrite(path: path(&rng), node: node(&rng, depth: 3, serverValues: false), at: int64(&rng))
        case 1: return .serverMerge(path: path(&rng), children: children(&rng), at: int64(&rng))
        case 2:
            let op: PendingWrite.Operation = rng.chance(0.5) ? .set(node(&rng, depth: 3)) : .update(children(&rng))
            return .writeSaved(PendingWrite(id: id(&rng), path: path(&rng), operation: op))
        case 3: return .writeAcked(id: id(&rng))
        case 4: return .writeReverted(id: id(&rng))
        case 5:
            let loc = location(&rng)
            let keys: Set<ChildKey>? = rng.chance(0.7) ? Set((0..<rng.int(0...5)).map { _ in key(&rng) }) : nil
            return .trackedQuerySaved(
                TrackedQuery(
                    id: id(&rng), location: loc, complete: rng.chance(0.5), active: rng.chance(0.5),
                    lastUse: int64(&rng), keys: keys))
        case 6: return .trackedQueryRemoved(id: id(&rng))
        case 7: return .pinChanged(location(&rng), on: rng.chance(0.5))
        case 8: return .authSaved(AuthToken(token: string(&rng), expiresAt: int64(&rng)))
        case 9: return .authCleared
        case 10:
            return .transactionSaved(
                QueuedTransaction(
                    id: id(&rng), path: path(&rng), functionName: string(&rng), argument: node(&rng, depth: 2),
                    localResult: node(&rng, depth: 2), retryCount: rng.chance(0.2) ? Int(Int32.max) : rng.int(0...10),
                    status: rng.pick(QueuedTransaction.Status.allCases)))
        case 11: return .transactionRemoved(id: id(&rng))
        case 12:
            let action: OnDisconnectOperation.Action
            switch rng.int(0..<4) {
            case 0: action = .set(node(&rng, depth: 2))
            case 1: action = .update(children(&rng, depth: 2))
            case 2: action = .remove
            default: action = .cancel
            }
            return .onDisconnectSaved(
                OnDisconnectOperation(id: id(&rng), path: path(&rng), action: action, acknowledged: rng.chance(0.5)))
        case 13: return .onDisconnectAcked(id: id(&rng))
        case 14: return .onDisconnectRemoved(id: id(&rng))
        case 15: return .serverTimeOffset(ms: double(&rng))
        case 16: return .sessionStarted(at: int64(&rng))
        case 17:
            return .trackedQueryKeysChanged(
                id: id(&rng), added: (0..<rng.int(0...3)).map { _ in key(&rng) },
                removed: (0..<rng.int(0...3)).map { _ in key(&rng) })
        case 18:
            return .cachePruned(
                PruneResult(
                    prunedPaths: (0..<rng.int(0...3)).map { _ in path(&rng) },
                    keptPaths: (0..<rng.int(0...3)).map { _ in path(&rng) },
                    removedQueryIDs: (0..<rng.int(0...3)).map { _ in id(&rng) }))
        case 19: return .writerWatermark(writer: writer(&rng), id: id(&rng), at: int64(&rng))
        case 20: return .writerWatermarksRemoved(writers: (0..<rng.int(0...3)).map { _ in writer(&rng) })
        default:
            // Both forms: format 3's (the store's only writer) and a run from a write id on.
            return .writerIdentity(writer: writer(&rng), firstWriteID: rng.chance(0.3) ? nil : id(&rng))
        }
    }

    /// A writer id: any non-empty string the store accepts (1…256 UTF-8 bytes).
    static func writer(_ rng: inout SeededRandom) -> String {
        let s = string(&rng)
        return s.isEmpty ? "w" : s
    }

    static let eventKinds = 22

    static func event(_ rng: inout SeededRandom) -> StoreEvent { event(&rng, kind: rng.int(0..<eventKinds)) }
}
