import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// `PathTrie` against a plain dictionary with linear scans.
@Suite struct PathTrieTests {
    static func path(_ rng: inout SeededRandom) -> Path { SmallWorld.path(&rng, maxDepth: 4) }

    /// The first difference between the trie and the dictionary model, or nil.
    func mismatch(_ trie: PathTrie<Int>, _ model: [Path: Int], _ probes: [Path]) -> String? {
        if trie.count != model.count { return "count \(trie.count) vs \(model.count)" }
        if trie.isEmpty != model.isEmpty { return "isEmpty" }
        let sorted = model.sorted { $0.key < $1.key }
        let entries = trie.entries
        if entries.map(\.path) != sorted.map(\.key) || entries.map(\.value) != sorted.map(\.value) {
            return "entries \(entries.map(\.path)) vs \(sorted.map(\.key))"
        }
        for p in probes {
            if trie.value(at: p) != model[p] { return "value at \(p)" }
            // Nearest at or above: the deepest model key that contains p.
            let nearest = model.filter { $0.key.contains(p) }.max { $0.key.depth < $1.key.depth }
            let got = trie.nearestAtOrAbove(p)
            if got?.path != nearest?.key || got?.value != nearest?.value {
                return "nearest to \(p): \(String(describing: got))"
            }
            let below = model.keys.contains { p.contains($0) && $0 != p }
            if trie.hasEntries(below: p) != below { return "hasEntries(below: \(p))" }
        }
        // Emptied branches are pruned: the trie equals one built afresh from the entries.
        var fresh = PathTrie<Int>()
        for (p, v) in model { fresh.set(p, v) }
        if trie != fresh { return "structure differs from a fresh trie with the same entries" }
        return nil
    }

    @Test func randomOperationsMatchADictionary() {
        for seed: UInt64 in 1...100 {
            var rng = SeededRandom(seed: seed)
            var trie = PathTrie<Int>()
            var model: [Path: Int] = [:]
            for step in 0..<40 {
                let p = Self.path(&rng)
                switch rng.int(0..<10) {
                case 0...4:
                    let v = rng.int(0...100)
                    trie.set(p, v)
                    model[p] = v
                case 5, 6:
                    trie.set(p, nil)
                    model[p] = nil
                case 7:
                    // Remove an existing one, to exercise pruning.
                    if let k = model.keys.sorted().randomElement(using: &rng) {
                        trie.set(k, nil)
                        model[k] = nil
                    }
                default:
                    trie.removeEntries(below: p)
                    model = model.filter { !(p.contains($0.key) && $0.key != p) }
                }
                let probes = (0..<6).map { _ in Self.path(&rng) } + Array(model.keys)
                if let m = mismatch(trie, model, probes) {
                    Issue.record("seed \(seed) step \(step): \(m)")
                    break
                }
            }
        }
    }

    @Test func directedCases() {
        var t = PathTrie<Int>()
        #expect(t.isEmpty && t.count == 0 && t.entries.isEmpty)
        #expect(t.nearestAtOrAbove("a/b") == nil)
        t.set(.root, 1)
        t.set("a/b", 2)
        t.set("a/\u{E9}", 3)
        t.set("a/e\u{301}", 4)  // canonically equivalent, but a different key
        #expect(t.count == 4)
        #expect(t.value(at: "a/\u{E9}") == 3 && t.value(at: "a/e\u{301}") == 4)
        #expect(t.nearestAtOrAbove("a/b/c")?.path == "a/b")
        #expect(t.nearestAtOrAbove("a/c")?.path == .root)
        #expect(t.hasEntries(below: "a") && !t.hasEntries(below: "a/b"))
        t.removeEntries(below: "a")
        #expect(t.count == 1 && t.value(at: .root) == 1)
        t.set("x/y/z", 5)
        t.set("x/y/z", nil)
        #expect(!t.hasEntries(below: .root))
        t.set(.root, nil)
        #expect(t.isEmpty)
        #expect(t == PathTrie<Int>())
    }
}
