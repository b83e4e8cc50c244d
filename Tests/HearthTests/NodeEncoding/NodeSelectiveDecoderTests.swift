@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// The selective decoder (``NodeCodec/decodeChildren(_:keeping:)``) the views' rebuild uses to
/// read a few children of a range chunk: exactly the children the full decoder gives, and a
/// typed error, never a crash, for malformed bytes.
@Suite struct NodeSelectiveDecoderTests {
    /// A children node with up to `n` random children (keys mixing integers, strings and
    /// Firebase's tricky keys: canonically equivalent, astral, integer-like).
    func children(_ rng: inout SeededRandom, _ n: Int) -> Node {
        var byKey: [ChildKey: Node] = [:]
        for i in 0..<n {
            let key =
                switch i % 3 {
                case 0: ChildKey("\(i * 7 - 20)")
                case 1: Gen.key(&rng)
                default: ChildKey("k\(i)-\(rng.int(0...9))é")
                }
            var value = Gen.node(&rng, depth: rng.int(0...3))
            if value.isEmpty { value = .string("v\(i)") }
            byKey[key] = value
        }
        return Node(children: byKey.map { (key: $0.key, value: $0.value) })
    }

    /// Random subsets of a node's keys, with keys it lacks: the kept children are the full
    /// decoder's, in key order.
    @Test func keptChildrenEqualTheFullDecode() throws {
        for seed: UInt64 in 1...300 {
            var rng = SeededRandom(seed: seed)
            let node = children(&rng, rng.int(1...40))
            let bytes = NodeCodec.encode(node)
            let full = try NodeCodec.decode(bytes)
            var keys = Set<ChildKey>()
            for (key, _) in node.children where rng.int(0...2) == 0 { keys.insert(key) }
            keys.insert(ChildKey("absent\(seed)"))
            keys.insert(ChildKey("\(rng.int(1000...2000))"))
            let kept = try NodeCodec.decodeChildren(bytes, keeping: keys)
            let want = full.children.filter { keys.contains($0.key) }
            #expect(kept.map(\.key) == want.map(\.key), "seed \(seed)")
            #expect(kept.map(\.value) == want.map(\.value), "seed \(seed)")
            #expect(Node(children: kept) == Node(children: want), "seed \(seed)")
        }
    }

    /// Skipping a node moves past exactly its encoding, whatever it holds.
    @Test func skipMovesPastExactlyOneNode() throws {
        for seed: UInt64 in 1...300 {
            var rng = SeededRandom(seed: seed)
            let node = Gen.node(&rng, depth: rng.int(0...5))
            let bytes = NodeCodec.encode(node) + [0xAB]
            var r = ByteReader(bytes)
            try NodeCodec.skip(from: &r, depth: 0)
            #expect(r.offset == bytes.count - 1, "seed \(seed)")
        }
    }

    @Test func theEmptyNodeHasNoChildrenAndOtherNodesAreRefused() throws {
        #expect(try NodeCodec.decodeChildren([0x00], keeping: ["a"]).isEmpty)
        for node: Node in [.string("x"), .number(1), Node(children: [("a", .bool(true))], priority: .number(1))] {
            #expect(throws: DecodeError.self) { try NodeCodec.decodeChildren(NodeCodec.encode(node), keeping: ["a"]) }
        }
        // Trailing bytes, an empty child and an empty key, in kept and skipped children alike.
        let good = NodeCodec.encode(Node(children: [("a", .bool(true)), ("b", .bool(false))]))
        #expect(throws: DecodeError.self) { try NodeCodec.decodeChildren(good + [0], keeping: ["a"]) }
        let emptyChild: [UInt8] = [0x07, 2, 1, 0x61, 0x02, 1, 0x62, 0x00]
        let emptyKey: [UInt8] = [0x07, 2, 1, 0x61, 0x02, 0, 0x02]
        for keys: Set<ChildKey> in [["a"], ["b"], []] {
            #expect(throws: DecodeError.self) { try NodeCodec.decodeChildren(emptyChild, keeping: keys) }
            #expect(throws: DecodeError.self) { try NodeCodec.decodeChildren(emptyKey, keeping: keys) }
        }
        // Kept children out of order.
        let unordered: [UInt8] = [0x07, 2, 1, 0x62, 0x02, 1, 0x61, 0x02]
        #expect(throws: DecodeError.self) { try NodeCodec.decodeChildren(unordered, keeping: ["a", "b"]) }
    }

