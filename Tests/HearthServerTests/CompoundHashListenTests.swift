import Hearth
import HearthRules
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// `hearth serve` answers a listen that carries a compound hash (`ch`) with range merges
/// (`rm`) of only the ranges whose hash differs.
@Suite struct CompoundHashListenTests {
    /// 200 children of about 40 bytes: big enough that the SDKs' split makes several ranges.
    static func big(changing changed: Set<Int> = []) -> Node {
        Node(
            children: (0..<200).map { i in
                (
                    ChildKey("k\(1000 + i)"),
                    Node.string((changed.contains(i) ? "new " : "old ") + String(repeating: "v", count: 30))
                )
            })
    }

    static func rangeMerges(_ messages: [(UInt64, ServerMessage)]) -> [(Path, [WireRangeMerge], Int?)] {
        messages.compactMap { if case let .rangeMerge(p, r, t) = $0.1 { (p, r, t) } else { nil } }
    }

    static func apply(_ ranges: [WireRangeMerge], to node: Node, at path: Path) throws -> Node {
        try ranges.reduce(node) { n, r in
            RangeMerge(start: r.start, end: r.end, update: try Node(json: r.data, at: path)).applied(to: n)
        }
    }

    @Test func onlyTheChangedRangeIsSent() throws {
        let cached = Self.big()
        let server = Self.big(changing: [150])
        var h = CoreHarness(data: Node(children: [(ChildKey("big"), server)]))
        _ = h.connect(1)
        let ch = CompoundHash(of: cached)
        #expect(ch.hashes.count > 5)
        let out = h.send(1, 1, .listen(path: "big", query: .default, tag: nil, hash: cached.hash, compoundHash: ch))
        let merges = Self.rangeMerges(out)
        try #require(merges.count == 1)
        #expect(merges[0].0 == "big" && merges[0].2 == nil)
        #expect(merges[0].1.count == 1, "one range changed")
        #expect(try Self.apply(merges[0].1, to: cached, at: "big") == server)
        let sent = out.map(\.1.text.utf8.count).reduce(0, +)
        #expect(sent * 5 < server.exportJSONString().utf8.count, "far less than the whole data")
        #expect(out.contains { if case .response(1, "ok", _) = $0.1 { true } else { false } })
        #expect(!out.contains { if case .set = $0.1 { true } else { false } })
    }

    @Test func unchangedDataSendsNothingAndNoHashSendsTheWhole() throws {
        let data = Self.big()
        var h = CoreHarness(data: Node(children: [(ChildKey("big"), data)]))
        _ = h.connect(1)
        let same = h.send(
            1, 1, .listen(path: "big", query: .default, tag: nil, hash: data.hash, compoundHash: CompoundHash(of: data))
        )
        #expect(same.count == 1, "only the ok")
        let none = h.send(1, 2, .listen(path: "big", query: .default, tag: nil, hash: "", compoundHash: nil))
        #expect(none.contains { if case .set = $0.1 { true } else { false } })
    }

    /// A query's listen is answered over the query's window, with its tag.
    @Test func taggedListensGetTaggedMerges() throws {
        let server = Self.big(changing: [3])
        var h = CoreHarness(data: Node(children: [(ChildKey("big"), server)]))
        _ = h.connect(1)
        let query = try QuerySpec.default.limitToFirst(100)
        let cached = query.window(of: Self.big()).node
        let out = h.send(
            1, 1, .listen(path: "big", query: query, tag: 7, hash: cached.hash, compoundHash: CompoundHash(of: cached)))
        let merges = Self.rangeMerges(out)
        try #require(merges.count == 1)
        #expect(merges[0].2 == 7)
        #expect(try Self.apply(merges[0].1, to: cached, at: "big") == query.window(of: server).node)
    }

