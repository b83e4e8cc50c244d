import HearthModel
import Testing
@testable import HearthDatabase

/// Query validation, ported from firebase-ios-sdk
/// FirebaseDatabase/Tests/Integration/FIRDatabaseQueryTests.m (testCanCreateBasicQueries,
/// testInvalidQueryParams, testLimitRanges, testInvalidKeys). `@YES`/`@NO` are `true`/`false`,
/// `@1` is `1`, `nil` is `nil`, `@[]` is `[]`, `@{}` is `[:]`.
@Suite struct QueryBuildingTests {
    let ref = offlineDatabase().reference().child("query")

    /// testCanCreateBasicQueries: 42 calls that must not throw.
    @Test func basicQueriesAreValid() {
        let index = ref.queryOrdered(byChild: "index")
        let priority = ref.queryOrderedByPriority()
        let values: [DatabaseValue] = [true, 1, "foo", nil]
        var queries: [(String, DatabaseQuery)] = [
            ("limitToFirst 10", ref.queryLimited(toFirst: 10)),
            ("limitToLast 10", ref.queryLimited(toLast: 10)),
            ("key startAt", ref.queryOrderedByKey().queryStarting(atValue: "foo")),
            ("key startAfter", ref.queryOrderedByKey().queryStarting(afterValue: "foo")),
            ("key endAt", ref.queryOrderedByKey().queryEnding(atValue: "foo")),
            ("key endBefore", ref.queryOrderedByKey().queryEnding(beforeValue: "foo")),
            ("key equalTo", ref.queryOrderedByKey().queryEqual(toValue: "foo")),
        ]
        for v in values {
            queries += [
                ("child startAt \(v)", index.queryStarting(atValue: v)),
                ("child startAfter \(v)", index.queryStarting(afterValue: v)),
                ("child endAt \(v)", index.queryEnding(atValue: v)),
                ("child endBefore \(v)", index.queryEnding(beforeValue: v)),
                ("child equalTo \(v)", index.queryEqual(toValue: v)),
            ]
        }
        for v: DatabaseValue in [1, "foo", nil] {
            queries += [
                ("priority startAt \(v)", priority.queryStarting(atValue: v)),
                ("priority startAfter \(v)", priority.queryStarting(afterValue: v)),
                ("priority endAt \(v)", priority.queryEnding(atValue: v)),
                ("priority endBefore \(v)", priority.queryEnding(beforeValue: v)),
                ("priority equalTo \(v)", priority.queryEqual(toValue: v)),
            ]
        }
        #expect(queries.count == 42)
        for (name, query) in queries {
            #expect(query.invalid == nil, "\(name): \(String(describing: query.invalid))")
        }
    }

