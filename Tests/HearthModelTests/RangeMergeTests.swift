import Testing
@testable import HearthModel

/// Range merges against the vectors of firebase-ios-sdk `FRangeMergeTest.m`, and the
/// round trip a listen makes: a client's compound hash, the server's merges of the ranges
/// that differ, the client's data merged — equal to the server's.
@Suite struct RangeMergeTests {
    func node(_ json: String) throws -> Node { try Node(jsonText: json) }

    func merged(_ data: String, start: Path?, end: Path?, _ update: String) throws -> Node {
        RangeMerge(start: start, end: end, update: try node(update)).applied(to: try node(data))
    }

    @Test func smokeTest() throws {
        let result = try merged(
            #"{"bar":"bar-value","foo":{"a":{"deep-a-1":1,"deep-a-2":2},"b":"b","c":"c","d":"d"},"quu":"quu-value"}"#,
            start: "foo/a/deep-a-1", end: "foo/c",
            #"{"foo":{"a":{"deep-a-2":"new-a-2","deep-a-3":3},"b-2":"new-b","c":"new-c"}}"#)
        #expect(
            result
                == (try node(
                    #"{"bar":"bar-value","foo":{"a":{"deep-a-1":1,"deep-a-2":"new-a-2","deep-a-3":3},"b-2":"new-b","c":"new-c","d":"d"},"quu":"quu-value"}"#
                )))
    }

    static let three = #"{"bar":"bar-value","foo":"foo-value","quu":"quu-value"}"#

