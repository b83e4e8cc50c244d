import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

@Suite struct ValuesTests {
    /// The node a value denotes at the root (throws on invalid values).
    func node(_ v: DatabaseValue, at path: Path = .root) throws(DatabaseError) -> Node {
        try HearthDatabase.node(from: v, at: path)
    }

    func json(_ text: String) throws -> Node { try Node(jsonText: text) }

    @Test func literalsBuildTheExpectedCases() throws {
        let v: DatabaseValue = ["name": "Ada", "score": 3, "ratio": 0.5, "ok": true, "none": nil, "tags": ["a", "b"]]
        #expect(
            v
                == .object([
                    "name": .string("Ada"), "score": .int(3), "ratio": .double(0.5), "ok": .bool(true), "none": .null,
                    "tags": .array([.string("a"), .string("b")]),
                ]))
        #expect(v["name"] == "Ada")
        #expect(v["tags"]?["1"] == "b")
        #expect(v["score"]?.int64Value == 3)
        #expect(v["ratio"]?.doubleValue == 0.5)
    }

    @Test func literalToNodeAndBack() throws {
        let v: DatabaseValue = [
            "name": "Ada", "score": 3, "ratio": 0.5, "ok": true, "tags": ["a", "b"], "big": .int(1 << 60),
        ]
        let n = try node(v)
        #expect(
            n
                == (try json(
                    #"{"name":"Ada","score":3,"ratio":0.5,"ok":true,"tags":{"0":"a","1":"b"}, "big": 1152921504606846976}"#
                )))
        #expect(n.child(ChildKey("big")).leafValue == .integer(1 << 60))
        #expect(DatabaseValue(node: n) == v)
    }

    @Test func nullsAndEmptiesDisappear() throws {
        #expect(try node(nil).isEmpty)
        #expect(try node([]).isEmpty)
        #expect(try node([:]).isEmpty)
        #expect(try node(["a": nil, "b": [:]]).isEmpty)
        #expect(try node(["a": nil, "b": 1]) == (try json(#"{"b":1}"#)))
        #expect(DatabaseValue(node: .empty) == .null)
    }

    @Test func numbersReadBackAsIntWhenIntegral() throws {
        #expect(DatabaseValue(node: Node(.number(3))) == .int(3))
        #expect(DatabaseValue(node: Node(.number(-0.0))) == .int(0))
        #expect(DatabaseValue(node: Node(.number(2.5))) == .double(2.5))
        #expect(DatabaseValue(node: Node(.number(1e300))) == .double(1e300))
        #expect(DatabaseValue(node: Node(.number(9223372036854775808.0))) == .double(9223372036854775808.0))
        #expect(DatabaseValue(node: Node(.integer(Int64.max))) == .int(Int64.max))
    }

    /// js-sdk ChildrenNode.val(): keys all match ^(0|[1-9]\d*)$ and maxKey < 2 * count.
    @Test(arguments: [
        (#"{"0":"a","1":"b"}"#, DatabaseValue.array(["a", "b"])),
        (#"{"1":"a"}"#, .array([nil, "a"])),
        (#"{"0":"a","2":"c"}"#, .array(["a", nil, "c"])),
        (#"{"0":"a","3":"d"}"#, .array(["a", nil, nil, "d"])),
        (#"{"2":"c"}"#, .object(["2": "c"])),
        (#"{"0":"a","4":"e"}"#, .object(["0": "a", "4": "e"])),
        (#"{"00":"a"}"#, .object(["00": "a"])),
        (#"{"01":"a","0":"b"}"#, .object(["01": "a", "0": "b"])),
        (#"{"-1":"a","0":"b"}"#, .object(["-1": "a", "0": "b"])),
        (#"{"0":"a","x":"b"}"#, .object(["0": "a", "x": "b"])),
        (#"{"0":{"0":1,"1":2},"1":{"a":1}}"#, .array([[1, 2], ["a": 1]])),
        (#"{"99999999999999999999999":"a"}"#, .object(["99999999999999999999999": "a"])),
    ])
    func arrayHeuristic(text: String, expected: DatabaseValue) throws {
        #expect(DatabaseValue(node: try json(text)) == expected)
    }

    @Test func arraysAreWrittenAsIndexKeyedObjects() throws {
        #expect(try node(["a", nil, "c"]) == (try json(#"{"0":"a","2":"c"}"#)))
        #expect(DatabaseValue(node: try node(["a", nil, "c"])) == ["a", nil, "c"])
        // A trailing null is lost, as in Firebase.
        #expect(DatabaseValue(node: try node(["a", nil])) == ["a"])
    }

    @Test func priorityAndValueKeys() throws {
        let withPriority = try node(["a": 1, ".priority": 5])
        #expect(withPriority.priority == .number(5))
        #expect(DatabaseValue(node: withPriority) == ["a": 1])
        #expect(DatabaseValue(exporting: withPriority) == ["a": 1, ".priority": 5])
        let leaf = try node([".value": 3, ".priority": "p"])
        #expect(leaf == Node(.number(3), priority: .string("p")))
        #expect(DatabaseValue(exporting: leaf) == [".value": 3, ".priority": "p"])
        #expect(try node(DatabaseValue(exporting: leaf)) == leaf)
        #expect(try node([".value": nil, ".priority": 1]).isEmpty)
    }

    @Test func serverValues() throws {
        #expect(try node(.serverTimestamp) == Node(.serverValue(.timestamp)))
        #expect(try node(.increment(2)) == Node(.serverValue(.increment(2))))
        #expect(try node(.increment(0.5)) == Node(.serverValue(.increment(0.5))))
        #expect(try node([".sv": "timestamp"]) == Node(.serverValue(.timestamp)))
        #expect(DatabaseValue(node: Node(.serverValue(.increment(2)))) == .increment(2))
        #expect(DatabaseValue(node: Node(.serverValue(.increment(0.5)))) == .increment(0.5))
        #expect(DatabaseValue.serverTimestamp.description == #"{".sv":"timestamp"}"#)
        #expect(throws: DatabaseError.self) { try node(.increment(.nan)) }
    }

    static let invalidValues: [(DatabaseValue, String)] = {
        var cases: [(DatabaseValue, String)] = []
        cases.append((.double(.nan), "a/b"))
        cases.append((.double(.infinity), "a/b"))
        cases.append((.object(["x": .object(["y": .double(-.infinity)])]), "a/b/x/y"))
        cases.append((.object(["bad.key": .int(1)]), "a/b"))
        cases.append((.object(["": .int(1)]), "a/b"))
        cases.append((.object(["ok": .object(["$x": .int(1)])]), "a/b/ok"))
        cases.append((.object(["a": .int(1), ".value": .int(2)]), "a/b"))
        cases.append((.object([".value": .object(["x": .int(1)])]), "a/b"))
        cases.append((.object([".priority": .bool(true), "a": .int(1)]), "a/b"))
        cases.append((.object([".sv": .string("nonsense")]), "a/b"))
        return cases
    }()

    @Test(arguments: invalidValues)
    func invalidValuesNameThePath(value: DatabaseValue, path: String) throws {
        do {
            _ = try node(value, at: Path(keys: [ChildKey("a"), ChildKey("b")]))
            Issue.record("\(value) was accepted")
        } catch {
            guard case .invalidValue(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("\"\(path)"), "\(message)")
        }
    }

    @Test func depthIsLimited() throws {
        var deep: DatabaseValue = 1
        for _ in 0..<33 { deep = ["d": deep] }  // a leaf 33 levels down
        #expect(throws: DatabaseError.self) { try node(deep) }
        var ok: DatabaseValue = 1
        for _ in 0..<32 { ok = ["d": ok] }  // 32 levels: Firebase's maximum
        #expect(try !node(ok).isEmpty)
        let deepPath = Path(keys: Array(repeating: ChildKey("k"), count: 33))
        #expect(throws: DatabaseError.self) { try node(1, at: deepPath) }
    }

    // MARK: updateChildValues

    @Test func childUpdatesParsePathsAndSort() throws {
        let updates = try childUpdates(
            from: ["b/c": 1, "/a/": "x", "d/.priority": 3, "e": nil], at: Path(keys: ["root"]))
        #expect(updates.map(\.path.description) == ["a", "b/c", "d/.priority", "e"])
        #expect(updates[0].node == .string("x"))
        #expect(updates[3].node.isEmpty)
    }

    /// js-sdk validateFirebaseMergePaths: no path may contain another.
    @Test(arguments: [
        ["a": 1, "a/b": 2] as DatabaseValue.Object,
        ["a/b/c": 1, "a": 2],
        ["a": 1, "/a/": 2],
        ["x/y": 1, "x//y": 2],
        ["": 1, "a": 2],
    ])
    func overlappingUpdatePathsAreRefused(values: DatabaseValue.Object) {
        #expect(throws: DatabaseError.self) { try childUpdates(from: values, at: .root) }
    }

    @Test func siblingUpdatePathsAreAccepted() throws {
        let updates = try childUpdates(from: ["a/b": 1, "a/c": 2, "ab": 3], at: .root)
        #expect(updates.count == 3)
    }

    @Test(arguments: ["a.b", "a/#", "$", "a/.priority/b", ".priority/a", "x/[y]", "a\u{7}"])
    func invalidUpdateKeysAreRefused(key: String) {
        do {
            _ = try childUpdates(from: [key: 1], at: .root)
            Issue.record("\(key) was accepted")
        } catch {
            guard case .invalidPath = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func priorityUpdatesMustBePriorities() throws {
        #expect(throws: DatabaseError.self) { try childUpdates(from: ["a/.priority": true], at: .root) }
        #expect(throws: DatabaseError.self) { try childUpdates(from: ["a/.priority": ["x": 1]], at: .root) }
        #expect(throws: DatabaseError.self) { try childUpdates(from: ["a/.priority": .double(.nan)], at: .root) }
        #expect(
            try childUpdates(from: ["a/.priority": nil, "b/.priority": "s", "c/.priority": 1.5], at: .root).count == 3)
    }

    @Test func updateValuesAreValidatedAtTheirFullPath() throws {
        do {
            _ = try childUpdates(from: ["a/b": ["x.y": 1]], at: Path(keys: ["top"]))
            Issue.record("accepted")
        } catch {
            #expect("\(error)".contains("top/a/b"))
        }
    }
}
