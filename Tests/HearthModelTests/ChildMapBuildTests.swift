import HearthTesting
import Testing

@testable import HearthModel

/// `ChildMap.init(count:sortedPairsFrom:)` builds, from pairs produced one at a time, the same
/// balanced tree `init(sortedPairs:)` builds from an array of them, calling the producer once
/// per pair in key order, and stops at the producer's first error.
@Suite struct ChildMapBuildTests {
    struct Stop: Error, Equatable { let at: Int }

    static func pairs(_ n: Int) -> [(key: ChildKey, value: Node)] {
        (0..<n).map { (ChildKey("k\(1_000_000 + $0)"), Node.number(Double($0))) }
    }

    /// The tree's shape: each node's key with its subtrees', in order.
    static func shape(_ t: ChildMap.Tree?) -> String {
        guard let t else { return "." }
        return "(\(shape(t.left)) \(t.key) \(shape(t.right)))"
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 100, 1_023, 1_024, 1_025, 4_097])
    func buildsTheSortedPairsTree(_ n: Int) {
        let sorted = Self.pairs(n)
        var calls = 0
        let built = ChildMap(count: n) { () -> (key: ChildKey, value: Node) in
            defer { calls += 1 }
            return sorted[calls]
        }
        #expect(calls == n)
        #expect(built.checkInvariants() == nil)
        #expect(built.count == n)
        #expect(Array(built).map(\.key) == sorted.map(\.key))
        #expect(Array(built).map(\.value) == sorted.map(\.value))
        #expect(Self.shape(built.root) == Self.shape(ChildMap(sortedPairs: sorted).root))
    }

    @Test func stopsAtTheFirstError() {
        let sorted = Self.pairs(50)
        for failing in [0, 1, 20, 49] {
            var calls = 0
            #expect(throws: Stop(at: failing)) {
                _ = try ChildMap(count: 50) { () throws(Stop) -> (key: ChildKey, value: Node) in
                    if calls == failing { throw Stop(at: failing) }
                    defer { calls += 1 }
                    return sorted[calls]
                }
            }
            #expect(calls == failing, "no pair is asked for after the error")
        }
    }
}
