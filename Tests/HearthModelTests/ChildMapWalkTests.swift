import HearthTesting
import Testing

@testable import HearthModel

/// `ChildMap.forEachPair`, the allocation-free walk the node encoder uses, visits exactly the
/// pairs the iterator yields, in the same (key) order, and stops at a thrown error. Both keep
/// the tree nodes below the root unretained (ChildMap.swift): they see the map they started
/// from to the end, while the map they came from is dropped or changed in place.
@Suite struct ChildMapWalkTests {
    static func randomMap(_ rng: inout SeededRandom, size: Int) -> ChildMap {
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
        var rng = SeededRandom(seed: 0x5741_4C4B)
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

    @Test func iteratorsOutliveTheirMapAndItsInPlaceUpdates() {
        var rng = SeededRandom(seed: 0x4F55_544C)
        for size in [1, 2, 50, 1500] {
            var map = Self.randomMap(&rng, size: size)
            let pairs = Array(map)
            guard let middle = pairs.dropFirst(pairs.count / 2).first?.key else { continue }
            var forward = map.makeIterator()
            var backward = map.reversedPairs.makeIterator()
            var from = map.pairs(from: middle).makeIterator()
            var after = map.iterator(after: middle)
            // Half-way through, every key is rewritten in place and new ones inserted; then the
            // map is dropped altogether.
            var seen: [ChildKey] = []
            for _ in 0..<(pairs.count / 2) { seen.append(forward.next()!.key) }
            for (key, _) in pairs { map.updateValue(key) { $0 = .string("changed") } }
            map.insert(sortedPairs: (0..<100).map { (ChildKey("zz\(1000 + $0)"), Node.bool(true)) })
            map = ChildMap()
            while let (key, value) = forward.next() {
                seen.append(key)
                #expect(value != .string("changed"))
            }
            #expect(seen == pairs.map(\.key))
            #expect(Array(IteratorSequence(backward)).map(\.key) == pairs.reversed().map(\.key))
            #expect(
                Array(IteratorSequence(from)).map(\.key)
                    == pairs.map(\.key).filter { ChildKey.compare($0, middle) >= 0 })
            #expect(
                Array(IteratorSequence(after)).map(\.key)
                    == pairs.map(\.key).filter { ChildKey.compare($0, middle) > 0 })
            _ = (backward.next(), from.next(), after.next())
        }
    }

    @Test func aWalkSeesItsMapWhileTheBodyChangesItInPlace() {
        var rng = SeededRandom(seed: 0x424F_4459)
        var map = Self.randomMap(&rng, size: 800)
        let pairs = Array(map)
        var walked: [(ChildKey, Node)] = []
        let walking = map
        walking.forEachPair { key, value in
            walked.append((key, value))
            map.updateValue(key) { $0 = .string("changed") }
            if walked.count == 10 { map = ChildMap() }
        }
        #expect(walked.map(\.0) == pairs.map(\.key))
        #expect(walked.map(\.1) == pairs.map(\.value))
    }

    struct Stop: Error {}

    @Test func stopsAtTheFirstError() {
        var rng = SeededRandom(seed: 0x53_544F50)
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