    /// testInvalidQueryParams: 91 calls that must throw (here: give an invalid query).
    @Test func invalidQueryParams() {
        let r = ref
        let orderings: [(String, (DatabaseQuery) -> DatabaseQuery)] = [
            ("priority", { $0.queryOrderedByPriority() }),
            ("key", { $0.queryOrderedByKey() }),
            ("child", { $0.queryOrdered(byChild: "foo") }),
            ("value", { $0.queryOrderedByValue() }),
        ]
        var queries: [(String, DatabaseQuery)] = [
            ("first first", r.queryLimited(toFirst: 100).queryLimited(toFirst: 100)),
            ("first last", r.queryLimited(toFirst: 100).queryLimited(toLast: 100)),
            ("last first", r.queryLimited(toLast: 100).queryLimited(toFirst: 100)),
            ("last last", r.queryLimited(toLast: 100).queryLimited(toLast: 100)),
        ]
        // 16 pairs of orderings.
        for (a, first) in orderings {
            for (b, second) in orderings { queries.append(("order \(a) then \(b)", second(first(r.query)))) }
        }
        queries += [
            ("startAt startAt", r.queryStarting(atValue: "foo").queryStarting(atValue: "foo")),
            ("startAt startAfter", r.queryStarting(atValue: "foo").queryStarting(afterValue: "foo")),
            ("startAt equalTo", r.queryStarting(atValue: "foo").queryEqual(toValue: "foo")),
            ("startAfter startAt", r.queryStarting(afterValue: "foo").queryStarting(atValue: "foo")),
            ("startAfter equalTo", r.queryStarting(afterValue: "foo").queryEqual(toValue: "foo")),
            ("endAt endAt", r.queryEnding(atValue: "foo").queryEnding(atValue: "foo")),
            ("endAt endBefore", r.queryEnding(atValue: "foo").queryEnding(beforeValue: "foo")),
            ("endAt equalTo", r.queryEnding(atValue: "foo").queryEqual(toValue: "foo")),
            ("endBefore endAt", r.queryEnding(beforeValue: "foo").queryEnding(atValue: "foo")),
            ("endBefore equalTo", r.queryEnding(beforeValue: "foo").queryEqual(toValue: "foo")),
            ("equalTo startAt", r.queryEqual(toValue: "foo").queryStarting(atValue: "foo")),
            ("equalTo startAfter", r.queryEqual(toValue: "foo").queryStarting(afterValue: "foo")),
            ("equalTo endAt", r.queryEqual(toValue: "foo").queryEnding(atValue: "foo")),
            ("equalTo endBefore", r.queryEqual(toValue: "foo").queryEnding(beforeValue: "foo")),
            ("equalTo equalTo", r.queryEqual(toValue: "foo").queryEqual(toValue: "foo")),
        ]
        let key = r.queryOrderedByKey()
        queries += [
            ("key startAt childKey", key.queryStarting(atValue: "foo", childKey: "foo")),
            ("key startAfter childKey", key.queryStarting(afterValue: "foo", childKey: "foo")),
            ("key endAt childKey", key.queryEnding(atValue: "foo", childKey: "foo")),
            ("key endBefore childKey", key.queryEnding(beforeValue: "foo", childKey: "foo")),
            ("key equalTo childKey", key.queryEqual(toValue: "foo", childKey: "foo")),
            ("key startAt 1 childKey", key.queryStarting(atValue: 1, childKey: "foo")),
            ("key startAfter 1 childKey", key.queryStarting(afterValue: 1, childKey: "foo")),
            ("key startAt YES", key.queryStarting(atValue: true)),
            ("key startAfter YES", key.queryStarting(afterValue: true)),
            ("key endAt 1", key.queryEnding(atValue: 1)),
            ("key endAt YES", key.queryEnding(atValue: true)),
            ("key endBefore 1", key.queryEnding(beforeValue: 1)),
            ("key endBefore YES", key.queryEnding(beforeValue: true)),
            ("key startAt nil", key.queryStarting(atValue: nil)),
            ("key startAfter nil", key.queryStarting(afterValue: nil)),
            ("key endAt nil", key.queryEnding(atValue: nil)),
            ("key endBefore nil", key.queryEnding(beforeValue: nil)),
            ("key equalTo nil", key.queryEqual(toValue: nil)),
            // Orderings chosen after the bounds check them again.
            ("startAt childKey then key", r.queryStarting(atValue: "foo", childKey: "foo").queryOrderedByKey()),
            ("startAfter childKey then key", r.queryStarting(afterValue: "foo", childKey: "foo").queryOrderedByKey()),
            ("endAt childKey then key", r.queryEnding(atValue: "foo", childKey: "foo").queryOrderedByKey()),
            ("endBefore childKey then key", r.queryEnding(beforeValue: "foo", childKey: "foo").queryOrderedByKey()),
            ("equalTo childKey then key", r.queryEqual(toValue: "foo", childKey: "foo").queryOrderedByKey()),
            ("startAt 1 then key", r.queryStarting(atValue: 1).queryOrderedByKey()),
            ("startAfter 1 then key", r.queryStarting(afterValue: 1).queryOrderedByKey()),
            ("startAt YES then key", r.queryStarting(atValue: true).queryOrderedByKey()),
            ("startAfter YES then key", r.queryStarting(afterValue: true).queryOrderedByKey()),
            ("endAt 1 then key", r.queryEnding(atValue: 1).queryOrderedByKey()),
            ("endBefore 1 then key", r.queryEnding(beforeValue: 1).queryOrderedByKey()),
            ("endBefore YES then key", r.queryEnding(beforeValue: true).queryOrderedByKey()),
            ("startAt []", r.queryStarting(atValue: [])),
            ("startAt {}", r.queryStarting(atValue: [:])),
            ("startAfter []", r.queryStarting(afterValue: [])),
            ("startAfter {}", r.queryStarting(afterValue: [:])),
            ("endAt []", r.queryEnding(atValue: [])),
            ("endAt {}", r.queryEnding(atValue: [:])),
            ("endBefore []", r.queryEnding(beforeValue: [])),
            ("endBefore {}", r.queryEnding(beforeValue: [:])),
            ("equalTo []", r.queryEqual(toValue: [])),
            ("equalTo {}", r.queryEqual(toValue: [:])),
            // The second block of the iOS test (orderings twice again, key with child key,
            // booleans under priority ordering).
            ("key then priority", key.queryOrderedByPriority()),
            ("child then priority", r.queryOrdered(byChild: "foo").queryOrderedByPriority()),
            ("key then key", key.queryOrderedByKey()),
            ("child then key", r.queryOrdered(byChild: "foo").queryOrderedByKey()),
            ("key then child", key.queryOrdered(byChild: "foo")),
            ("child then child", r.queryOrdered(byChild: "foo").queryOrdered(byChild: "foo")),
            ("key startAt a,b", key.queryStarting(atValue: "a", childKey: "b")),
            ("key startAfter a,b", key.queryStarting(afterValue: "a", childKey: "b")),
            ("key endAt a,b", key.queryEnding(atValue: "a", childKey: "b")),
            ("key endBefore a,b", key.queryEnding(beforeValue: "a", childKey: "b")),
            ("key equalTo a,b", key.queryEqual(toValue: "a", childKey: "b")),
            ("priority startAt YES", r.queryOrderedByPriority().queryStarting(atValue: true)),
            ("priority startAfter YES", r.queryOrderedByPriority().queryStarting(afterValue: true)),
            ("priority endAt NO", r.queryOrderedByPriority().queryEnding(atValue: false)),
            ("priority endBefore NO", r.queryOrderedByPriority().queryEnding(beforeValue: false)),
            ("priority equalTo YES", r.queryOrderedByPriority().queryEqual(toValue: true)),
        ]
        #expect(queries.count == 91)
        for (name, query) in queries {
            guard case .invalidQuery(let message)? = query.invalid else {
                Issue.record("\(name) was accepted: \(query.spec)")
                continue
            }
            #expect(!message.isEmpty)
        }
    }

