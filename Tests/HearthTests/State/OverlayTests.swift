import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// `localValue(at:now:)` against a model that materializes the whole local tree — the server
/// cache with every pending write applied at the root in id order, server values resolved
/// against the tree at the moment each write applies — and then reads the path.
@Suite struct OverlayTests {
    static func resolveModel(_ node: Node, existing: Node, serverNow: Double) -> Node {
        if let leaf = node.leafValue {
            switch leaf {
            case .serverValue(.timestamp):
                return Node(.number(serverNow.rounded(.down)), priority: node.priority)
            case .serverValue(.increment(let n)):
                // Integers add exactly unless they overflow (Firebase's Long + Long).
                if let a = existing.leafValue?.exactInteger, let b = Int64(exactly: n) {
                    let (sum, overflow) = a.addingReportingOverflow(b)
                    if !overflow { return Node(.integer(exactly: sum), priority: node.priority) }
                }
                if let current = existing.leafValue?.doubleValue {
                    return Node(.number(current + n), priority: node.priority)
                }
                return Node(.number(n), priority: node.priority)
            default:
                return node
            }
        }
        if node.isEmpty { return node }
        let pairs = node.children.map {
            ($0.key, resolveModel($0.value, existing: existing.child($0.key), serverNow: serverNow))
        }
        return Node(children: pairs, priority: node.priority)
    }

    static func materialize(_ s: StoreState, now: Int64) -> Node {
        var tree = s.serverCache
        let serverNow = Double(now) + s.serverTimeOffsetMs
        for w in s.pendingWrites {
            let parts: [(Path, Node)]
            switch w.operation {
            case .set(let n): parts = [(w.path, n)]
            case .update(let cs): parts = cs.map { (w.path.appending($0.path), $0.node) }
            }
            for (p, n) in parts {
                tree = tree.updating(p, with: resolveModel(n, existing: tree.child(at: p), serverNow: serverNow))
            }
        }
        return tree
    }

    /// Read paths near the written ones: the paths themselves, their ancestors, a child
    /// below, a sibling, and random ones.
    static func readPaths(_ s: StoreState, _ rng: inout SeededRandom) -> [Path] {
        var out: Set<Path> = [.root]
        for w in s.pendingWrites {
            for p in w.touchedPaths {
                out.insert(p)
                if let parent = p.parent { out.insert(parent); out.insert(parent.child(SmallWorld.key(&rng))) }
                out.insert(p.child(SmallWorld.key(&rng)))
            }
        }
        for _ in 0..<4 { out.insert(SmallWorld.path(&rng, maxDepth: 4, priority: true)) }
        return out.sorted()
    }

    func check(_ s: StoreState, now: Int64, seed: UInt64, rng: inout SeededRandom) {
        let full = Self.materialize(s, now: now)
        for p in Self.readPaths(s, &rng) {
            let expected = full.child(at: p)
            let actual = s.localValue(at: p, now: now)
            #expect(actual == expected, "seed \(seed) path \(p): engine \(actual) vs model \(expected)")
        }
    }

    @Test func randomWritesMatchTheMaterializedTree() {
        for seed: UInt64 in 1...400 {
            var rng = SeededRandom(seed: seed)
            var s = StoreState()
            s.apply(.serverOverwrite(path: .root, node: SmallWorld.node(&rng), at: 0))
            for _ in 0..<rng.int(0...3) {
                s.apply(.serverOverwrite(path: SmallWorld.path(&rng), node: SmallWorld.node(&rng), at: 0))
            }
            if rng.chance(0.5) { s.apply(.serverTimeOffset(ms: rng.pick([0, -1.5, 0.75, 1234.9, -100_000]))) }
            for id in 1...Int64(rng.int(1...7)) {
                let op: PendingWrite.Operation =
                    rng.chance(0.6)
                    ? .set(SmallWorld.node(&rng, serverValues: true))
                    : .update(SmallWorld.children(&rng, serverValues: true))
                s.apply(.writeSaved(PendingWrite(id: id, path: SmallWorld.path(&rng, priority: true), operation: op)))
            }
            check(s, now: Int64(rng.int(0...2_000_000_000_000)), seed: seed, rng: &rng)
        }
    }

    @Test func incrementsStackAcrossPendingWrites() {
        for seed: UInt64 in 1...150 {
            var rng = SeededRandom(seed: seed)
            var s = StoreState()
            let base: Node = rng.pick([
                .number(5), .string("x"), .bool(true), .empty, Node(children: [("q", .number(1))]),
            ])
            s.apply(.serverOverwrite(path: "a/b", node: base, at: 0))
            // Whatever form each write takes, a/b ends as (base if a number, else 0) + Σn.
            var expected: Double = {
                if case .number(let n)? = base.leafValue { return n }; return 0
            }()
            for id in 1...Int64(rng.int(1...6)) {
                let n = Double(rng.int(-5...5))
                let inc = Node(.serverValue(.increment(n)))
                // The same increment written several ways: a set at the location, a set of an
                // ancestor object, an update from the parent or from the root.
                let op: (Path, PendingWrite.Operation)
                switch rng.int(0..<4) {
                case 0: op = ("a/b", .set(inc))
                case 1: op = ("a", .set(Node(children: [("b", inc)])))
                case 2: op = ("a", .update([ChildUpdate(path: "b", node: inc)]))
                default: op = ("", .update([ChildUpdate(path: "a/b", node: inc)]))
                }
                s.apply(.writeSaved(PendingWrite(id: id, path: op.0, operation: op.1)))
                expected += n
            }
            #expect(s.localValue(at: "a/b", now: 0) == .number(expected), "seed \(seed)")
            let full = Self.materialize(s, now: 0)
            #expect(s.localValue(at: "a", now: 0) == full.child(at: "a"), "seed \(seed)")
            #expect(s.localValue(at: "", now: 0) == full, "seed \(seed)")
        }
    }

