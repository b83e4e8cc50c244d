import Testing
@testable import HearthModel
import HearthTesting

@Suite struct QueryTests {
    let scores = try! Node(
        jsonText:
            #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
    )

    @Test func identifiers() throws {
        #expect(QuerySpec.default.identifier == "default")
        #expect(QuerySpec(orderBy: .value).identifier == #"{"i":".value"}"#)
        #expect(try QuerySpec(orderBy: .value).limitToLast(4).identifier == #"{"i":".value","l":4,"vf":"r"}"#)
        #expect(try QuerySpec(orderBy: .priority).limitToFirst(2).identifier == #"{"l":2,"vf":"l"}"#)
        #expect(
            try QuerySpec(orderBy: .child("height")).startAt(.number(1.5), key: "a").endAt(.number(5)).identifier
                == #"{"ep":5,"i":"height","sn":"a","sp":1.5}"#)
        #expect(
            try QuerySpec(orderBy: .child("a/b")).equalTo(.string("x")).identifier == #"{"ep":"x","i":"a/b","sp":"x"}"#)
        #expect(
            try QuerySpec(orderBy: .value).startAfter(.number(3)).identifier
                == #"{"i":".value","sn":"[MAX_NAME]","sp":3}"#)
        #expect(
            try QuerySpec(orderBy: .value).endBefore(.number(3)).identifier
                == #"{"en":"[MIN_NAME]","ep":3,"i":".value"}"#)
        #expect(
            try QuerySpec(orderBy: .key).startAfter(.string("b")).identifier == #"{"i":".key","sin":false,"sp":"b"}"#)
        #expect(try QuerySpec(orderBy: .key).startAt(.string("b")).identifier == #"{"i":".key","sp":"b"}"#)
        #expect(try QuerySpec(orderBy: .priority).startAt(.empty).identifier == #"{"sp":null}"#)
        #expect(try QuerySpec(orderBy: .value).startAt(.number(1e-7)).identifier == #"{"i":".value","sp":1e-7}"#)
    }

