import HearthModel
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// `KeyOrderedMap` against a dictionary whose keys are sorted with `ChildKey`'s `<`, through
/// random inserts, updates and removals that split and join blocks, with copies that must not
/// see later writes.
@Suite struct KeyOrderedMapTests {
    /// A key from a space of about `spread` keys: integer-like, push-id-like, short words, or
    /// keys whose ranks tie or stop early (a shared eight-byte prefix; U+E000 and U+1F600, whose
    /// UTF-16 order differs from their bytes').
    static func key(_ rng: inout SeededRandom, spread: Int) -> ChildKey {
        let n = Int(rng.next() % UInt64(spread))
        switch n % 5 {
        case 0: return ChildKey("\(n - spread / 2)")
        case 1: return ChildKey("-N\(String(n, radix: 36))x")
        case 2: return ChildKey("k\(n * 7919 % 10007)")
        case 3: return ChildKey("-NkPq8zA\(n % 97)")
        default: return ChildKey(["ab\u{E000}", "ab\u{1F600}", "a\u{E9}"][n % 3] + "\(n / 3)")
        }
    }

    /// The first difference between the map and the model, or nil.
    func mismatch(_ map: KeyOrderedMap<Int>, _ model: [ChildKey: Int]) -> String? {
        if let broken = map.checkInvariants() { return broken }
        if map.count != model.count || map.isEmpty != model.isEmpty { return "count \(map.count) vs \(model.count)" }
        let sorted = model.keys.sorted()
        if map.keys != sorted { return "keys out of order or different" }
        if map.values != sorted.map({ model[$0]! }) { return "values" }
        if map.hasIntegerKeys != model.keys.contains(where: { $0.integerValue != nil }) { return "hasIntegerKeys" }
        return nil
    }

    @Test func randomOperationsMatchASortedDictionary() {
        for seed: UInt64 in 1...24 {
            var rng = SeededRandom(seed: seed)
            let spread = [10, 200, 3000][Int(seed % 3)]
            var map = KeyOrderedMap<Int>()
            var model: [ChildKey: Int] = [:]
            var snapshots: [(KeyOrderedMap<Int>, [ChildKey: Int])] = []
            for step in 0..<3000 {
                let key = Self.key(&rng, spread: spread)
                let roll = rng.next() % 10
                if roll < 5 {
                    map[key] = step
                    model[key] = step
                } else if roll < 7 {
                    // In place, inserting a default when absent.
                    map.modify(key, default: -1) { $0 += 2 }
                    model[key, default: -1] += 2
                } else {
                    #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "seed \(seed) step \(step)")
                }
                #expect(map[key] == model[key], "seed \(seed) step \(step)")
                if step % 97 == 0 { snapshots.append((map, model)) }
                if step % 250 == 0, let m = mismatch(map, model) {
                    Issue.record("seed \(seed) step \(step): \(m)")
                    return
                }
            }
            if let m = mismatch(map, model) { Issue.record("seed \(seed) at the end: \(m)") }
            // Copies kept their entries while the original was written.
            for (i, (copy, copyModel)) in snapshots.enumerated() {
                if let m = mismatch(copy, copyModel) {
                    Issue.record("seed \(seed) snapshot \(i): \(m)")
                    return
                }
            }
            // Removing everything in random order leaves an empty map with no block.
            for key in model.keys.shuffled(using: &rng) { map.removeValue(forKey: key) }
            #expect(map.isEmpty && map.blockCount == 0 && map.checkInvariants() == nil, "seed \(seed)")
        }
    }

    /// Keys written in ascending order — push ids — fill every block but the last.
    @Test func ascendingKeysKeepTheBlocksFull() {
        var map = KeyOrderedMap<Int>()
        let capacity = KeyOrderedMap<Int>.blockCapacity
        for i in 0..<(capacity * 10 + 3) {
            map[ChildKey("-N\(String(format: "%06d", i))")] = i
        }
        #expect(map.checkInvariants() == nil)
        #expect(map.blockCount == 11)
        #expect(map.values == Array(0..<(capacity * 10 + 3)))
    }

    /// Removals join a block left under a quarter full to a neighbour when both fit in one.
    @Test func removalsJoinSparseBlocks() {
        var map = KeyOrderedMap<Int>()
        let capacity = KeyOrderedMap<Int>.blockCapacity
        let keys = (0..<(capacity * 4)).map { ChildKey("k\(String(format: "%05d", $0))") }
        for (i, k) in keys.enumerated() { map[k] = i }
        #expect(map.blockCount == 4)
        // Empty the first two blocks but for one entry each. The first, left with one entry,
        // cannot join the full second; the second, once under a quarter full, joins the first.
        for k in keys[1..<capacity] + keys[(capacity + 1)..<(2 * capacity)] { map.removeValue(forKey: k) }
        #expect(map.checkInvariants() == nil)
        #expect(map.blockCount == 3)
        #expect(map.keys.prefix(2) == [keys[0], keys[capacity]])
        #expect(map.count == 2 * capacity + 2)
    }

    /// Equal entries compare and hash equal however they were split into blocks.
    @Test func equalityIgnoresTheBlocks() {
        let keys = (0..<500).map { ChildKey("k\(String(format: "%04d", $0))") }
        var ascending = KeyOrderedMap<Int>()
        for (i, k) in keys.enumerated() { ascending[k] = i }
        var descending = KeyOrderedMap<Int>()
        for (i, k) in keys.enumerated().reversed() { descending[k] = i }
        #expect(ascending.blockCount != descending.blockCount)
        #expect(ascending == descending)
        #expect(ascending.hashValue == descending.hashValue)
        descending[keys[250]] = -1
        #expect(ascending != descending)
    }
}
