// Live Firebase's verdicts on 186 rule expressions (targaryen's parser fixtures, recorded by
// uploading each as a `.read` rule and reading over REST): the same verdicts from HearthRules.
import Foundation
import HearthModel
import HearthRules
import Testing

/// Runs `../shared/conformance/rules/targaryen-fixtures.json` as targaryen recorded it: each
/// `rule` is the `.read` rule at the root, or under its `$wildchildren` names in sorted order
/// (`$a/$b/.read`, with an `.indexOn` beside it for a query ordered by a child or by value);
/// `data` is the whole database; the request is a read at the wildchildren's values joined in
/// the same order, as a query when `query` is given; `auth` is the user object itself (null
/// for `unauth`). Expected:
/// - `isValid: false` — Firebase refused the rules: loading them throws.
/// - `failAtRuntime: true` — Firebase denied the read, and `(rule) || true` too (an error
///   fails the whole expression): both denied.
/// - otherwise the read is allowed exactly when `evaluateTo` is true.
@Suite struct TargaryenConformanceTests {
    /// Fixtures that do not pass yet, by index, with what differs from Firebase.
    static let knownGaps: [Int: String] = [:]

    @Test(
        .enabled(
            if: TargaryenFixtures.tests != nil,
            "targaryen-fixtures.json not found at \(TargaryenFixtures.location.path) — rules conformance skipped"),
        arguments: TargaryenFixtures.indices)
    func fixture(_ index: Int) throws {
        guard let tests = TargaryenFixtures.tests, let users = TargaryenFixtures.users else { return }
        let check = {
            if let failure = TargaryenFixtures.run(tests[index], users: users) {
                Issue.record(Comment(rawValue: "#\(index) \(tests[index]["rule"]?.stringValue ?? "?"): \(failure)"))
            }
        }
        if let gap = Self.knownGaps[index] {
            withKnownIssue(Comment(rawValue: gap)) { check() }
        } else {
            check()
        }
    }

    @Test(
        "the fixture file holds the 186 recorded cases",
        .enabled(if: TargaryenFixtures.tests != nil, "targaryen-fixtures.json not found — skipped"))
    func count() {
        #expect(TargaryenFixtures.tests?.count == 186)
        let passing = (TargaryenFixtures.tests ?? []).indices.filter { Self.knownGaps[$0] == nil }.count
        print("targaryen: \(passing) of \(TargaryenFixtures.tests?.count ?? 0) fixtures expected to pass")
    }
}

/// The fixture file and how one fixture runs.
enum TargaryenFixtures {
    /// `../shared/conformance/rules/targaryen-fixtures.json` beside the package root.
    static let location: URL = {
        // This file is <root>/Tests/HearthRulesTests/TargaryenConformanceTests.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.deletingLastPathComponent().appendingPathComponent(
            "shared/conformance/rules/targaryen-fixtures.json")
    }()

    static let file: JSONValue? = {
        guard let data = try? Data(contentsOf: location), let text = String(data: data, encoding: .utf8) else {
            return nil
        }
        return try? JSONValue.parse(text)
    }()

    static let tests: [JSONValue]? = file?["tests"]?.arrayValue
    static let users: JSONValue? = file?["users"]
    static let indices: [Int] = Array((tests ?? []).indices)

    /// Why `test` does not get Firebase's verdict, or nil when it does.
    static func run(_ test: JSONValue, users: JSONValue) -> String? {
        guard let rule = test["rule"]?.stringValue, let user = test["user"]?.stringValue else {
            return "malformed fixture"
        }
        let auth: RulesAuth?
        switch users[user] {
        case .object(let members)?: auth = RulesAuth(variable: members)
        default: auth = nil
        }
        var wild: [JSONMember] = []
        if case .object(let members)? = test["wildchildren"] { wild = members.sorted { $0.key < $1.key } }
        let query: QuerySpec?
        do { query = try test["query"].map(querySpec) } catch { return "the fixture's query: \(error)" }
        let root: Node
        do { root = try Node(json: test["data"] ?? .null) } catch { return "the fixture's data: \(error)" }
        let path: Path
        do { path = try Path(validating: wild.compactMap { $0.value.stringValue }.joined(separator: "/")) } catch {
            return "the wildchildren's path: \(error)"
        }

        func decide(_ expression: String) throws -> Decision {
            var location: [JSONMember] = [JSONMember(key: ".read", value: .string(expression))]
            if let query {
                switch query.index {
                case .child(let p): location.append(JSONMember(key: ".indexOn", value: .string(p.description)))
                case .value: location.append(JSONMember(key: ".indexOn", value: .string(".value")))
                case .key, .priority: break
                }
            }
            var value = JSONValue.object(location)
            for w in wild.reversed() { value = .object([JSONMember(key: w.key, value: value)]) }
            let rules = try RulesSet.parse(
                source: JSONValue.object([JSONMember(key: "rules", value: value)]).serialized())
            if let query {
                return rules.canQuery(path: path, query: query, auth: auth, root: root, now: 1_700_000_000_000)
            }
            return rules.canRead(path: path, auth: auth, root: root, now: 1_700_000_000_000)
        }

        if test["isValid"]?.boolValue == false {
            guard let decision = try? decide(rule) else { return nil }
            return "Firebase refuses these rules; they loaded (\(decision))"
        }
        let decision: Decision
        do { decision = try decide(rule) } catch { return "Firebase accepts these rules; loading failed: \(error)" }
        if test["failAtRuntime"]?.boolValue == true {
            if decision.isAllowed { return "Firebase fails at run time (denies); allowed (\(decision))" }
            guard let orTrue = try? decide("(\(rule)) || true") else { return "`(rule) || true` did not load" }
            return orTrue.isAllowed ? "an error must fail `(rule) || true` too; it was allowed" : nil
        }
        let expected = test["evaluateTo"]?.boolValue ?? false
        return decision.isAllowed == expected ? nil : "Firebase evaluates to \(expected); got \(decision)"
    }

    /// targaryen's query object (`orderByChild`, `orderByValue`, `startAt`, `limitToLast`, …).
    static func querySpec(_ json: JSONValue) throws -> QuerySpec {
        var spec = QuerySpec(orderBy: .key)
        if let child = json["orderByChild"]?.stringValue {
            spec = QuerySpec(orderBy: .child(try QuerySpec.parseChildPath(child)))
        } else if json["orderByValue"]?.boolValue == true {
            spec = QuerySpec(orderBy: .value)
        } else if json["orderByPriority"]?.boolValue == true {
            spec = QuerySpec(orderBy: .priority)
        }
        if let v = json["startAt"] { spec = try spec.startAt(try Node(json: v)) }
        if let v = json["endAt"] { spec = try spec.endAt(try Node(json: v)) }
        if let v = json["equalTo"] { spec = try spec.equalTo(try Node(json: v)) }
        if let n = json["limitToFirst"]?.doubleValue { spec = try spec.limitToFirst(Int(n)) }
        if let n = json["limitToLast"]?.doubleValue { spec = try spec.limitToLast(Int(n)) }
        return spec
    }
}