    @Test func incrementsOnDirectedCases() {
        var s = StoreState()
        s.apply(.serverOverwrite(path: "n", node: .number(10), at: 0))
        s.apply(.serverOverwrite(path: "s", node: .string("ten"), at: 0))
        s.apply(.writeSaved(PendingWrite(id: 1, path: "n", operation: .set(Node(.serverValue(.increment(2)))))))
        s.apply(
            .writeSaved(
                PendingWrite(
                    id: 2, path: "",
                    operation: .update([ChildUpdate(path: "n", node: Node(.serverValue(.increment(3.5))))]))))
        s.apply(
            .writeSaved(
                PendingWrite(
                    id: 3, path: "s", operation: .set(Node(.serverValue(.increment(4)), priority: .string("p"))))))
        s.apply(.writeSaved(PendingWrite(id: 4, path: "none/x", operation: .set(Node(.serverValue(.increment(-1)))))))
        #expect(s.localValue(at: "n", now: 0) == .number(15.5))  // 10 + 2 + 3.5: stacked
        #expect(s.localValue(at: "s", now: 0) == Node(.number(4), priority: .string("p")))  // not a number: n
        #expect(s.localValue(at: "none", now: 0) == Node(children: [("x", .number(-1))]))
        #expect(s.serverValue(at: "n") == .number(10))  // the server cache is untouched
        s.apply(.writeAcked(id: 1))
        #expect(s.localValue(at: "n", now: 0) == .number(13.5))
    }

    @Test func timestampsResolveToNowPlusOffsetFloored() {
        var s = StoreState()
        let ts = Node(.serverValue(.timestamp))
        s.apply(
            .writeSaved(
                PendingWrite(id: 1, path: "t", operation: .set(Node(children: [("at", ts), ("v", .number(1))])))))
        #expect(s.localValue(at: "t/at", now: 1_000) == .number(1_000))
        s.apply(.serverTimeOffset(ms: 250.75))
        #expect(s.localValue(at: "t/at", now: 1_000) == .number(1_250))
        #expect(s.localValue(at: "t", now: 1_000) == Node(children: [("at", .number(1_250)), ("v", .number(1))]))
        s.apply(.serverTimeOffset(ms: -0.5))
        #expect(s.localValue(at: "t/at", now: 1_000) == .number(999))  // floor, not truncation
        // The stored write keeps the placeholder.
        #expect(s.pendingWrites[0].operation == .set(Node(children: [("at", ts), ("v", .number(1))])))
    }

    @Test func writesAboveBelowAndBesideTheReadPath() throws {
        var s = StoreState()
        s.apply(.serverOverwrite(path: "", node: try Node(jsonText: #"{"a":{"b":{"c":1,"d":2},"e":3},"f":4}"#), at: 0))
        s.apply(.writeSaved(PendingWrite(id: 1, path: "a/b/c", operation: .set(.number(10)))))  // below a/b
        s.apply(.writeSaved(PendingWrite(id: 2, path: "f", operation: .set(.empty))))  // beside
        #expect(s.localValue(at: "a/b", now: 0).exportJSONString() == #"{"c":10,"d":2}"#)
        s.apply(.writeSaved(PendingWrite(id: 3, path: "a", operation: .set(try Node(jsonText: #"{"b":{"x":true}}"#)))))  // above
        #expect(s.localValue(at: "a/b", now: 0).exportJSONString() == #"{"x":true}"#)
        s.apply(
            .writeSaved(
                PendingWrite(
                    id: 4, path: "a/b",
                    operation: .update([
                        ChildUpdate(path: "y/z", node: .string("s")), ChildUpdate(path: "x", node: .empty),
                    ]))))
        #expect(s.localValue(at: "a/b", now: 0).exportJSONString() == #"{"y":{"z":"s"}}"#)
        #expect(s.localValue(at: "", now: 0).exportJSONString() == #"{"a":{"b":{"y":{"z":"s"}}}}"#)
        #expect(s.localValue(at: "f", now: 0).isEmpty)
    }

    @Test func priorityWritesOnAbsentNodesAreIgnored() {
        // Firebase: a priority cannot live on an empty node, so setting `x/.priority` where
        // x does not exist leaves nothing to read back, at `x` or at `x/.priority`.
        var s = StoreState()
        s.apply(.writeSaved(PendingWrite(id: 1, path: "x/.priority", operation: .set(.string("p")))))
        #expect(s.localValue(at: "x", now: 0).isEmpty)
        #expect(s.localValue(at: "x/.priority", now: 0).isEmpty)
        // Once x exists, its priority reads back from either path.
        s.apply(.serverOverwrite(path: "x", node: .number(1), at: 0))
        #expect(s.localValue(at: "x", now: 0) == Node(.number(1), priority: .string("p")))
        #expect(s.localValue(at: "x/.priority", now: 0) == .string("p"))
        // A later delete of x takes the priority with it.
        s.apply(.writeSaved(PendingWrite(id: 2, path: "x", operation: .set(.empty))))
        s.apply(.writeSaved(PendingWrite(id: 3, path: "x/.priority", operation: .set(.number(3)))))
        #expect(s.localValue(at: "x/.priority", now: 0).isEmpty)
    }
}
