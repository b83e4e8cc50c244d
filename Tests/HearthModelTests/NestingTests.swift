import Testing
@testable import HearthModel

/// ``Node/nestingExceeds(_:)`` and the allocation-free walk it uses,
/// ``ChildMap/containsValue(where:)``.
@Suite struct NestingTests {
    /// A chain of `depth` nested children ending in a leaf, among `siblings` shallow leaves at
    /// every level (so the deep branch is one of many, anywhere in each level's tree).
    static func chain(depth: Int, siblings: Int) -> Node {
        var node = Node.number(1)
        for level in 0..<depth {
            var pairs: [(key: ChildKey, value: Node)] = (0..<siblings).map { (ChildKey("s\($0)"), .number(Double($0))) }
            pairs.append((ChildKey("deep\(level % 7)"), node))
            node = Node(children: pairs)
        }
        return node
    }

    @Test func nestingIsCountedInChildrenLevels() {
        #expect(!Node.number(1).nestingExceeds(0))
        #expect(Node(children: [("a", .number(1))]).nestingExceeds(0))
        for siblings in [0, 1, 40] {
            let node = Self.chain(depth: 12, siblings: siblings)
            #expect(node.nestingExceeds(11), "12 levels exceed 11 (siblings \(siblings))")
            #expect(!node.nestingExceeds(12), "12 levels do not exceed 12 (siblings \(siblings))")
        }
    }

    @Test func containsValueVisitsEveryChild() {
        let pairs: [(key: ChildKey, value: Node)] = (0..<1000).map { (ChildKey("k\($0)"), .number(Double($0))) }
        let map = ChildMap(pairs)
        for probe in [0, 1, 499, 998, 999] {
            #expect(map.containsValue { $0 == .number(Double(probe)) }, "finds \(probe)")
        }
        #expect(!map.containsValue { $0 == .number(1000) })
        #expect(!ChildMap().containsValue { _ in true })
        var visited = 0
        _ = map.containsValue { _ in
            visited += 1
            return false
        }
        #expect(visited == 1000)
    }
}
