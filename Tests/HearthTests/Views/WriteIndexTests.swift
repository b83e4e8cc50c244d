import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// The write tree's path index (``WriteIndex``) and the overlay's one-descent write
/// (``PathTrie/writeRootMost(_:fold:otherwise:)``) against plain models.
@Suite struct WriteIndexTests {
    /// Random adds and removes of paths (a multiset: a path may be indexed by several writes)
    /// against a counting dictionary: `overlaps` is "some indexed path at, above or below".
    @Test func randomOperationsMatchACountingModel() {
        for seed: UInt64 in 1...100 {
            var rng = SeededRandom(seed: seed)
            var index = WriteIndex()
            var model: [Path: Int] = [:]
            for step in 0..<300 {
                let p = SmallWorld.path(&rng, maxDepth: 4)
                let indexed = model.filter { $0.value > 0 }.map(\.key)
                if !indexed.isEmpty && rng.next() % 3 == 0 {
                    let q = indexed[Int(rng.next() % UInt64(indexed.count))]
                    index.remove(q)
                    model[q]! -= 1
                } else {
                    index.add(p)
                    model[p, default: 0] += 1
                }
                let live = model.filter { $0.value > 0 }.map(\.key)
                for probe in [p, SmallWorld.path(&rng, maxDepth: 4), .root] {
                    let expected = live.contains { $0.contains(probe) || probe.contains($0) }
                    #expect(index.overlaps(probe) == expected, "seed \(seed) step \(step): overlaps(\(probe))")
                }
            }
            // Emptied levels are dropped: with every path removed, the index is a fresh one.
            for (p, n) in model { for _ in 0..<n { index.remove(p) } }
            #expect(index == WriteIndex(), "seed \(seed): an emptied index holds no levels")
        }
    }

    /// In-place `addWrite` (one descent) builds the same overlay as the functional
    /// `addingWrite` (root-most value looked up, then set), write after write.
    @Test func addWriteInPlaceEqualsTheFunctionalForm() {
        for seed: UInt64 in 1...200 {
            var rng = SeededRandom(seed: seed)
            var inPlace = CompoundWrite.empty
            var functional = CompoundWrite.empty
            for step in 0..<40 {
                let path = SmallWorld.path(&rng, maxDepth: 4)
                let node = SmallWorld.node(&rng)
                // A copy held elsewhere must not see the in-place write.
                let shared = inPlace
                let sharedBefore = functional
                inPlace.addWrite(path, node)
                functional = functional.addingWrite(path, node)
                #expect(inPlace.tree == functional.tree, "seed \(seed) step \(step): write at \(path)")
                #expect(shared.tree == sharedBefore.tree, "seed \(seed) step \(step): a copy changed")
                if rng.next() % 5 == 0 {
                    let removed = SmallWorld.path(&rng, maxDepth: 2)
                    inPlace.removeWrite(removed)
                    functional = functional.removingWrite(removed)
                }
            }
        }
    }
}
