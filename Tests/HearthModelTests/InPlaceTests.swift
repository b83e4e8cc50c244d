import HearthTesting
import Testing

@testable import HearthModel

/// The in-place writes (`Node.update(_:with:)`, `Node.merge(_:at:)`, `ChildMap.updateValue`)
/// give exactly what the persistent forms give, keep the tree balanced, change nothing any
/// other version can see, and do change unshared tree nodes in place.
@Suite struct InPlaceTests {
    /// Every map in `node`, at every depth, satisfies `ChildMap`'s invariants.
    static func deepInvariants(_ node: Node) -> String? {
        let map = node.children
        if let e = map.checkInvariants() { return e }
        for (_, child) in map {
            if let e = deepInvariants(child) { return e }
        }
        return nil
    }

    /// Random writes and merges applied in place to one node and persistently to another, with
    /// snapshots of the in-place node taken along the way: after every write the two agree, and
    /// every snapshot still exports the JSON it had when it was taken (a structurally independent
    /// record: a persistent copy would share, and be changed with, a wrongly written subtree).
    @Test func inPlaceWritesMatchThePersistentOnesAndLeaveSnapshotsAlone() {
        var rng = SeededRandom(seed: 0x494E_504C)
        for round in 0..<300 {
            var inPlace = PathCopyTests.randomNode(&rng)
            var persistent = inPlace
            var snapshots: [(node: Node, json: String)] = []
            for step in 0..<Int(5 + rng.next() % 60) {
                let path = PathCopyTests.randomPath(&rng, maxDepth: 3, priority: true)
                if rng.next() % 3 == 0 {
                    var children: [(path: Path, node: Node)] = []
                    for _ in 0..<Int(rng.next() % 6) {
                        let plain = rng.next() % 4 != 0
                        let relative =
                            plain
                            ? Path(keys: [PathCopyTests.keys[Int(rng.next() % UInt64(PathCopyTests.keys.count))]])
                            : PathCopyTests.randomPath(&rng, maxDepth: 2, priority: true)
                        var leaf = PathCopyTests.randomLeaf(&rng)
                        if plain && leaf.isEmpty { leaf = .number(Double(step)) }
                        children.append((relative, leaf))
                    }
                    inPlace.merge(children, at: path)
                    persistent = persistent.merging(children, at: path)
                } else {
                    let node = rng.next() % 4 == 0 ? PathCopyTests.randomNode(&rng) : PathCopyTests.randomLeaf(&rng)
                    inPlace.update(path, with: node)
                    persistent = persistent.updating(path, with: node)
                }
                #expect(inPlace == persistent, "round \(round) step \(step) at \(path)")
                #expect(inPlace.priority == persistent.priority)
                if rng.next() % 4 == 0 { snapshots.append((inPlace, inPlace.exportJSONString())) }
            }
            #expect(Self.deepInvariants(inPlace) == nil)
            #expect(inPlace.exportJSONString() == persistent.exportJSONString())
            for (node, json) in snapshots { #expect(node.exportJSONString() == json, "a snapshot changed") }
        }
    }

    /// Large maps: inserts in ascending, descending and random order (every rotation case),
    /// with a snapshot taken now and then, stay balanced and counted.
    @Test func inPlaceInsertsKeepTheTreeBalanced() {
        var rng = SeededRandom(seed: 0x4156_4C21)
        for order in 0..<3 {
            var map = ChildMap()
            var expected = ChildMap()
            var snapshot = ChildMap()
            var snapshotKeys: [ChildKey] = []
            for i in 0..<3000 {
                let n =
                    switch order {
                    case 0: i
                    case 1: 3000 - i
                    default: Int(rng.next() % 5000)
                    }
                let key = ChildKey("k\(n)")
                map.updateValue(key) { $0 = .number(Double(i)) }
                expected = expected.setting(key, to: .number(Double(i)))
                if i % 500 == 0 {
                    snapshot = map
                    snapshotKeys = Array(map).map(\.key)
                }
            }
            #expect(map.checkInvariants() == nil)
            #expect(map == expected)
            #expect(map.count == expected.count)
            #expect(snapshot.checkInvariants() == nil)
            #expect(Array(snapshot).map(\.key) == snapshotKeys)
        }
    }

    /// Runs of new keys sorting after every key of a map (push ids: the usual server merge),
    /// of 1 to 40 pairs and now and then longer than the map, joined on in place: the same map
    /// as the persistent sorted insert after every run, balanced and counted, snapshots
    /// untouched — and the tree written in place (its root object kept by most runs, where
    /// the persistent insert allocates a new root every time).
    @Test func sortedRunsAfterTheMapAreJoinedInPlace() {
        var rng = SeededRandom(seed: 0x4A4F_494E)
        var rootKept = 0
        for round in 0..<20 {
            var map = ChildMap()
            var expected = ChildMap()
            var snapshots: [(map: ChildMap, keys: [ChildKey])] = []
            var next = 0
            for step in 0..<200 {
                let length = rng.next() % 25 == 0 ? Int(rng.next() % 300) + 1 : Int(rng.next() % 40) + 1
                let pairs = (0..<length).map { i in
                    (key: ChildKey("-N\(String(1_000_000 + next + i))"), value: Node.number(Double(step)))
                }
                next += length
                let rootBefore = map.root.map(ObjectIdentifier.init)
                map.insert(sortedPairs: pairs)
                expected = expected.setting(sortedPairs: pairs)
                if let rootBefore, rootBefore == map.root.map(ObjectIdentifier.init) { rootKept += 1 }
                #expect(map == expected, "round \(round) step \(step)")
                #expect(map.count == expected.count)
                if rng.next() % 8 == 0 { snapshots.append((map, Array(map).map(\.key))) }
            }
            #expect(map.checkInvariants() == nil)
            for (snapshot, keys) in snapshots {
                #expect(snapshot.checkInvariants() == nil)
                #expect(Array(snapshot).map(\.key) == keys, "a snapshot changed")
            }
        }
        #expect(rootKept > 20 * 200 / 2, "in place: \(rootKept) of \(20 * 200) runs kept the root")
    }

    /// A run that does not sort after the whole map (a key inside it, or equal to its last)
    /// takes the persistent insert: the same map, snapshots untouched.
    @Test func sortedRunsInsideTheMapMatchThePersistentInsert() {
        let base = ChildMap(sortedPairs: (0..<500).map { (key: ChildKey("k\(1000 + 2 * $0)"), value: Node.number(1)) })
        for run in [[1001, 1003], [1998], [1998, 1999, 2000], [1, 2500]] {
            var map = base
            let snapshot = base
            let pairs = run.map { (key: ChildKey("k\($0)"), value: Node.number(2)) }
            map.insert(sortedPairs: pairs)
            #expect(map == base.setting(sortedPairs: pairs))
            #expect(map.checkInvariants() == nil)
            #expect(snapshot == base)
        }
    }

    /// Removing through the in-place path (a child set to empty, or a subtree emptied) gives
    /// the persistent result.
    @Test func emptyingAChildRemovesIt() {
        var node = Node.empty
        node.update("a/b", with: .number(1))
        node.update("a/c", with: .number(2))
        node.update("a/b", with: .empty)
        #expect(node.child(at: "a").childCount == 1)
        node.update("a/c", with: .empty)
        #expect(node.isEmpty)
        var map = ChildMap().setting("x", to: .number(1))
        map.updateValue("y") { $0 = .empty }
        #expect(Array(map).map(\.key) == ["x"])
        map.updateValue("x") { $0 = .empty }
        #expect(map.isEmpty)
    }

    /// The point of it: a node held in one place is written without copying its path (the
    /// root tree node of a 1,000-child map stays the same object), and one a snapshot shares
    /// is copied, the snapshot keeping its value.
    @Test func unsharedTreeNodesAreChangedInPlaceAndSharedOnesCopied() {
        var node = Node.empty
        for i in 0..<1000 { node.update(Path(keys: ["list", ChildKey("c\(i)")]), with: .number(Double(i))) }
        let rootBefore = ObjectIdentifier(node.child("list").children.root!)
        node.update("list/c500", with: .string("changed"))
        node.update("list/c1000", with: .string("added"))
        #expect(ObjectIdentifier(node.child("list").children.root!) == rootBefore)
        #expect(node.child(at: "list/c500") == .string("changed"))

        let snapshot = node
        node.update("list/c500", with: .string("again"))
        #expect(ObjectIdentifier(node.child("list").children.root!) != rootBefore)
        #expect(snapshot.child(at: "list/c500") == .string("changed"))
        #expect(node.child(at: "list/c500") == .string("again"))
        #expect(snapshot.child("list").childCount == 1001)
    }
}
