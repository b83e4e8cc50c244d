import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog
import HearthTesting

/// Checks what a decoder may never produce: a broken child map (order, balance, empty
/// children), an empty key, a non-finite number or priority. Returns the first problem.
func nodeProblem(_ node: Node, at path: String = "/") -> String? {
    if let leaf = node.leafValue {
        switch leaf {
        case .number(let n) where !n.isFinite: return "non-finite number at \(path)"
        case .serverValue(.increment(let n)) where !n.isFinite: return "non-finite increment at \(path)"
        default: break
        }
    }
    if case .number(let p)? = node.priority, !p.isFinite { return "non-finite priority at \(path)" }
    if node.isEmpty, node.priority != nil { return "priority on empty at \(path)" }
    if let e = node.children.checkInvariants() { return "child map at \(path): \(e)" }
    for (key, child) in node.children {
        if key.string.isEmpty { return "empty key under \(path)" }
        if let e = nodeProblem(child, at: path + "/" + key.string) { return e }
    }
    return nil
}

@Suite struct NodeCodecTests {
    // MARK: Encoding up to a limit (a checkpoint's node that fits in a chunk)

    /// `encode(_:upTo:)` gives the whole encoding when it is at most the limit and nil when it
    /// is longer — at every limit around the encoding's own length and at random ones — and
    /// `encodedSize` that length, for
    /// nodes nested four deep with short and long strings and priorities (where a string or a
    /// last number ends past the limit with no node after it to notice).
    @Test func anEncodingUpToALimitIsTheWholeOrNothing() {
        var rng = SeededRandom(seed: 0x5550_544F)
        func node(_ depth: Int) -> Node {
            if depth >= 4 || rng.next() % 10 < 3 {
                let priority: Priority? = rng.next() % 4 == 0 ? .string("p") : nil
                switch rng.next() % 3 {
                case 0: return Node(.number(Double(rng.next() % 1000)), priority: priority)
                case 1: return Node(.string(String(repeating: "x", count: Int(rng.next() % 300))), priority: priority)
                default: return Node(.bool(true), priority: priority)
                }
            }
            let pairs = (0..<Int(1 + rng.next() % 8)).map { (key: ChildKey("k\($0)"), value: node(depth + 1)) }
            return Node(children: pairs, priority: rng.next() % 4 == 0 ? .number(2) : nil)
        }
        for _ in 0..<400 {
            let n = node(0)
            let whole = NodeCodec.encode(n)
            #expect(NodeCodec.encodedSize(n) == whole.count)
            let limits = [
                0, 1, whole.count - 9, whole.count - 1, whole.count, whole.count + 1,
                Int(rng.next() % UInt64(whole.count + 1)),
            ]
            for limit in limits where limit >= 0 {
                let got = NodeCodec.encode(n, upTo: limit)
                #expect((got != nil) == (whole.count <= limit), "limit \(limit) of \(whole.count)")
                if let got { #expect(got == whole, "limit \(limit)") }
            }
        }
    }

    // MARK: Non-canonical integers (found by the sync simulator, seed 1)

    /// `LeafValue.integer` is public, so `Node(.integer(2))` — an integer a `Double` holds,
    /// which the canonical form (``LeafValue/integer(exactly:)``) keeps as `.number(2)` — can
    /// reach a commit. The encoder wrote it as tag 0x08, which the decoder refuses for
    /// |value| ≤ 2^53 ("must be encoded as a number"): the commit succeeded and the store
    /// then failed to reopen ("passed its checksum but its events cannot be decoded").
    /// The encoder now writes the canonical form.
    @Test func smallIntegerLeafEncodesAsNumber() throws {
        for i: Int64 in [0, 2, -7, 1 << 53, -(1 << 53)] {
            var w = ByteWriter()
            NodeCodec.encode(Node(.integer(i)), into: &w)
            let decoded = try NodeCodec.decode(w.bytes)
            #expect(decoded == Node(.integer(exactly: i)))
            #expect(NodeCodec.encodedSize(Node(.integer(i))) == w.bytes.count)
        }
        var w = ByteWriter()
        NodeCodec.encode(Node(.integer(1 << 60)), into: &w)
        #expect(try NodeCodec.decode(w.bytes) == Node(.integer(1 << 60)))
    }

    /// The same through a store: a pending write holding a small `.integer` survives a reopen.
    @Test func storeWithSmallIntegerWriteReopens() throws {
        let fs = SimulatedFileSystem(seed: 1)
        var o = Store.Options()
        o.fileSystem = fs
        o.backgroundMaintenance = false
        let store = try Store.open(directory: "/db", options: o)
        try store.saveWrite(.set(Node(.integer(2))), at: "a/y")
        try store.close()
        let reopened = try Store.open(directory: "/db", options: o)
        #expect(try reopened.value(at: "a/y") == Node(.number(2)))
        #expect(reopened.pendingWrites().count == 1)
        try reopened.close()
    }

    // MARK: Round trips

    @Test func randomNodesRoundTripExactly() throws {
        for seed: UInt64 in 1...400 {
            var rng = SeededRandom(seed: seed)
            let node = Gen.node(&rng, depth: rng.int(0...6))
            let bytes = NodeCodec.encode(node)
            let decoded = try NodeCodec.decode(bytes)
            #expect(decoded == node, "seed \(seed)")
            #expect(decoded.exportJSONString() == node.exportJSONString(), "seed \(seed)")
            // Bit-exact numbers (-0.0 stays -0.0) and byte-identical re-encoding.
            #expect(NodeCodec.encode(decoded) == bytes, "seed \(seed)")
        }
    }

    /// Siblings' children share keys, which the decoder reuses once a node has made enough
    /// (`RecentKeys`): keys that differ only past their eighth byte, only in length, in
    /// UTF-8 beyond ASCII, or as integer keys ("7", "07", "-0") each come back as themselves,
    /// with their integer value, among thousands of lookups of a 64-slot cache.
    @Test func keysSharedAcrossSiblingsDecodeExactly() throws {
        var pool = [
            "a", "ab", "abc", "author", "text", "ts", "7", "07", "-0", "0", "-7", "2147483647", "2147483648",
            "abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmnopq",
            "é", "e\u{301}", "日本", "🎉", "café", "cafe",
        ]
        pool += (0..<60).map { "k\($0)" }
        var rng = SeededRandom(seed: 3401)
        var siblings: [(key: ChildKey, value: Node)] = []
        for i in 0..<400 {
            var children: [(key: ChildKey, value: Node)] = []
            for key in pool.shuffled(using: &rng).prefix(Int(rng.next() % 12) + 1) {
                children.append((ChildKey(key), .number(Double(rng.next() % 1000))))
            }
            siblings.append((ChildKey("m\(i)"), Node(children: children)))
        }
        let node = Node(children: siblings)
        let decoded = try NodeCodec.decode(NodeCodec.encode(node))
        #expect(decoded == node)
        #expect(NodeCodec.encode(decoded) == NodeCodec.encode(node))
        for (_, message) in decoded.children {
            for (key, _) in message.children {
                #expect(pool.contains { Array($0.utf8) == Array(key.string.utf8) }, "\(key)")
                #expect(key.integerValue == ChildKey(key.string).integerValue, "\(key)")
            }
        }
    }

    @Test func canonicallyEquivalentKeysStayDistinct() throws {
        // Precomposed é and e + combining acute are different Firebase keys; so are Å (U+00C5),
        // Ångström (U+212B) and A + ring. All five must survive as separate children.
        let keys = ["\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}"]
        let node = Node(children: keys.enumerated().map { (ChildKey($0.element), Node.number(Double($0.offset))) })
        #expect(node.childCount == 5)
        let decoded = try NodeCodec.decode(NodeCodec.encode(node))
        #expect(decoded.childCount == 5)
        for (i, k) in keys.enumerated() {
            #expect(decoded.child(ChildKey(k)) == .number(Double(i)))
            // Exact bytes of the key survive.
            #expect(decoded.children.contains { Array($0.key.string.utf8) == Array(k.utf8) })
        }
        // Canonically equivalent *string values* also stay exact.
        let s = try NodeCodec.decode(NodeCodec.encode(.string("e\u{301}")))
        #expect(
            Array(s.leafValue.map { if case .string(let v) = $0 { v } else { "" } }!.utf8) == Array("e\u{301}".utf8))
        #expect(s != .string("\u{E9}"))
    }