    /// testLimitRanges: zero and 2^31 refused, 2^31 - 1 accepted.
    @Test func limitRanges() {
        let max = Int(Int32.max)
        #expect(ref.queryLimited(toLast: 0).invalid != nil)
        #expect(ref.queryLimited(toFirst: 0).invalid != nil)
        #expect(ref.queryLimited(toFirst: max).invalid == nil)
        #expect(ref.queryLimited(toLast: max).invalid == nil)
        #expect(ref.queryLimited(toFirst: max + 1).invalid != nil)
        #expect(ref.queryLimited(toLast: max + 1).invalid != nil)
        // Int lets a negative limit through the type system; it is refused too.
        #expect(ref.queryLimited(toFirst: -1).invalid != nil)
        #expect(ref.queryLimited(toFirst: 5).spec.limit == .first(5))
        #expect(ref.queryLimited(toLast: 5).spec.limit == .last(5))
    }

    /// testInvalidKeys: 9 bad child keys × 4 bound methods.
    @Test(arguments: [".test", "test.", "fo$o", "[what", "ever]", "ha#sh", "/thing", "th/ing", "thing/"])
    func invalidBoundKeys(badKey: String) {
        let priority = ref.queryOrderedByPriority()
        #expect(priority.queryStarting(atValue: nil, childKey: badKey).invalid != nil)
        #expect(priority.queryStarting(afterValue: nil, childKey: badKey).invalid != nil)
        #expect(priority.queryEnding(atValue: nil, childKey: badKey).invalid != nil)
        #expect(priority.queryEnding(beforeValue: nil, childKey: badKey).invalid != nil)
    }

