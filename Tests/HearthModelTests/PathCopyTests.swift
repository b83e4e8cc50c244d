import HearthTesting
import Testing

@testable import HearthModel

/// The one-descent update of a child (`ChildMap.updatingValue`, used by `Node.updating`) and the
/// merge that copies the path above it once (`Node.merging(_:at:)`) give exactly what the
/// step-by-step forms give, Firebase's corner cases (priorities, leaves, collapses) included.
@Suite struct PathCopyTests {
    static let keys: [ChildKey] = ["a", "b", "c", "1", "10", "-2", "z~", "é"]

    static func randomLeaf(_ rng: inout SeededRandom) -> Node {
        switch rng.next() % 6 {
        case 0: .empty
        case 1: .number(Double(rng.next() % 5))
        case 2: Node(.string("s\(rng.next() % 3)"), priority: .number(Double(rng.next() % 3)))
        default: .bool(rng.next() % 2 == 0)
        }
    }

    static func randomPath(_ rng: inout SeededRandom, maxDepth: Int, priority: Bool) -> Path {
        let depth = Int(rng.next() % UInt64(maxDepth + 1))
        var keys: [ChildKey] = []
        for i in 0..<depth {
            let last = i == depth - 1
            if priority && rng.next() % 8 == 0 && (last || rng.next() % 2 == 0) {
                keys.append(".priority")
            } else {
                keys.append(
                    keys.isEmpty && rng.next() % 2 == 0 ? "a" : Self.keys[Int(rng.next() % UInt64(Self.keys.count))])
            }
        }
        return Path(keys: keys)
    }

    static func randomNode(_ rng: inout SeededRandom) -> Node {
        var node = Node.empty
        for _ in 0..<Int(rng.next() % 30) {
            node = node.updating(randomPath(&rng, maxDepth: 3, priority: true), with: randomLeaf(&rng))
        }
        return node
    }

    @Test func updatingValueIsSettingTheTransformedChild() {
        var rng = SeededRandom(seed: 0x5041_5448)
        for _ in 0..<400 {
            var map = ChildMap()
            for _ in 0..<Int(rng.next() % 40) {
                let key = ChildKey("k\(rng.next() % 60)")
                map = map.setting(key, to: Self.randomLeaf(&rng))
            }
            let before = Array(map)
            let key =
                rng.next() % 3 == 0
                ? Self.keys[Int(rng.next() % UInt64(Self.keys.count))] : ChildKey("k\(rng.next() % 60)")
            let replacement = Self.randomLeaf(&rng)
            let appendOne = rng.next() % 2 == 0
            let transform: (Node) -> Node = { old in
                appendOne ? old.updatingChild("x", replacement) : replacement
            }
            let expected = map.setting(key, to: transform(map[key] ?? .empty))
            let updated = map.updatingValue(key, transform)
            #expect(updated == expected)
            #expect(updated.checkInvariants() == nil)
            #expect(updated.count == expected.count)
            // The old version is untouched (persistence).
            #expect(Array(map).map(\.key) == before.map(\.key))
        }
    }

    @Test func updatingValueOfAnAbsentKeyToEmptyIsTheSameMap() {
        let map = ChildMap().setting("a", to: .number(1)).setting("c", to: .number(3))
        let same = map.updatingValue("b") { _ in .empty }
        #expect(same.isIdentical(to: map))
        let removed = map.updatingValue("a") { _ in .empty }
        #expect(Array(removed).map(\.key) == ["c"])
    }

    @Test func mergingAtAPathIsWritingEachChildInOrder() {
        var rng = SeededRandom(seed: 0x4D45_5247)
        for _ in 0..<3000 {
            let base = Self.randomNode(&rng)
            let path = Self.randomPath(&rng, maxDepth: 3, priority: true)
            var children: [(path: Path, node: Node)] = []
            for _ in 0..<Int(rng.next() % 5) {
                children.append((Self.randomPath(&rng, maxDepth: 2, priority: true), Self.randomLeaf(&rng)))
            }
            var expected = base
            for (relative, node) in children { expected = expected.updating(path.appending(relative), with: node) }
            let merged = base.merging(children, at: path)
            #expect(merged == expected, "merge at \(path) of \(children.map { "\($0.path)=\($0.node)" }) over \(base)")
            #expect(merged.priority == expected.priority)
        }
    }