    @Test func startIsExclusive() throws {
        let result = try merged(Self.three, start: "bar", end: "foo", #"{"foo":"new-foo-value"}"#)
        #expect(result == (try node(#"{"bar":"bar-value","foo":"new-foo-value","quu":"quu-value"}"#)))
    }

    @Test func startIsExclusiveButIncludesChildren() throws {
        let result = try merged(
            Self.three, start: "bar", end: "foo", #"{"bar":{"bar-child":"bar-child-value"},"foo":"new-foo-value"}"#)
        #expect(
            result
                == (try node(#"{"bar":{"bar-child":"bar-child-value"},"foo":"new-foo-value","quu":"quu-value"}"#)))
    }

    @Test func endIsInclusive() throws {
        let result = try merged(Self.three, start: "bar", end: "foo", #"{"baz":"baz-value"}"#)
        #expect(result == (try node(#"{"bar":"bar-value","baz":"baz-value","quu":"quu-value"}"#)))
    }

    @Test func endIsInclusiveButExcludesChildren() throws {
        let data = #"{"bar":"bar-value","foo":{"foo-child":"foo-child-value"},"quu":"quu-value"}"#
        let result = try merged(data, start: "bar", end: "foo", #"{"baz":"baz-value"}"#)
        #expect(
            result
                == (try node(
                    #"{"bar":"bar-value","baz":"baz-value","foo":{"foo-child":"foo-child-value"},"quu":"quu-value"}"#)))
    }

    @Test func canUpdateLeafNode() throws {
        #expect(
            try merged(#""leaf-value""#, start: nil, end: "foo", #"{"bar":"bar-value"}"#)
                == node(#"{"bar":"bar-value"}"#))
    }

    @Test func canReplaceLeafNodeWithLeafNode() throws {
        #expect(
            try merged(#""leaf-value""#, start: nil, end: .root, #""new-leaf-value""#) == node(#""new-leaf-value""#))
    }

    @Test func leafsAreUpdatedWhenRangesIncludeDeeperPath() throws {
        let result = try merged(
            #"{"foo":{"bar":"bar-value"}}"#, start: "foo", end: "foo/bar/deep", #"{"foo":{"bar":"new-bar-value"}}"#)
        #expect(result == (try node(#"{"foo":{"bar":"new-bar-value"}}"#)))
    }

    @Test func leafsAreNotUpdatedWhenRangesIncludeDeeperPaths() throws {
        let result = try merged(
            #"{"foo":{"bar":"bar-value"}}"#, start: "foo/bar", end: "foo/bar/deep", #"{"foo":{"bar":"new-bar-value"}}"#)
        #expect(result == (try node(#"{"foo":{"bar":"bar-value"}}"#)))
    }

    @Test func updatingEntireRangeUpdatesEverything() throws {
        let update = #"{"foo":"foo-value","bar":{"child":"bar-child-value"}}"#
        #expect(try merged("null", start: nil, end: nil, update) == node(update))
    }

    @Test func updatingRangeWithUnboundedLeftPostWorks() throws {
        let result = try merged(
            #"{"bar":"bar-value","foo":"foo-value"}"#, start: nil, end: "bar", #"{"bar":"new-bar"}"#)
        #expect(result == (try node(#"{"bar":"new-bar","foo":"foo-value"}"#)))
    }

    @Test func updatingRangeWithRightPostChildOfLeftPostWorks() throws {
        let result = try merged(
            #"{"foo":{"a":"a","b":{"1":"1","2":"2"},"c":"c"}}"#, start: "foo", end: "foo/b/1",
            #"{"foo":{"a":"new-a","b":{"1":"new-1"}}}"#)
        #expect(result == (try node(#"{"foo":{"a":"new-a","b":{"1":"new-1","2":"2"},"c":"c"}}"#)))
    }

    @Test func updatingRangeWithRightPostChildOfLeftPostWorksWithIntegerKeys() throws {
        let result = try merged(
            #"{"foo":{"a":"a","b":{"1":"1","2":"2","10":"10"},"c":"c"}}"#, start: "foo", end: "foo/b/2",
            #"{"foo":{"a":"new-a","b":{"1":"new-1"}}}"#)
        #expect(result == (try node(#"{"foo":{"a":"new-a","b":{"1":"new-1","10":"10"},"c":"c"}}"#)))
    }

    @Test func updatingLeafIncludesPriority() throws {
        let result = try merged(
            Self.three, start: "bar", end: "foo", #"{"foo":{".value":"new-foo",".priority":"prio"}}"#)
        #expect(
            result
                == (try node(#"{"bar":"bar-value","foo":{".value":"new-foo",".priority":"prio"},"quu":"quu-value"}"#)))
    }

    @Test func updatingPriorityInChildrenNodeWorks() throws {
        let result = try merged(
            #"{"bar":"bar-value","foo":"foo-value"}"#, start: nil, end: "bar", #"{"bar":"new-bar",".priority":"prio"}"#)
        #expect(result == (try node(#"{"bar":"new-bar","foo":"foo-value",".priority":"prio"}"#)))
    }

    @Test func updatingPriorityOnInitiallyEmptyNodeDoesNotBreak() throws {
        let result = try merged("{}", start: nil, end: "foo", #"{".priority":"prio","foo":"foo-value"}"#)
        #expect(result == (try node(#"{"foo":"foo-value",".priority":"prio"}"#)))
    }

    @Test func priorityIsDeletedWhenIncludedInChildrenRange() throws {
        let result = try merged(
            #"{"bar":"bar-value","foo":"foo-value",".priority":"prio"}"#, start: nil, end: "bar", #"{"bar":"new-bar"}"#)
        #expect(result == (try node(#"{"bar":"new-bar","foo":"foo-value"}"#)))
    }

    @Test func priorityIsIncludedInOpenStart() throws {
        let result = try merged(
            #"{"foo":{"bar":"bar-value"}}"#, start: nil, end: "foo/bar", #"{".priority":"prio","baz":"baz"}"#)
        #expect(result == (try node(#"{"baz":"baz",".priority":"prio"}"#)))
    }

    @Test func priorityIsIncludedInOpenEnd() throws {
        let result = try merged(#""leaf-node""#, start: .root, end: nil, #"{".priority":"prio","foo":"bar"}"#)
        #expect(result == (try node(#"{"foo":"bar",".priority":"prio"}"#)))
    }

    @Test func rangeOfANodeKeepsOnlyItsLeavesInTheRange() throws {
        let n = try node(#"{"a":{"x":1,"y":2},"b":"s","c":{"d":3,".priority":"p"}}"#)
        #expect(n.range(after: "a/x", through: "b") == (try node(#"{"a":{"y":2},"b":"s"}"#)))
        #expect(n.range(after: nil, through: nil) == n)
        #expect(n.range(after: "c", through: nil) == (try node(#"{"c":{"d":3,".priority":"p"}}"#)))
        #expect(n.range(after: "c/.priority", through: nil) == (try node(#"{"c":{"d":3}}"#)))
        // A priority alone in a range cannot be written as a node.
        #expect(n.range(after: "c/-", through: "c/.priority") == nil)
    }

    // MARK: - The round trip, on random data

    /// Random trees, random changes, random splits: the client's compound hash, the merges of
    /// the ranges whose server hash differs (as `hearth serve` builds them), applied in turn,
    /// give exactly the server's data — and ranges the change did not touch are not sent.
    @Test(arguments: 0..<300)
    func mergedRangesGiveTheServersData(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9 &+ 1)
        let client = RandomTree.node(&rng, depth: 3)
        var server = client
        for _ in 0..<Int.random(in: 0...4, using: &rng) { server = RandomTree.change(server, &rng) }
        let limit = Int.random(in: 10...400, using: &rng)
        let hash =
            seed % 5 == 0
            ? CompoundHash(of: client) : CompoundHash(of: client) { path, length in length > limit && !path.isPriority }
        #expect(hash.isWellFormed)
        #expect(hash.rangeHashes(of: client) == hash.hashes)
        let ours = hash.rangeHashes(of: server)
        var merges: [RangeMerge] = []
        for i in ours.indices where ours[i] != hash.hashes[i] {
            let start = i > 0 ? hash.posts[i - 1] : nil
            let end = i < hash.posts.count ? hash.posts[i] : nil
            // A lone priority in a range: the server sends the whole data instead.
            guard let part = server.range(after: start, through: end) else { return }
            merges.append(RangeMerge(start: start, end: end, update: part))
        }
        let result = merges.reduce(client) { $1.applied(to: $0) }
        #expect(result == server, "seed \(seed): \(client.exportJSONString()) → \(server.exportJSONString())")
        if client == server { #expect(merges.isEmpty) }
    }
}

/// Small random trees over keys that exercise Firebase's key order (integers, keys before and
/// after `.priority`) and priorities.
enum RandomTree {
    static let keys = ["1", "2", "10", "-a", "!b", "a", "b", "zz"]

    static func leaf(_ rng: inout SeededRandom) -> Node {
        var n: Node
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: n = .number(Double(Int.random(in: -3...3, using: &rng)))
        case 1: n = .bool(Bool.random(using: &rng))
        default: n = .string(["x", "y", "\"q\\", ""][Int.random(in: 0..<4, using: &rng)])
        }
        if Int.random(in: 0..<6, using: &rng) == 0 { n = n.withPriority(.string("p")) }
        return n
    }

    static func node(_ rng: inout SeededRandom, depth: Int) -> Node {
        if depth == 0 || Int.random(in: 0..<4, using: &rng) == 0 { return leaf(&rng) }
        var pairs: [(key: ChildKey, value: Node)] = []
        for key in keys where Int.random(in: 0..<3, using: &rng) == 0 {
            pairs.append((ChildKey(key), node(&rng, depth: depth - 1)))
        }
        let priority: Priority? = Int.random(in: 0..<5, using: &rng) == 0 ? .number(2) : nil
        return Node(children: pairs, priority: priority)
    }

    /// One random change: a subtree set, deleted or replaced by a leaf, or a priority changed.
    static func change(_ n: Node, _ rng: inout SeededRandom) -> Node {
        var keys: [ChildKey] = []
        for _ in 0..<Int.random(in: 1...3, using: &rng) { keys.append(ChildKey(Self.keys.randomElement(using: &rng)!)) }
        let path = Path(keys: keys)
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return n.updating(path, with: .empty)
        case 1: return n.updating(path, with: leaf(&rng))
        case 2: return n.updating(path, with: node(&rng, depth: 2))
        default:
            let target = n.child(at: path)
            return n.updating(path, with: target.withPriority(target.priority == nil ? .string("n") : nil))
        }
    }
}
