import HearthTesting
import Testing

@testable import HearthModel

/// `ChildMap.forEachPair`, the allocation-free walk the node encoder uses, visits exactly the
/// pairs the iterator yields, in the same (key) order, and stops at a thrown error.
@Suite struct ChildMapWalkTests {
    static func randomMap(_ rng: inout SplitMix64, size: Int) -> ChildMap {
        var map = ChildMap()
        for _ in 0..<size {
            // Integer and string keys, so both halves of Firebase's key order are exercised.
            let raw = rng.next() % UInt64(2 * size + 1)
            let key = ChildKey(rng.next() % 2 == 0 ? "\(raw)" : "k\(raw)")
            map = rng.next() % 5 == 0 ? map.removing(key) : map.setting(key, to: .number(Double(raw)))
        }
        return map
    }

    @Test func visitsTheIteratorsPairsInOrder() {
        var rng = SplitMix64(seed: 0x5741_4C4B)
        for size in [0, 1, 2, 3, 7, 64, 500, 2000] {
            for _ in 0..<(size > 100 ? 3 : 20) {
                let map = Self.randomMap(&rng, size: size)
                var walked: [(ChildKey, Node)] = []
                map.forEachPair { walked.append(($0, $1)) }
                let iterated = Array(map)
                #expect(walked.count == iterated.count)
                #expect(walked.map(\.0) == iterated.map(\.key))
                #expect(walked.map(\.1) == iterated.map(\.value))
            }
        }
    }

    struct Stop: Error {}

    @Test func stopsAtTheFirstError() {
        var rng = SplitMix64(seed: 0x53_544F50)
        let map = Self.randomMap(&rng, size: 300)
        let keys = Array(map).map(\.key)
        for stopAt in [0, 1, keys.count / 2, keys.count - 1] {
            var seen: [ChildKey] = []
            #expect(throws: Stop.self) {
                try map.forEachPair { key, _ in
                    if seen.count == stopAt { throw Stop() }
                    seen.append(key)
                }
            }
            #expect(seen == Array(keys.prefix(stopAt)))
        }
    }
}