    /// Written one by one, a merge that empties its location and then fills it again drops
    /// the priority of an ancestor left without children; written as one result it would not.
    @Test func aMergeThatEmptiesItsLocationMidwayIsWrittenOneByOne() {
        let base = Node(children: [("room", Node(children: [("m", .number(1))]))], priority: .string("p"))
        let children: [(path: Path, node: Node)] = [("m", .empty), ("n", .number(2))]
        let merged = base.merging(children, at: "room")
        #expect(merged.child(at: "room/n") == .number(2))
        #expect(merged.child(at: "room/m").isEmpty)
        #expect(merged.priority == nil)
        // And a leaf above the location, replaced by the first write, is not restored by a
        // last one that empties the location.
        let leafAbove = Node(.string("leaf"))
        let emptied = leafAbove.merging([("x", .number(1)), ("x", .empty)], at: "a")
        #expect(emptied.isEmpty)
    }

    @Test func aSortedRunIsSettingEachPairInTurn() {
        var rng = SeededRandom(seed: 0x534F_5254)
        for round in 0..<300 {
            var map = ChildMap()
            let size = Int(rng.next() % (round % 10 == 0 ? 3000 : 80))
            for _ in 0..<size { map = map.setting(ChildKey("k\(rng.next() % 5000)"), to: .number(1)) }
            // A run somewhere: around existing keys, replacing some, or past the end.
            let base = Int(rng.next() % 5200)
            var keys = Set<String>()
            for _ in 0..<Int(1 + rng.next() % 40) {
                keys.insert("k\(base + Int(rng.next() % UInt64(1 + rng.next() % 800)))")
            }
            let pairs = keys.map { (key: ChildKey($0), value: Node.number(Double(rng.next() % 9) + 2)) }
                .sorted { ChildKey.compare($0.key, $1.key) < 0 }
            var expected = map
            for (k, v) in pairs { expected = expected.setting(k, to: v) }
            let bulk = map.setting(sortedPairs: pairs)
            #expect(bulk.checkInvariants() == nil)
            #expect(bulk == expected)
            #expect(bulk.count == expected.count)
        }
    }

    @Test func aMergeOfPlainChildWritesIsWritingEachInOrder() {
        var rng = SeededRandom(seed: 0x504C_4149)
        for _ in 0..<2000 {
            let base = Self.randomNode(&rng)
            let path = Self.randomPath(&rng, maxDepth: 2, priority: false)
            var children: [(path: Path, node: Node)] = []
            for _ in 0..<Int(1 + rng.next() % 8) {
                var leaf = Self.randomLeaf(&rng)
                if leaf.isEmpty { leaf = .number(7) }
                children.append((Path(keys: [Self.keys[Int(rng.next() % UInt64(Self.keys.count))]]), leaf))
            }
            var expected = base
            for (relative, node) in children { expected = expected.updating(path.appending(relative), with: node) }
            let merged = base.merging(children, at: path)
            #expect(merged == expected, "merge at \(path) of \(children.map { "\($0.path)=\($0.node)" }) over \(base)")
            #expect(merged.child(at: path).priority == expected.child(at: path).priority)
        }
    }

    @Test func mergingCopiesThePathAboveOnceAndSharesTheRest() {
        var base = Node.empty
        for i in 0..<50 { base = base.updating(Path(keys: ["other", ChildKey("o\(i)")]), with: .number(Double(i))) }
        base = base.updating("scores/g1/x", with: .number(0))
        let merged = base.merging([("p1", .number(1)), ("p2", .number(2))], at: "scores/g1")
        #expect(merged.child(at: "scores/g1/p1") == .number(1))
        #expect(merged.child(at: "scores/g1/p2") == .number(2))
        #expect(merged.child(at: "scores/g1/x") == .number(0))
        #expect(merged.child("other").children.isIdentical(to: base.child("other").children))
    }
}
