import Testing
@testable import HearthModel
import HearthTesting

@Suite struct NodeTests {
    @Test func nullDeletesAndEmptyParentsDisappear() throws {
        var node = Node.empty.updating("a/b/c", with: .number(1))
        #expect(node.child(at: "a/b/c") == .number(1))
        node = node.updating("a/b/c", with: .empty)
        #expect(node.isEmpty)
        #expect(node == .empty)
    }

    @Test func emptyNodeCarriesNoPriority() {
        #expect(Node.empty.withPriority(.number(1)).priority == nil)
        var node = Node(children: [("a", .number(1))], priority: .string("p"))
        #expect(node.priority == .string("p"))
        node = node.updatingChild("a", .empty)
        #expect(node.isEmpty)
        #expect(node.priority == nil)
        #expect(Node(children: ChildMap(), priority: .number(3)).priority == nil)
    }

    @Test func leafRules() {
        let leaf = Node(.string("x"), priority: .number(5))
        #expect(leaf.updatingChild("a", .empty) == leaf)  // empty child writes are ignored
        let replaced = leaf.updatingChild("a", .number(1))
        #expect(!replaced.isLeaf)
        #expect(replaced.priority == .number(5))  // keeps the leaf's priority
        #expect(replaced.child("a") == .number(1))
    }

    @Test func priorityPseudoChild() {
        let node = Node.number(1).updating(".priority", with: .string("hi"))
        #expect(node.priority == .string("hi"))
        #expect(node.child(".priority") == .string("hi"))
        #expect(node.updating(".priority", with: .empty).priority == nil)
        let nested = Node.empty.updating("a", with: .number(2)).updating("a/.priority", with: .number(9))
        #expect(nested.child("a").priority == .number(9))
    }

    @Test func mergeAppliesEachChild() {
        let base = Node.empty.updating("a", with: .number(1)).updating("b", with: .number(2))
        let merged = base.merging([("b", .empty), ("c/d", .bool(true))])
        #expect(merged.child("a") == .number(1))
        #expect(!merged.hasChild("b"))
        #expect(merged.child(at: "c/d") == .bool(true))
    }

    @Test func persistenceLeavesOldVersionsIntact() {
        let v1 = Node.empty.updating("a", with: .number(1))
        let v2 = v1.updating("a", with: .number(2))
        #expect(v1.child("a") == .number(1))
        #expect(v2.child("a") == .number(2))
    }

    @Test func boolIsNotANumber() {
        #expect(Node.bool(true) != Node.number(1))
        #expect(Node.bool(false) != Node.number(0))
    }

    /// Random inserts/removes on the persistent map checked against a dictionary + sort.
    @Test func childMapMatchesModel() {
        var rng = SeededRandom(seed: 7)
        var map = ChildMap()
        var model: [String: Double] = [:]
        var snapshots: [(ChildMap, [String: Double])] = []
        for step in 0..<4_000 {
            let key = String(Int(rng.next() % 600) - 100) + (rng.next() % 3 == 0 ? "x" : "")
            if rng.next() % 3 == 0 {
                map = map.removing(ChildKey(key))
                model[key] = nil
            } else {
                let v = Double(rng.next() % 1000)
                map = map.setting(ChildKey(key), to: .number(v))
                model[key] = v
            }
            if step % 500 == 0 { snapshots.append((map, model)) }
        }
        #expect(map.checkInvariants() == nil)
        func check(_ map: ChildMap, _ model: [String: Double]) {
            let expected = model.keys.map { ChildKey($0) }.sorted()
            #expect(map.map(\.key) == expected)
            #expect(map.reversedPairs.map(\.key) == expected.reversed())
            #expect(map.count == model.count)
            for (i, key) in expected.enumerated() {
                #expect(map[key] == .number(model[key.string]!))
                #expect(map.rank(of: key) == i)
                #expect(map.element(at: i)?.key == key)
                #expect(map.predecessor(of: key) == (i > 0 ? expected[i - 1] : nil))
                #expect(map.successor(of: key) == (i + 1 < expected.count ? expected[i + 1] : nil))
            }
            if expected.count > 10 {
                let from = expected[expected.count / 2]
                #expect(map.pairs(from: from).map(\.key) == Array(expected[(expected.count / 2)...]))
                #expect(map.reversedPairs(from: from).map(\.key) == Array(expected[...(expected.count / 2)].reversed()))
            }
        }
        check(map, model)
        // Older versions are untouched by later updates.
        for (old, oldModel) in snapshots {
            #expect(old.checkInvariants() == nil)
            check(old, oldModel)
        }
    }

    @Test func hundredThousandChildrenStayLogarithmic() {
        let pairs = (0..<100_000).map { (key: ChildKey(paddedKey($0)), value: Node.number(Double($0))) }
        var map = ChildMap(sortedPairs: pairs)
        #expect(map.checkInvariants() == nil)
        // AVL height bound: 1.44·log2(n + 2) ≈ 24 for 100,000.
        #expect(map.root!.height <= 24)
        for i in stride(from: 0, to: 100_000, by: 997) {
            map = map.setting(ChildKey(paddedKey(i)), to: .bool(true))
        }
        map = map.setting("zzz", to: .number(1))
        #expect(map.root!.height <= 24)
        #expect(map.count == 100_001)
    }
}

/// Zero-padded to 6 digits after a letter, so keys are strings (not integers) sorting by text.
func paddedKey(_ n: Int) -> String {
    let s = String(n)
    return "k" + String(repeating: "0", count: max(0, 6 - s.count)) + s
}