    @Test func everyLeafKindAndPriorityEncodeAsDocumented() throws {
        // Spot-check the documented byte layout so a format change cannot slip through.
        #expect(NodeCodec.encode(.empty) == [0x00])
        #expect(NodeCodec.encode(.bool(false)) == [0x01])
        #expect(NodeCodec.encode(.bool(true)) == [0x02])
        #expect(NodeCodec.encode(.number(1)) == [0x03, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(NodeCodec.encode(.string("é")) == [0x04, 2, 0xC3, 0xA9])
        #expect(NodeCodec.encode(Node(.serverValue(.timestamp))) == [0x05])
        #expect(NodeCodec.encode(Node(.serverValue(.timestamp), priority: .string("p"))) == [0x45, 0x04, 1, 0x70])
        #expect(
            NodeCodec.encode(Node(children: [("a", .bool(true))], priority: .number(0)))
                == [0x47, 1, 1, 0x61, 0x02, 0x03, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(
            try NodeCodec.decode([0x46, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0x04, 0])
                == Node(.serverValue(.increment(1)), priority: .string("")))
    }

    @Test func nestingUpToMaxDepthDecodes() throws {
        // A chain of maxDepth children nodes with a leaf at depth maxDepth decodes; one more
        // level is rejected.
        func chain(_ levels: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for _ in 0..<levels { bytes += [0x07, 1, 1, 0x61] }
            return bytes + [0x02]
        }
        let ok = try NodeCodec.decode(chain(NodeCodec.maxDepth))
        #expect(ok.child(at: Path(keys: Array(repeating: "a", count: NodeCodec.maxDepth))) == .bool(true))
        #expect(throws: DecodeError.self) { try NodeCodec.decode(chain(NodeCodec.maxDepth + 1)) }
        // Hostile: a million levels must be refused without exhausting the stack.
        #expect(throws: DecodeError.self) { try NodeCodec.decode(chain(1_000_000)) }
    }

    // MARK: Malformed input

    @Test func everyTruncationIsRejected() {
        for seed: UInt64 in 1...50 {
            var rng = SeededRandom(seed: seed)
            let bytes = NodeCodec.encode(Gen.node(&rng, depth: 3))
            // The encoding is prefix-free: no proper prefix is a whole node.
            for n in 0..<bytes.count {
                if let node = try? NodeCodec.decode(Array(bytes[..<n])) {
                    Issue.record("seed \(seed): prefix \(n) of \(bytes.count) decoded as \(node)")
                }
            }
            // …and nothing may follow a whole node.
            #expect(throws: DecodeError.self, "seed \(seed)") { try NodeCodec.decode(bytes + [0x00]) }
        }
    }

    @Test func bitFlipsYieldErrorOrValidNode() {
        var accepted = 0, rejected = 0
        for seed: UInt64 in 1...150 {
            var rng = SeededRandom(seed: seed)
            let bytes = NodeCodec.encode(Gen.node(&rng, depth: 4))
            for _ in 0..<20 {
                var flipped = bytes
                let i = rng.int(0..<flipped.count)
                flipped[i] ^= UInt8(1) << UInt8(rng.int(0..<8))
                if rng.chance(0.3) { flipped[rng.int(0..<flipped.count)] = UInt8(truncatingIfNeeded: rng.next()) }
                do {
                    let node = try NodeCodec.decode(flipped)
                    accepted += 1
                    #expect(nodeProblem(node) == nil, "seed \(seed): \(nodeProblem(node) ?? "")")
                    // Whatever decodes is a real node: it re-encodes and decodes to itself.
                    #expect((try? NodeCodec.decode(NodeCodec.encode(node))) == node, "seed \(seed)")
                } catch {
                    rejected += 1
                    #expect(error.offset >= 0 && error.offset <= flipped.count, "seed \(seed): \(error)")
                }
            }
        }
        // Both outcomes occur (numbers and strings absorb most flips; tags and lengths don't).
        #expect(accepted > 0 && rejected > 0)
    }

    /// Hostile inputs, each of which must be a DecodeError (and quickly, without allocating
    /// in proportion to a claimed count).
    static let hostile: [(String, [UInt8])] = [
        ("empty input", []),
        ("unknown tag", [0x08]),
        ("unknown tag with high bit", [0x82]),
        ("priority flag on empty", [0x40]),
        ("unknown priority tag", [0x42, 0x05]),
        ("priority tag 0 (empty)", [0x42, 0x00]),
        ("truncated number", [0x03, 0, 0, 0]),
        ("huge children count", [0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
        ("children count beyond input", [0x07, 0x05, 1, 0x61, 0x02]),
        ("varint longer than 10 bytes", [0x07] + Array(repeating: 0x80, count: 11) + [0x01]),
        ("varint overflowing 64 bits", [0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]),
        ("huge string length", [0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x61]),
        ("string length one beyond input", [0x04, 0x03, 0x61, 0x62]),
        ("empty children node", [0x07, 0x00]),
        ("empty children node with priority", [0x47, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0]),
        ("unsorted keys", [0x07, 2, 1, 0x62, 0x02, 1, 0x61, 0x02]),
        ("third key before the second", [0x07, 3, 1, 0x61, 0x02, 1, 0x63, 0x02, 1, 0x62, 0x02]),
        ("integer keys after string keys", [0x07, 2, 1, 0x61, 0x02, 1, 0x31, 0x02]),
        ("\"07\" before \"7\"", [0x07, 2, 2, 0x30, 0x37, 0x02, 1, 0x37, 0x02]),
        ("duplicate keys", [0x07, 2, 1, 0x61, 0x02, 1, 0x61, 0x01]),
        ("empty child", [0x07, 1, 1, 0x61, 0x00]),
        ("NaN number", [0x03, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F]),
        ("+infinity number", [0x03, 0, 0, 0, 0, 0, 0, 0xF0, 0x7F]),
        ("-infinity number", [0x03, 0, 0, 0, 0, 0, 0, 0xF0, 0xFF]),
        ("NaN increment", [0x06, 1, 0, 0, 0, 0, 0, 0xF8, 0x7F]),
        ("infinite priority", [0x42, 0x03, 0, 0, 0, 0, 0, 0, 0xF0, 0x7F]),
        ("invalid UTF-8 in string", [0x04, 1, 0xFF]),
        ("overlong UTF-8 in string", [0x04, 2, 0xC0, 0x80]),
        ("UTF-16 surrogate in UTF-8", [0x04, 3, 0xED, 0xA0, 0x80]),
        ("truncated UTF-8 sequence", [0x04, 1, 0xC3]),
        ("invalid UTF-8 in key", [0x07, 1, 1, 0xFE, 0x02]),
        ("invalid UTF-8 in priority", [0x42, 0x04, 1, 0x80]),
        ("empty key", [0x07, 1, 0, 0x02]),
        ("trailing bytes", [0x02, 0x02]),
    ]

    @Test(arguments: hostile.indices)
    func hostileInputIsRejected(_ i: Int) {
        let (name, bytes) = Self.hostile[i]
        #expect(throws: DecodeError.self, "\(name)") { try NodeCodec.decode(bytes) }
    }

    @Test func errorsCarryTheOffendingOffset() {
        do {
            _ = try NodeCodec.decode([0x07, 2, 1, 0x62, 0x02, 1, 0x61, 0x02])
            Issue.record("unsorted keys accepted")
        } catch {
            #expect(error.offset == 5)  // where the second key starts
        }
        do {
            _ = try NodeCodec.decode([0x07, 1, 1, 0x61, 0x09])
            Issue.record("unknown tag accepted")
        } catch {
            #expect(error.offset == 4)
        }
    }
}