    @Test func validation() throws {
        let value = QuerySpec(orderBy: .value)
        #expect(throws: QueryError.limitAlreadySet(field: "limitToLast")) { try value.limitToFirst(1).limitToLast(1) }
        #expect(throws: QueryError.limitNotPositiveInteger(field: "limitToFirst", value: "0")) {
            try value.limitToFirst(0)
        }
        #expect(throws: QueryError.limitNotPositiveInteger(field: "limitToLast", value: "-3")) {
            try value.limitToLast(-3)
        }
        #expect(throws: QueryError.startAlreadySet(field: "equalTo")) {
            try value.startAt(.number(1)).equalTo(.number(1))
        }
        #expect(throws: QueryError.endAlreadySet(field: "equalTo")) { try value.endAt(.number(1)).equalTo(.number(1)) }
        #expect(throws: QueryError.startAlreadySet(field: "startAfter")) {
            try value.startAt(.number(1)).startAfter(.number(2))
        }
        #expect(throws: QueryError.endAlreadySet(field: "endAt")) { try value.equalTo(.number(1)).endAt(.number(2)) }
        let key = QuerySpec(orderBy: .key)
        #expect(throws: QueryError.keyOrderingNeedsString(field: "startAt")) { try key.startAt(.number(1)) }
        #expect(throws: QueryError.keyOrderingTakesOneArgument(field: "endAt")) {
            try key.endAt(.string("a"), key: "b")
        }
        #expect(throws: QueryError.self) { try key.startAt(.string("a.b")) }
        let priority = QuerySpec(orderBy: .priority)
        #expect(throws: QueryError.invalidPriorityBound(field: "startAt")) { try priority.startAt(.bool(true)) }
        _ = try priority.startAt(.empty).endAt(.string("z"))
        #expect(throws: QueryError.objectBound(field: "startAt")) {
            try value.startAt(Node(children: [("a", .number(1))]))
        }
        #expect(throws: QueryError.self) { try value.startAt(.number(1), key: "bad/key") }
        #expect(throws: QueryError.self) { try QuerySpec.parseChildPath("$key") }
        #expect(throws: QueryError.self) { try QuerySpec.parseChildPath("") }
        #expect(throws: QueryError.self) { try QuerySpec.parseChildPath("a/.priority") }
        #expect(throws: QueryError.self) { try QuerySpec.parseChildPath("a#b") }
    }

    @Test func jsonForm() throws {
        func q(_ text: String) throws -> QuerySpec { try QuerySpec(json: JSONValue.parse(text)) }
        #expect(try q("{}") == .default)
        #expect(try q(#"{"orderBy":"value","limitToLast":4}"#) == QuerySpec(orderBy: .value).limitToLast(4))
        #expect(
            try q(#"{"orderBy":{"child":"a/b"},"startAt":{"value":1,"key":"k"}}"#)
                == QuerySpec(orderBy: .child("a/b")).startAt(.number(1), key: "k"))
        #expect(try q(#"{"orderBy":"key","equalTo":"x"}"#) == QuerySpec(orderBy: .key).equalTo(.string("x")))
        #expect(throws: QueryError.unknownField("limit")) { try q(#"{"limit":3}"#) }
        #expect(throws: QueryError.self) { try q(#"{"limitToFirst":1.5}"#) }
        #expect(throws: QueryError.self) { try q(#"{"limitToFirst":"3"}"#) }
        #expect(throws: QueryError.self) { try q(#"{"equalTo":1,"startAt":1}"#) }
        #expect(throws: QueryError.self) { try q(#"{"orderBy":"height"}"#) }
        #expect(throws: QueryError.self) { try q(#"{"startAt":{"value":{"a":1}}}"#) }
        // Round trip through the JSON form.
        for spec in [
            QuerySpec.default,
            try QuerySpec(orderBy: .value).startAfter(.number(3)).limitToFirst(2),
            try QuerySpec(orderBy: .key).startAfter(.string("b")).endBefore(.string("y")),
            try QuerySpec(orderBy: .child("h")).startAfter(.number(1), key: "k").endBefore(.number(9)),
            try QuerySpec(orderBy: .priority).startAt(.string("a")).endAt(.string("z"), key: "q").limitToLast(3),
        ] {
            #expect(try QuerySpec(json: spec.json) == spec, "\(spec.json.serialized())")
        }
    }

    @Test func limitToLastByValue() throws {
        let window = try QuerySpec(orderBy: .value).limitToLast(4).window(of: scores)
        #expect(window.keys == ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])
        #expect(window.node.childCount == 4)
        let top2 = try QuerySpec(orderBy: .value).limitToLast(2).window(of: scores)
        #expect(top2.keys == ["linhenykus", "pterodactyl"])
        let first1 = try QuerySpec(orderBy: .value).limitToFirst(1).window(of: scores)
        #expect(first1.keys == ["stegosaurus"])
    }

    @Test func valueOrderAcrossTypes() throws {
        let node = try Node(
            jsonText: #"{"o":{"x":1},"s":"a","n2":2,"n1":1,"t":true,"f":false,"o2":{"y":1},"s0":"","b":true}"#)
        let keys = QuerySpec(orderBy: .value).window(of: node).keys
        #expect(keys == ["f", "b", "t", "n1", "n2", "s0", "s", "o", "o2"])
    }

    @Test func childOrderMissingSortsFirst() throws {
        let node = try Node(jsonText: #"{"a":{"h":3},"b":{"x":1},"c":{"h":1},"d":{"h":"tall"},"e":5}"#)
        let keys = QuerySpec(orderBy: .child("h")).window(of: node).keys
        #expect(keys == ["b", "e", "c", "a", "d"])
        let bounded = try QuerySpec(orderBy: .child("h")).startAt(.number(1)).endAt(.number(3)).window(of: node)
        #expect(bounded.keys == ["c", "a"])
        let after = try QuerySpec(orderBy: .child("h")).startAfter(.number(1)).window(of: node)
        #expect(after.keys == ["a", "d"])
        let before = try QuerySpec(orderBy: .child("h")).endBefore(.number(3)).window(of: node)
        #expect(before.keys == ["b", "e", "c"])
        let withKey = try QuerySpec(orderBy: .child("h")).startAt(.empty, key: "c").window(of: node)
        #expect(withKey.keys == ["e", "c", "a", "d"])  // null-valued ties ordered by key: b < c ≤ e
    }

    @Test func priorityOrder() throws {
        let node = try Node(
            jsonText:
                #"{"a":{".value":1,".priority":"z"},"b":{".value":1,".priority":5},"c":1,"d":{".value":1,".priority":-1},"e":{".value":1,".priority":"a"}}"#
        )
        #expect(QuerySpec.default.window(of: node).keys == ["c", "d", "b", "e", "a"])
        let limited = try QuerySpec(orderBy: .priority).startAt(.number(0)).limitToFirst(2).window(of: node)
        #expect(limited.keys == ["b", "e"])
        #expect(limited.node.priority == nil)
    }

    @Test func filteredRootLosesPriorityAndLeaf() throws {
        let node = try Node(jsonText: #"{"a":1,"b":2,".priority":7}"#)
        #expect(QuerySpec.default.window(of: node).node.priority == .number(7))
        #expect(try QuerySpec(orderBy: .key).limitToFirst(1).window(of: node).node.priority == nil)
        #expect(try QuerySpec(orderBy: .key).limitToFirst(1).window(of: .number(3)).keys.isEmpty)
        #expect(QuerySpec.default.window(of: .number(3)).node == .number(3))
    }

    /// The key-ordered fast path agrees with a brute-force filter + sort.
    @Test func keyWindowMatchesBruteForce() throws {
        var rng = SeededRandom(seed: 99)
        var node = Node.empty
        for _ in 0..<300 {
            let k = rng.next() % 2 == 0 ? String(rng.next() % 200) : "k\(rng.next() % 200)"
            node = node.updatingChild(ChildKey(k), .number(1))
        }
        let all = node.children.map(\.key)
        for _ in 0..<300 {
            var spec = QuerySpec(orderBy: .key)
            let a = all[Int(rng.next() % UInt64(all.count))], b = all[Int(rng.next() % UInt64(all.count))]
            switch rng.next() % 3 {
            case 0: spec = try spec.startAt(.string(a.string))
            case 1: spec = try spec.startAfter(.string(a.string))
            default: break
            }
            switch rng.next() % 3 {
            case 0: spec = try spec.endAt(.string(b.string))
            case 1: spec = try spec.endBefore(.string(b.string))
            default: break
            }
            switch rng.next() % 3 {
            case 0: spec = try spec.limitToFirst(Int(rng.next() % 20) + 1)
            case 1: spec = try spec.limitToLast(Int(rng.next() % 20) + 1)
            default: break
            }
            var expected = all.filter { spec.inRange($0, .number(1)) }
            switch spec.limit {
            case .first(let n)?: expected = Array(expected.prefix(n))
            case .last(let n)?: expected = Array(expected.suffix(n))
            case nil: break
            }
            #expect(spec.window(of: node).keys == expected, "\(spec)")
        }
    }
}