    /// Rules come first: a listen the rules refuse learns nothing of the data, hash or not.
    @Test func rulesAreCheckedBeforeTheHashes() throws {
        let rules = #"{"rules":{".read":false}}"#
        var h = CoreHarness(
            data: Node(children: [(ChildKey("big"), Self.big(changing: [1]))]), emulator: false,
            policy: RulesAccessPolicy(rules: try RulesSet.parse(source: rules)))
        _ = h.connect(1)
        let cached = Self.big()
        let out = h.send(
            1, 1,
            .listen(path: "big", query: .default, tag: nil, hash: cached.hash, compoundHash: CompoundHash(of: cached)))
        #expect(out.count == 1)
        #expect(out.contains { if case .response(1, "permission_denied", _) = $0.1 { true } else { false } })
    }

    /// Hashes that match nothing (a client's own bug, or an attacker's) cost the whole data,
    /// never wrong data: merged, the client's data is the server's.
    @Test func hashesThatMatchNothingStillConverge() throws {
        let server = Self.big(changing: [5])
        var h = CoreHarness(data: Node(children: [(ChildKey("big"), server)]))
        _ = h.connect(1)
        let cached = Self.big()
        var ch = CompoundHash(of: cached)
        for i in ch.hashes.indices.dropLast() { ch.hashes[i] = "2jmj7l5rSw0yVb/vlWAYkK/YBwk=" }
        let out = h.send(1, 1, .listen(path: "big", query: .default, tag: nil, hash: "x", compoundHash: ch))
        var result = cached
        for m in out.map(\.1) {
            if case let .set(_, data, _) = m { result = try Node(json: data, at: "big") }
            if case let .rangeMerge(_, ranges, _) = m { result = try Self.apply(ranges, to: result, at: "big") }
        }
        #expect(result == server)
    }

    // MARK: - Random trees, random changes