    // MARK: - Hearth's own checks

    @Test func messagesAreFirebaseLike() {
        #expect(
            ref.queryOrderedByKey().queryOrderedByValue().invalid
                == .invalidQuery("queryOrderedByValue: you cannot use more than one queryOrdered… call"))
        guard case .invalidQuery(let m)? = ref.queryOrderedByKey().queryStarting(atValue: 1).invalid else {
            Issue.record("accepted")
            return
        }
        #expect(m.contains("queryStarting(atValue:)") && m.contains("string"))
    }

    @Test func firstErrorWins() {
        let q = ref.queryLimited(toFirst: 0).queryOrderedByKey().queryStarting(atValue: 1)
        guard case .invalidQuery(let m)? = q.invalid else {
            Issue.record("accepted")
            return
        }
        #expect(m.hasPrefix("queryLimited(toFirst:)"))
    }

    @Test func invalidReferenceMakesInvalidQueries() {
        let bad = ref.child("a.b")
        #expect(bad.queryOrderedByKey().invalid == bad.invalid)
        #expect(bad.queryLimited(toFirst: 1).invalid == bad.invalid)
    }

    @Test(arguments: [
        "$key", ".key", "$value", ".value", "$priority", ".priority", "", "/", "a.b", ".info/x", "a/.priority",
    ])
    func invalidChildOrderings(path: String) {
        #expect(ref.queryOrdered(byChild: path).invalid != nil)
    }

    @Test func childOrderingTakesAPath() throws {
        let q = ref.queryOrdered(byChild: "/a/b/")
        #expect(q.invalid == nil)
        #expect(q.spec.index == .child(Path(keys: ["a", "b"])))
    }

    @Test func specsMatchTheModelBuilders() throws {
        let q = ref.queryOrdered(byChild: "age").queryStarting(atValue: 18).queryEnding(beforeValue: 65, childKey: "k")
            .queryLimited(toLast: 3)
        let expected = try QuerySpec(orderBy: .child(Path(keys: ["age"]))).startAt(Node(.number(18)))
            .endBefore(Node(.number(65)), key: ChildKey("k")).limitToLast(3)
        #expect(q.invalid == nil)
        #expect(q.spec == expected)
        #expect(q.ref == ref)
    }

    @Test func boundsSetBeforeTheOrderingAreKept() throws {
        // Firebase accepts bounds before the ordering; Hearth re-applies them under it.
        let q = ref.queryStarting(atValue: "b").queryEnding(atValue: "m").queryLimited(toFirst: 2).queryOrderedByKey()
        let expected = ref.queryOrderedByKey().queryStarting(atValue: "b").queryEnding(atValue: "m").queryLimited(
            toFirst: 2)
        #expect(q.invalid == nil)
        #expect(q.spec == expected.spec)
        // startAfter without a key: under key ordering it means "keys after b".
        let after = ref.queryStarting(afterValue: "b").queryOrderedByKey()
        #expect(after.invalid == nil)
        #expect(after.spec == ref.queryOrderedByKey().queryStarting(afterValue: "b").spec)
        let before = ref.queryEnding(beforeValue: 5).queryOrderedByValue()
        #expect(before.spec == ref.queryOrderedByValue().queryEnding(beforeValue: 5).spec)
    }

    @Test func boundValuesMustBeFiniteScalars() {
        #expect(ref.queryStarting(atValue: .double(.nan)).invalid != nil)
        #expect(ref.queryEnding(atValue: .double(.infinity)).invalid != nil)
        #expect(ref.queryEqual(toValue: ServerValue.timestamp()).invalid != nil)
        #expect(ref.queryOrderedByValue().queryStarting(atValue: ["a": 1]).invalid != nil)
        #expect(ref.queryOrderedByValue().queryStarting(atValue: 2.5).invalid == nil)
    }

    @Test func explicitPriorityOrderingEqualsTheDefaultQuery() {
        #expect(ref.queryOrderedByPriority() == ref.query)
        #expect(ref.queryOrderedByPriority().orderByCalled)
        #expect(ref.queryOrderedByPriority().spec.isDefault)
    }
}
