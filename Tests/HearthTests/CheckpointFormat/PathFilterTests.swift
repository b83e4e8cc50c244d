import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// The write chunks' path filter (FORMAT.md §7.1): a write at `p` enters `p` exactly and `p` and
/// each ancestor below the root as prefixes. The entries are computed in one pass over `p`;
/// they must be the hashes of each path on its own.
@Suite struct PathFilterTests {
    typealias Filter = CheckpointFormat.PathFilter

    /// The entries as the format states them, each prefix hashed as a path of its own.
    func expectedEntries(_ path: Path) -> Set<Filter.Entry> {
        var set: Set<Filter.Entry> = [Filter.Entry(.exact, path)]
        for n in stride(from: path.keys.count, to: 0, by: -1) {
            set.insert(Filter.Entry(.prefix, Path(keys: Array(path.keys.prefix(n)))))
        }
        return set
    }

    @Test func theEntriesAreThoseOfEachPathOnItsOwn() {
        var rng = SeededRandom(seed: 29)
        let keys: [ChildKey] = ["a", "b", "outbox", "m-Nx1", "é", "0", "10", "\u{1F600}"]
        for _ in 0..<300 {
            let path = Path(keys: (0..<rng.int(0...6)).map { _ in keys[rng.int(0...(keys.count - 1))] })
            var set = Set<Filter.Entry>()
            Filter.entries(forWriteAt: path, into: &set)
            #expect(set == expectedEntries(path), "\(path)")
        }
    }

    /// FNV-1a 64 of the kind byte then each key's UTF-8 bytes and 0xFF: two hashes worked out
    /// by hand, so that a change of the hash (which would make every stored filter lie) fails.
    @Test func theHashIsTheDocumentedFNV1a() {
        func fnv(_ bytes: [UInt8]) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
            return h
        }
        #expect(Filter.hash(.exact, "a/bc") == fnv([0x45, 0x61, 0xFF, 0x62, 0x63, 0xFF]))
        #expect(Filter.hash(.prefix, "a") == fnv([0x50, 0x61, 0xFF]))
        #expect(Filter.hash(.prefix, .root) == fnv([0x50]))
    }

    /// A filter built from a chunk's writes says "may contain" for every entry of them.
    @Test func aFilterHoldsEveryWritesEntries() {
        var set = Set<Filter.Entry>()
        let paths: [Path] = (0..<200).map { Path(keys: ["outbox", ChildKey("r\($0 % 7)"), ChildKey("m\($0)")]) }
        for p in paths { Filter.entries(forWriteAt: p, into: &set) }
        let filter = Filter(set)
        for p in paths {
            #expect(filter.mayContain(.exact, p))
            #expect(filter.mayContain(.prefix, p.parent ?? .root))
            #expect(filter.mayContain(.prefix, "outbox"))
        }
    }
}