    /// Every truncation and random byte damage of a chunk-like node: a `DecodeError` or a
    /// result, never a crash; and when the damaged bytes still decode in full, the selective
    /// decode agrees with it.
    @Test func damagedBytesGiveTypedErrors() throws {
        for seed: UInt64 in 1...60 {
            var rng = SeededRandom(seed: seed)
            let node = children(&rng, rng.int(1...12))
            let bytes = NodeCodec.encode(node)
            let keys = Set(node.children.map(\.key).filter { _ in rng.int(0...1) == 0 })
            for end in 0..<bytes.count {
                #expect(throws: DecodeError.self) { try NodeCodec.decodeChildren(Array(bytes[..<end]), keeping: keys) }
            }
            for _ in 0..<40 {
                var damaged = bytes
                damaged[rng.int(0...(bytes.count - 1))] = UInt8(truncatingIfNeeded: rng.int(0...255))
                let selective = try? NodeCodec.decodeChildren(damaged, keeping: keys)
                if let full = try? NodeCodec.decode(damaged), !full.isLeaf, full.priority == nil {
                    let want = full.children.filter { keys.contains($0.key) }
                    #expect(selective.map { Node(children: $0) } == Node(children: want), "seed \(seed)")
                }
            }
        }
    }

    /// Through a checkpoint reader: reads of some children of a node split into range chunks,
    /// and of locations below it, equal the full cache's — first from the chunks' bytes (kept
    /// located), again from the located chunks, and once the chunks are decoded whole.
    @Test func partialReadsOfRangeChunksMatchTheFullCache() throws {
        let dir = TempDir()
        var pairs: [(key: ChildKey, value: Node)] = []
        for i in 0..<3000 {
            let value = json(#"{"ts":\#(3000 - i),"text":"message \#(i) \#(String(repeating: "w", count: i % 90))"}"#)
            pairs.append((ChildKey(i % 4 == 0 ? "\(i)" : "m\(i)"), value))
        }
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(Node(children: pairs, priority: .string("p")), at: "chats/r/messages")
            try store.applyServerOverwrite(.string("beside"), at: "chats/s")
            try store.compact()
            try store.close()
        }
        let log = try Log.open(directory: dir.path)
        defer { try? log.close() }
        let checkpoint = try #require(log.checkpoint)
        let full = try CheckpointReader(checkpoint).fullCache()
        let parent: Path = "chats/r/messages"
        let reader = try CheckpointReader(checkpoint)
        #expect(reader.directory.chunks.count { $0.path == parent } >= 4)
        var rng = SeededRandom(seed: 7)
        for round in 0..<3 {
            if round == 2 { _ = try reader.fullCache() }  // every chunk decoded whole now
            for _ in 0..<20 {
                var keys = Set<ChildKey>()
                for _ in 0..<rng.int(1...60) {
                    let i = rng.int(0..<3100)
                    keys.insert(ChildKey(i % 4 == 0 ? "\(i)" : "m\(i)"))
                }
                let got = try reader.partialCache(forChildren: keys, of: parent).child(at: parent)
                let want = full.child(at: parent).children.filter { keys.contains($0.key) }
                #expect(got.children.filter { keys.contains($0.key) }.map(\.key) == want.map(\.key), "round \(round)")
                #expect(StoreState.children(keys, of: got) == Node(children: want), "round \(round)")
                let one = parent.child(rng.pick(Array(keys)))
                #expect(try reader.partialCache(for: one).child(at: one) == full.child(at: one), "\(one)")
            }
        }
        #expect(try reader.partialCache(for: parent).child(at: parent) == full.child(at: parent))
        #expect(try reader.partialCache(for: "chats/s").child(at: "chats/s") == .string("beside"))
    }

    /// The chunk index gives, for any location, exactly the chunks at it, below it and above
    /// it — a superset of those relevant to reading it or its children.
    @Test func theChunkIndexGivesTheChunksOnTheWayAndBelow() {
        let paths: [Path] = ["/", "a", "a/b", "a/b", "a/c", "a/b/d/e", "b", "ab", "a/bc"]
        let chunks = paths.enumerated().map { i, path in
            CheckpointFormat.Chunk(
                path: path, kind: i % 2 == 0 ? .whole : .range(first: "a", last: "z"), offset: 0, storedLength: 0,
                rawLength: 0, compressed: false, crc: 0)
        }
        let index = ChunkPathIndex(chunks)
        for target: Path in ["/", "a", "a/b", "a/b/d", "a/b/d/e/f", "a/bc", "b/x", "c", "ab"] {
            let want = chunks.indices.filter { chunks[$0].path.contains(target) || target.contains(chunks[$0].path) }
            #expect(index.candidates(for: target) == want, "\(target)")
            let relevant = chunks.indices.filter {
                chunks[$0].isRelevant(to: target) || chunks[$0].isRelevant(toChildren: ["b", "m"], of: target)
            }
            #expect(Set(relevant).isSubset(of: want), "\(target)")
        }
    }
}
