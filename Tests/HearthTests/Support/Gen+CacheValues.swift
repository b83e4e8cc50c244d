@_spi(HearthInternals) @testable import Hearth
import HearthTesting

// Server-cache values for the lazy-vs-eager random models (ResidentCacheTests,
// ChunkReuseTests): empties, numbers, long repetitive strings (which compress, so chunks
// split) and children maps of padded strings, in proportions the caller sets.

extension Gen {
    /// A random cache value: 1 in `kinds` empty, 1 a number, 1 a string of up to
    /// `maxRepeats` × 4 bytes, the rest a children node of 1..<`maxChildren` strings.
    static func cacheValue(
        _ rng: inout SeededRandom, kinds: Int, maxRepeats: Int, maxChildren: Int
    ) -> Node {
        switch rng.int(0..<kinds) {
        case 0: return .empty
        case 1: return .number(Double(rng.int(0..<100)))
        case 2: return .string(String(repeating: "xyzw", count: rng.int(1..<maxRepeats)))
        default:
            var pairs: [(key: ChildKey, value: Node)] = []
            for i in 0..<rng.int(1..<maxChildren) {
                let text = "v\(rng.int(0..<1_000_000))" + String(repeating: "q", count: rng.int(0..<900))
                pairs.append((ChildKey("c\(i)"), .string(text)))
            }
            return Node(children: pairs)
        }
    }

    /// Chat room `room`: 200 messages `m1000`…`m1199` of ~160 bytes of JSON each (the store the
    /// resident-cache and chunk-reuse tests build holds 40 of them: dozens of chunks).
    static func chatRoom(_ room: Int) -> Node {
        var pairs: [(key: ChildKey, value: Node)] = []
        for m in 0..<200 {
            let text = "message \(m) in room \(room) " + String(repeating: "lorem ", count: 20)
            pairs.append((ChildKey("m\(1000 + m)"), json(#"{"from":"u\#(m % 17)","text":"\#(text)"}"#)))
        }
        return Node(children: pairs)
    }
}
