import HearthTesting
import Testing

@testable import HearthModel

/// `ChildMap.hasSamePairs(as:from:through:same:)` answers exactly what comparing the pairs of
/// the range one by one answers — for a map and versions of it updated here and there (sharing
/// most subtrees), for maps built apart, for ranges inside, across and outside the keys — and
/// `iterator(after:)` starts right after its key.
@Suite struct SameRangeTests {
    static func key(_ i: UInt64) -> ChildKey { ChildKey("k\(i % 400)") }

    static func pairs(_ map: ChildMap, _ first: ChildKey, _ last: ChildKey) -> [(ChildKey, Node)] {
        map.filter { ChildKey.compare($0.key, first) >= 0 && ChildKey.compare($0.key, last) <= 0 }
            .map { ($0.key, $0.value) }
    }

    static func naive(_ a: ChildMap, _ b: ChildMap, _ first: ChildKey, _ last: ChildKey) -> Bool {
        let x = pairs(a, first, last)
        let y = pairs(b, first, last)
        return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    @Test func agreesWithThePairByPairComparison() {
        var agreedSame = 0
        var agreedDifferent = 0
        for seed: UInt64 in 1...400 {
            var rng = SeededRandom(seed: seed)
            var base = ChildMap()
            for _ in 0..<Int(rng.next() % 300) {
                base = base.setting(Self.key(rng.next()), to: .number(Double(rng.next() % 7)))
            }
            // A version sharing most of base's subtrees: a few sets, replacements and removals.
            var other = base
            for _ in 0..<Int(rng.next() % 6) {
                let k = Self.key(rng.next())
                other = rng.next() % 3 == 0 ? other.removing(k) : other.setting(k, to: .number(Double(rng.next() % 7)))
            }
            // Sometimes a copy built apart (no shared subtrees), equal or not.
            if rng.next() % 5 == 0 {
                other = ChildMap(sortedPairs: Array(other.map { (key: $0.key, value: $0.value) }))
            }
            for _ in 0..<8 {
                var first = Self.key(rng.next())
                var last = Self.key(rng.next())
                if ChildKey.compare(first, last) > 0 { swap(&first, &last) }
                let expected = Self.naive(base, other, first, last)
                let got = base.hasSamePairs(as: other, from: first, through: last, same: ==)
                #expect(got == expected, "seed \(seed), \(first)...\(last)")
                #expect(other.hasSamePairs(as: base, from: first, through: last, same: ==) == expected)
                if expected { agreedSame += 1 } else { agreedDifferent += 1 }
            }
        }
        #expect(agreedSame > 500 && agreedDifferent > 500, "both answers exercised")
    }

    @Test func emptyMapsAndRangesOutsideTheKeys() {
        let map = ChildMap(sortedPairs: [("b", .number(1)), ("d", .number(2))])
        #expect(ChildMap().hasSamePairs(as: ChildMap(), from: "a", through: "z", same: ==))
        #expect(!map.hasSamePairs(as: ChildMap(), from: "a", through: "z", same: ==))
        #expect(map.hasSamePairs(as: ChildMap(), from: "e", through: "z", same: ==), "no pair in range on either side")
        #expect(map.hasSamePairs(as: map.setting("x", to: .number(3)), from: "a", through: "d", same: ==))
        #expect(!map.hasSamePairs(as: map.setting("c", to: .number(3)), from: "a", through: "d", same: ==))
        #expect(!map.hasSamePairs(as: map.setting("d", to: .number(3)), from: "a", through: "d", same: ==))
    }

    /// Shared subtrees are skipped whole: comparing two versions of a large map that differ in
    /// one child calls `same` on O(log n) pairs, not on the range's thousands.
    @Test func sharedSubtreesAreNotWalked() {
        var map = ChildMap()
        for i in 0..<20_000 { map = map.setting(ChildKey("m\(100_000 + i)"), to: .number(Double(i))) }
        let updated = map.setting("m119999", to: .number(-1))
        var calls = 0
        let same = updated.hasSamePairs(as: map, from: "m100000", through: "m110000") { a, b in
            calls += 1
            return a == b
        }
        #expect(same)
        #expect(calls < 200, "\(calls) pairs compared for a range of 10,001 unchanged children")
        #expect(!updated.hasSamePairs(as: map, from: "m110000", through: "m119999", same: ==))
    }

    @Test func iteratorAfterAKeyStartsPastIt() {
        var rng = SeededRandom(seed: 9)
        var map = ChildMap()
        for _ in 0..<200 { map = map.setting(Self.key(rng.next()), to: .bool(true)) }
        for i: UInt64 in 0..<420 {
            let k = Self.key(i)
            var it = map.iterator(after: k)
            var got: [ChildKey] = []
            while let p = it.next() { got.append(p.key) }
            #expect(got == map.map(\.key).filter { ChildKey.compare($0, k) > 0 }, "after \(k)")
        }
    }
}
