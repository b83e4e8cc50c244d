import HearthTesting
import Testing

@testable import HearthModel

/// `ChildMap.concatenating(_:)` joins two maps whose keys do not overlap into the map of all their
/// pairs — balanced, counted, sharing both maps' subtrees — whatever their sizes, and refuses
/// (returning nil) when the second map's keys do not all sort after the first's.
@Suite struct ChildMapConcatenationTests {
    static func map(_ keys: some Sequence<Int>) -> ChildMap {
        ChildMap(sortedPairs: keys.map { (ChildKey("k\(1_000_000 + $0)"), Node.number(Double($0))) })
    }

    @Test func joinsAnySplitOfAnySize() {
        var checked = 0
        for seed: UInt64 in 1...600 {
            var rng = SeededRandom(seed: seed)
            // Sizes from empty to a few thousand, often very unequal (the heights differ most).
            let n = Int(rng.next() % (seed % 10 == 0 ? 4000 : 300))
            let cut = n == 0 ? 0 : Int(rng.next() % UInt64(n + 1))
            // Built apart, or as updated versions of a map (trees of another shape).
            var left = Self.map(0..<cut)
            var right = Self.map(cut..<n)
            if rng.next() % 2 == 0 {
                for k in (0..<cut).shuffled(using: &rng).prefix(20) {
                    left = left.setting(ChildKey("k\(1_000_000 + k)"), to: .number(Double(k)))
                }
                if n > cut { right = right.removing(ChildKey("k\(1_000_000 + cut)")) }
            }
            guard let joined = left.concatenating(right) else {
                Issue.record("seed \(seed): refused \(cut) + \(n - cut) ordered keys")
                continue
            }
            #expect(joined.checkInvariants() == nil, "seed \(seed)")
            #expect(Array(joined).map(\.key) == Array(left).map(\.key) + Array(right).map(\.key), "seed \(seed)")
            #expect(joined.count == left.count + right.count)
            // Shared, not copied: all but O(log n) of the result's tree nodes are the inputs'. At
            // most 3 new nodes per level (a double rotation) on the min's removal and on the
            // join's descent, over heights ≤ 1.44·log2(4002) < 18: 6·18 + 1.
            let fresh = joined.treeNodeIdentities().subtracting(left.treeNodeIdentities()).subtracting(
                right.treeNodeIdentities())
            #expect(fresh.count <= 109, "seed \(seed): \(fresh.count) new tree nodes of \(n)")
            checked += 1
        }
        #expect(checked == 600)
    }

    @Test func refusesKeysOutOfOrder() {
        let low = Self.map(0..<50)
        let high = Self.map(50..<100)
        let overlapping = Self.map(40..<60)
        #expect(high.concatenating(low) == nil)
        #expect(low.concatenating(overlapping) == nil)
        #expect(overlapping.concatenating(high) == nil)
        // A shared boundary key is an overlap too.
        #expect(Self.map(0...50).concatenating(high) == nil)
        #expect(low.concatenating(high).map(Array.init)?.count == 100)
        #expect(low.concatenating(ChildMap())?.isIdentical(to: low) == true)
        #expect(ChildMap().concatenating(high)?.isIdentical(to: high) == true)
    }
}
