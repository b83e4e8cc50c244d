import Testing
@testable import HearthModel

/// The compound hash against the vectors of firebase-ios-sdk `FCompoundHashTest.m`.
@Suite struct CompoundHashTests {
    func sha(_ text: String) -> String { Base64.encode(SHA1.hash(Array(text.utf8))) }
    func node(_ json: String) throws -> Node { try Node(jsonText: json) }
    let neverSplit: (Path, Int) -> Bool = { _, _ in false }
    func split(at paths: [Path]) -> (Path, Int) -> Bool { { path, _ in paths.contains(path) } }

    @Test func emptyNodeYieldsEmptyHash() {
        let hash = CompoundHash(of: .empty)
        #expect(hash.posts == [])
        #expect(hash.hashes == [""])
    }

    @Test func compoundHashIsAlwaysFollowedByEmptyHash() throws {
        let hash = CompoundHash(of: try node(#"{"foo":"bar"}"#), split: neverSplit)
        #expect(hash.posts == ["foo"])
        #expect(hash.hashes == [sha(#"("foo":(string:"bar"))"#), ""])
    }

    @Test func compoundHashCanSplitAtPriority() throws {
        let n = try node(
            #"{"foo":{"!beforePriority":"before",".priority":"prio","afterPriority":"after"},"qux":"qux"}"#)
        let hash = CompoundHash(of: n, split: split(at: ["foo/.priority"]))
        #expect(hash.posts == ["foo/.priority", "qux"])
        #expect(
            hash.hashes == [
                sha(#"("foo":("!beforePriority":(string:"before"),".priority":(string:"prio")))"#),
                sha(#"("foo":("afterPriority":(string:"after")),"qux":(string:"qux"))"#), "",
            ])
    }

    @Test func hashesPriorityLeafNodes() throws {
        let hash = CompoundHash(of: try node(#"{"foo":{".value":"bar",".priority":"baz"}}"#), split: neverSplit)
        #expect(hash.posts == ["foo"])
        #expect(hash.hashes == [sha(#"("foo":(priority:string:"baz":string:"bar"))"#), ""])
    }

    @Test func hashingFollowsFirebaseKeySemantics() throws {
        let hash = CompoundHash(of: try node(#"{"1":"one","2":"two","10":"ten"}"#), split: split(at: ["2"]))
        #expect(hash.posts == ["2", "10"])
        #expect(hash.hashes == [sha(#"("1":(string:"one"),"2":(string:"two"))"#), sha(#"("10":(string:"ten"))"#), ""])
    }

    @Test func hashingOnChildBoundariesWorks() throws {
        let n = try node(#"{"bar":{"deep":"value"},"foo":{"other-deep":"value"}}"#)
        let hash = CompoundHash(of: n, split: split(at: ["bar/deep"]))
        #expect(hash.posts == ["bar/deep", "foo/other-deep"])
        #expect(
            hash.hashes == [
                sha(#"("bar":("deep":(string:"value")))"#), sha(#"("foo":("other-deep":(string:"value")))"#), "",
            ])
    }

    @Test func commasAreSetForNestedChildren() throws {
        let n = try node(#"{"bar":{"deep":"value"},"foo":{"other-deep":"value"}}"#)
        let hash = CompoundHash(of: n, split: neverSplit)
        #expect(hash.posts == ["foo/other-deep"])
        #expect(hash.hashes == [sha(#"("bar":("deep":(string:"value")),"foo":("other-deep":(string:"value")))"#), ""])
    }

    @Test func quotedStringsAndKeys() throws {
        // {"\"": "\\", "\"\\\"\\": "\"\\\"\\"} — keys and values with quotes and backslashes.
        let n = Node(children: [
            (ChildKey("\""), .string("\\")), (ChildKey("\"\\\"\\"), .string("\"\\\"\\")),
        ])
        let hash = CompoundHash(of: n, split: neverSplit)
        #expect(hash.posts == [Path(keys: [ChildKey("\"\\\"\\")])])
        #expect(hash.hashes == [sha(#"("\"":(string:"\\"),"\"\\\"\\":(string:"\"\\\"\\"))"#), ""])
    }

    @Test func numbersAndBooleans() throws {
        let hash = CompoundHash(of: try node(#"{"a":1,"b":true}"#), split: neverSplit)
        #expect(hash.hashes == [sha(#"("a":(number:3ff0000000000000),"b":(boolean:true))"#), ""])
    }

    @Test func defaultSplitHasSensibleAmountOfHashes() {
        func count(_ n: Int) -> Int {
            let pairs = (0..<n).map { (key: ChildKey(String($0)), value: Node.string("value")) }
            return CompoundHash(of: Node(children: pairs)).hashes.count
        }
        #expect(abs(count(500) - 15) <= 3)
        #expect(abs(count(5000) - 50) <= 5)
        #expect(abs(count(50000) - 150) <= 10)
    }

    /// Where Hearth differs from the SDKs: a priority on a node whose keys all sort before
    /// `.priority` is hashed (last), so that changing it changes a hash.
    @Test func priorityAfterEveryKeyIsHashed() throws {
        let a = try node(#"{"x":{"-a":1,".priority":"p"}}"#)
        let b = try node(#"{"x":{"-a":1,".priority":"q"}}"#)
        let ha = CompoundHash(of: a, split: neverSplit)
        #expect(ha.hashes == [sha(#"("x":("-a":(number:3ff0000000000000),".priority":(string:"p")))"#), ""])
        #expect(ha.posts == ["x/.priority"])
        #expect(ha.hashes != CompoundHash(of: b, split: neverSplit).hashes)
    }

    @Test func estimatedSizeFollowsTheSDKs() throws {
        #expect(Node.empty.estimatedJSONSize == 4)
        #expect(try node(#""abc""#).estimatedJSONSize == 5)
        // 1 + ("a" 1 + 4 + 8) + ("b" 1 + 4 + 4)
        #expect(try node(#"{"a":1,"b":true}"#).estimatedJSONSize == 23)
    }

    /// The server's side: hashing the same data over a client's ranges gives the client's
    /// hashes; a range whose data changed, and only it, hashes differently.
    @Test func rangeHashesMatchExactlyWhereTheDataMatches() throws {
        let n = try node(#"{"a":{"x":1,"y":2},"b":"s","c":{"d":{"e":true}},"f":{".value":3,".priority":1}}"#)
        let hash = CompoundHash(of: n, split: split(at: ["a/y", "c/d/e"]))
        #expect(hash.posts == ["a/y", "c/d/e", "f"])
        #expect(hash.rangeHashes(of: n) == hash.hashes)
        let changed = n.updating("c/d/e", with: .bool(false))
        let server = hash.rangeHashes(of: changed)
        #expect(server[0] == hash.hashes[0] && server[2] == hash.hashes[2] && server[3] == "")
        #expect(server[1] != hash.hashes[1])
        #expect(hash.rangeHashes(of: .empty) == ["", "", "", ""])
    }
}

/// The failable initializer that hostile input (a client's `ch`) goes through.
@Suite struct CompoundHashValidationTests {
    @Test func wellFormedPostsAndHashesAreTaken() {
        let hash = CompoundHash(validatingPosts: ["a", "a/b", "c"], hashes: ["x", "y", "z", ""])
        #expect(hash == CompoundHash(posts: ["a", "a/b", "c"], hashes: ["x", "y", "z", ""]))
        #expect(CompoundHash(validatingPosts: [], hashes: [""]) == CompoundHash(of: .empty))
    }

    @Test(
        arguments: [
            ([], []), (["a"], [""]), (["a"], ["x", "y"]), (["b", "a"], ["x", "y", ""]), (["a", "a"], ["x", "y", ""]),
            ([], ["x"]),
        ] as [([Path], [String])])
    func malformedPostsAndHashesAreRefused(posts: [Path], hashes: [String]) {
        #expect(CompoundHash(validatingPosts: posts, hashes: hashes) == nil)
    }

    @Test func moreThanMaxRangesIsRefused() {
        let posts = (0...CompoundHash.maxRanges).map { Path(keys: [ChildKey("k\(100_000 + $0)")]) }
        #expect(CompoundHash(validatingPosts: posts, hashes: Array(repeating: "x", count: posts.count) + [""]) == nil)
        let fewer = Array(posts.dropLast())
        #expect(CompoundHash(validatingPosts: fewer, hashes: Array(repeating: "x", count: fewer.count) + [""]) != nil)
    }
}