    /// A random subtree over keys that exercise Firebase's key order and priorities, its
    /// strings long enough that a range merge can be smaller than the whole data.
    static func randomNode(_ rng: inout SeededRandom, depth: Int) -> Node {
        if depth == 0 || Int.random(in: 0..<4, using: &rng) == 0 {
            var leaf: Node
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: leaf = .number(Double(Int.random(in: -3...3, using: &rng)))
            case 1: leaf = .bool(Bool.random(using: &rng))
            default: leaf = .string(String(repeating: "vq\\\"", count: Int.random(in: 0...12, using: &rng)))
            }
            if Int.random(in: 0..<6, using: &rng) == 0 { leaf = leaf.withPriority(.string("p")) }
            return leaf
        }
        var pairs: [(key: ChildKey, value: Node)] = []
        for key in ["1", "2", "10", "-a", "!b", "a", "b", "zz"] where Int.random(in: 0..<3, using: &rng) == 0 {
            pairs.append((ChildKey(key), randomNode(&rng, depth: depth - 1)))
        }
        return Node(children: pairs, priority: Int.random(in: 0..<5, using: &rng) == 0 ? .number(2) : nil)
    }

    /// Random trees, random changes, random splits: whatever the server answers (`rm` or `d`),
    /// applied to the client's cache it gives exactly the server's data.
    @Test(arguments: 0..<60)
    func randomChangesConverge(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9 &+ 7)
        let cached = Node(
            children: (0..<Int.random(in: 1...120, using: &rng)).map { i in
                (ChildKey("k\(1000 + i)"), Self.randomNode(&rng, depth: 3))
            })
        var server = cached
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            let keys =
                [ChildKey("k\(Int.random(in: 990...1130, using: &rng))")]
                + (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                    ChildKey(["1", "a", "zz", "b"].randomElement(using: &rng)!)
                }
            let path = Path(keys: keys)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: server = server.updating(path, with: .empty)
            case 1: server = server.updating(path, with: Self.randomNode(&rng, depth: 0))
            case 2: server = server.updating(path, with: Self.randomNode(&rng, depth: 2))
            default:
                let target = server.child(at: path)
                server = server.updating(path, with: target.withPriority(target.priority == nil ? .string("n") : nil))
            }
        }
        let limit = Int.random(in: 20...600, using: &rng)
        let ch =
            seed % 4 == 0
            ? CompoundHash(of: cached) : CompoundHash(of: cached) { path, length in length > limit && !path.isPriority }
        var h = CoreHarness(data: Node(children: [(ChildKey("big"), server)]))
        _ = h.connect(1)
        let out = h.send(1, 1, .listen(path: "big", query: .default, tag: nil, hash: cached.hash, compoundHash: ch))
        var result = cached
        for m in out.map(\.1) {
            if case let .set(_, data, _) = m { result = try Node(json: data, at: "big") }
            if case let .rangeMerge(_, ranges, _) = m { result = try Self.apply(ranges, to: result, at: "big") }
        }
        #expect(result == server, "seed \(seed): \(cached.exportJSONString()) → \(server.exportJSONString())")
        if cached == server { #expect(out.count == 1, "only the ok") }
    }

    // MARK: - Malformed `ch`

    static func listen(_ ch: String) -> String {
        #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/big","h":"","ch":"# + ch + "}}}"
    }

    @Test(arguments: [
        #""nope""#, #"{"ps":[],"hs":"x"}"#, #"{"ps":["/a"],"hs":[""]}"#, #"{"ps":[1],"hs":["a",""]}"#,
        #"{"ps":["/b","/a"],"hs":["a","b",""]}"#, #"{"ps":["/a","/a"],"hs":["a","b",""]}"#,
        #"{"ps":["/a"],"hs":["a","b"]}"#, #"{"ps":["/a"],"hs":["0123456789012345678901234567890",""]}"#,
        #"{"ps":["/a/.priority/b"],"hs":["a",""]}"#, #"{"ps":["/a#"],"hs":["a",""]}"#,
    ])
    func malformedCompoundHashesAreRefused(ch: String) throws {
        do {
            _ = try ClientMessage.decode(Self.listen(ch))
            Issue.record("decoded \(ch)")
        } catch {
            #expect(!error.description.isEmpty)
        }
        var h = CoreHarness(data: Node(children: [(ChildKey("big"), Self.big())]))
        _ = h.connect(1)
        let out = h.frame(1, Self.listen(ch))
        #expect(out.closes == [ConnectionID(1)], "a malformed request is refused")
    }

    @Test func tooManyRangesAreIgnored() throws {
        let n = CompoundHash.maxRanges + 1
        let ps = (0..<n).map { "\"/k\($0 + 100_000)\"" }.joined(separator: ",")
        let hs = Array(repeating: "\"a\"", count: n).joined(separator: ",") + ",\"\""
        let message = try ClientMessage.decode(Self.listen(#"{"ps":["# + ps + #"],"hs":["# + hs + "]}"))
        guard case .request(_, .listen(_, _, _, _, let ch)) = message else { throw ClientRequestMismatch() }
        #expect(ch == nil, "answered with the whole data")
        let ok = try ClientMessage.decode(Self.listen(#"{"ps":["/a","/a/b"],"hs":["x","y",""]}"#))
        guard case .request(_, .listen(_, _, _, _, let parsed)) = ok else { throw ClientRequestMismatch() }
        #expect(parsed == CompoundHash(posts: ["a", "a/b"], hashes: ["x", "y", ""]))
        #expect(
            ClientMessage.request(
                number: 1, .listen(path: "big", query: .default, tag: nil, hash: "", compoundHash: parsed)) == ok)
    }

    struct ClientRequestMismatch: Error {}

    @Test func rangeMergePushesRoundTrip() throws {
        let m = ServerMessage.rangeMerge(
            path: "a",
            ranges: [
                WireRangeMerge(start: nil, end: "b", data: .object([])),
                WireRangeMerge(start: "b", end: nil, data: .string("x")),
            ], tag: 3)
        #expect(m.text == #"{"t":"d","d":{"a":"rm","b":{"p":"a","d":[{"e":"b","m":{}},{"s":"b","m":"x"}],"t":3}}}"#)
        #expect(try ServerMessage.decode(m.text) == m)
        #expect(throws: WireError.self) { try ServerMessage.decode(#"{"t":"d","d":{"a":"rm","b":{"p":"a","d":{}}}}"#) }
    }
}
