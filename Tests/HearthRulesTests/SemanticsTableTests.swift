// Request semantics: multi-path updates as a whole, queries and .indexOn, admin, .priority and
// .info writes, the `$other` pattern, onDisconnect-style deletes.
import HearthModel
import HearthRules
import Testing

let updateRules = #"""
    {
      "rules": {
        "a": { ".write": true, ".validate": "newData.val() === newData.parent().child('b').val()" },
        "b": { ".write": true },
        "c": { ".write": true, ".validate": "newData.isString()" },
        "locked": { ".write": false }
      }
    }
    """#

let queryRules = #"""
    {
      "rules": {
        "scores": { ".read": true, ".indexOn": ["score", "meta/level"] },
        "people": { "$group": { ".read": "auth != null", ".indexOn": ".value" } },
        "single": { ".read": true, ".indexOn": "age" }
      }
    }
    """#

let profileRules = #"""
    {
      "rules": {
        ".write": "auth != null",
        "profile": {
          "name": { ".validate": "newData.isString()" },
          "$other": { ".validate": false }
        },
        "p": { ".write": "auth != null" }
      }
    }
    """#

func orderByChild(_ path: String) -> QuerySpec { QuerySpec(orderBy: .child(Path(stringLiteral: path))) }

let updateRows: [Row] = [
    Row(
        name: "each written location is granted", rules: updateRules,
        operation: .update([("a", "1"), ("b", "1")]), expected: .allowed(by: "/a/.write")),
    Row(
        name: "newData is the whole resulting tree: a and b written together agree", rules: updateRules,
        data: #"{"a":0,"b":0}"#, operation: .update([("a", "5"), ("b", "5")]), expected: .allowed(by: "/a/.write")),
    Row(
        name: "the same a alone disagrees with the old b", rules: updateRules,
        data: #"{"a":0,"b":0}"#, operation: .update([("a", "5")]), expected: .denied(by: "/a/.validate")),
    Row(
        name: "a set of a alone is checked against the old b", rules: updateRules,
        data: #"{"b":5}"#, operation: .set("a", "5"), expected: .allowed(by: "/a/.write")),
    Row(
        name: "one refused location refuses the whole update", rules: updateRules,
        operation: .update([("b", "1"), ("locked/x", "1")]), expected: .denied(by: "/locked/.write")),
    Row(
        name: "a location with no rule refuses the whole update", rules: updateRules,
        operation: .update([("b", "1"), ("elsewhere", "1")]), expected: .denied(by: nil)),
    Row(
        name: "one failed .validate refuses the whole update", rules: updateRules,
        operation: .update([("b", "1"), ("c", "2")]), expected: .denied(by: "/c/.validate")),
    Row(
        name: "a delete inside an update runs no .validate there", rules: updateRules,
        data: #"{"a":1,"c":"s"}"#, operation: .update([("c", "null"), ("b", "1")]), expected: .allowed(by: "/c/.write")),
    Row(
        name: "deep update paths", rules: updateRules,
        operation: .update([("c/x/y", "1")]), expected: .denied(by: "/c/.validate")),
]

/// Firebase's query-based rules guide: a user may list only the baskets they own, and
/// messages only a page at a time.
let queryBasedRules = #"""
    {"rules": {
      "baskets": {
        ".read": "auth.uid != null && query.orderByChild == 'owner' && query.equalTo == auth.uid",
        ".indexOn": "owner"
      },
      "messages": {".read": "query.orderByKey && query.limitToFirst <= 1000"}
    }}
    """#

let queryBasedRows: [Row] = [
    Row(
        name: "query-based: the owner's own baskets", rules: queryBasedRules, auth: alice,
        operation: .query("baskets", try! orderByChild("owner").equalTo(.string("alice"))),
        expected: .allowed(by: "/baskets/.read")),
    Row(
        name: "query-based: another owner's baskets", rules: queryBasedRules, auth: alice,
        operation: .query("baskets", try! orderByChild("owner").equalTo(.string("bob"))),
        expected: .denied(by: "/baskets/.read")),
    Row(
        name: "query-based: all baskets (a plain read is ordered by key)", rules: queryBasedRules, auth: alice,
        operation: .read("baskets"), expected: .denied(by: "/baskets/.read")),
    Row(
        name: "query-based: a page of messages", rules: queryBasedRules,
        operation: .query("messages", try! QuerySpec(orderBy: .key).limitToFirst(1000)),
        expected: .allowed(by: "/messages/.read")),
    Row(
        name: "query-based: too large a page", rules: queryBasedRules,
        operation: .query("messages", try! QuerySpec(orderBy: .key).limitToFirst(1001)),
        expected: .denied(by: "/messages/.read")),
    Row(
        name: "query-based: no limit (null <= 1000 fails)", rules: queryBasedRules,
        operation: .read("messages"), expected: .denied(by: "/messages/.read")),
]

let queryRows: [Row] = [
    Row(
        name: "orderByChild on an indexed child", rules: queryRules,
        operation: .query("scores", orderByChild("score")), expected: .allowed(by: "/scores/.read")),
    Row(
        name: "orderByChild on an indexed deep child", rules: queryRules,
        operation: .query("scores", orderByChild("meta/level")), expected: .allowed(by: "/scores/.read")),
    Row(
        name: "orderByChild on an unindexed child warns no_index", rules: queryRules,
        operation: .query("scores", orderByChild("name")), expected: .allowed(by: "/scores/.read"), noIndex: true),
    Row(
        name: "limited orderByChild on an unindexed child warns no_index", rules: queryRules,
        operation: .query("scores", try! orderByChild("name").limitToLast(3)), expected: .allowed(by: "/scores/.read"),
        noIndex: true),
    Row(
        name: ".indexOn as a single string", rules: queryRules,
        operation: .query("single", orderByChild("age")), expected: .allowed(by: "/single/.read")),
    Row(
        name: "orderByValue without .value index warns", rules: queryRules,
        operation: .query("scores", QuerySpec(orderBy: .value)), expected: .allowed(by: "/scores/.read"), noIndex: true),
    Row(
        name: "orderByValue with a .value index under a wildcard", rules: queryRules, auth: alice,
        operation: .query("people/g1", QuerySpec(orderBy: .value)), expected: .allowed(by: "/people/$group/.read")),
    Row(
        name: "orderByKey needs no index", rules: queryRules,
        operation: .query("scores", try! QuerySpec(orderBy: .key).limitToFirst(2)),
        expected: .allowed(by: "/scores/.read")),
    Row(
        name: "orderByPriority needs no index", rules: queryRules,
        operation: .query("scores", try! QuerySpec(orderBy: .priority).limitToFirst(2)),
        expected: .allowed(by: "/scores/.read")),
    Row(
        name: "an index is needed at the query's own location, not an ancestor's", rules: queryRules,
        operation: .query("scores/x", orderByChild("score")), expected: .allowed(by: "/scores/.read"), noIndex: true),
    Row(
        name: "a denied query carries no warning", rules: queryRules, auth: nil,
        operation: .query("people/g1", orderByChild("x")), expected: .denied(by: "/people/$group/.read")),
    Row(
        name: "a query is allowed only where the read is: not at the root", rules: queryRules,
        operation: .query("/", orderByChild("x")), expected: .denied(by: nil)),
]

let miscRows: [Row] = [
    Row(
        name: "admin bypasses rules", rules: updateRules, auth: .admin,
        operation: .set("locked", "1"), expected: .allowed(by: nil), reasonContains: "admin"),
    Row(
        name: "admin reads where no rule grants", rules: updateRules, auth: .admin,
        operation: .read("anything"), expected: .allowed(by: nil)),
    Row(
        name: "$other .validate false: only known children", rules: profileRules, auth: alice,
        operation: .set("profile", #"{"name":"A"}"#), expected: .allowed(by: "/.write")),
    Row(
        name: "$other .validate false: an unknown child is refused", rules: profileRules, auth: alice,
        operation: .set("profile", #"{"name":"A","extra":1}"#), expected: .denied(by: "/profile/$other/.validate")),
    Row(
        name: "$other .validate false: a named child's own .validate still runs", rules: profileRules, auth: alice,
        operation: .set("profile/name", "1"), expected: .denied(by: "/profile/name/.validate")),
    Row(
        name: "a .priority write is checked as a write of its node", rules: profileRules, data: #"{"p":1}"#,
        auth: alice, operation: .set("p/.priority", "5"), expected: .allowed(by: "/.write")),
    Row(
        name: "a .priority write by no one", rules: #"{"rules":{"p":{".write":"auth != null"}}}"#, data: #"{"p":1}"#,
        auth: nil, operation: .set("p/.priority", "5"), expected: .denied(by: "/p/.write")),
    Row(
        name: ".info is read-only", rules: #"{"rules":{".write":true}}"#,
        operation: .set(".info/connected", "true"), expected: .denied(by: nil), reasonContains: ".info"),
    Row(
        name: "a write at the root needs a root .write", rules: #"{"rules":{"a":{".write":true}}}"#,
        operation: .set("/", #"{"a":1}"#), expected: .denied(by: nil)),
    Row(
        name: "root .write grants everything", rules: #"{"rules":{".write":"auth.uid === 'alice'"}}"#, auth: alice,
        operation: .set("x/y/z", "1"), expected: .allowed(by: "/.write")),
]

@Suite struct SemanticsTableTests {
    @Test(arguments: updateRows) func updates(_ row: Row) throws { try check(row) }
    @Test(arguments: queryRows) func queries(_ row: Row) throws { try check(row) }
    @Test(arguments: queryBasedRows) func queryBased(_ row: Row) throws { try check(row) }

    @Test("query is refused outside .read rules when the rules load")
    func queryOnlyInReads() {
        for kind in [".write", ".validate"] {
            #expect(throws: RulesError.self, "\(kind)") {
                try RulesSet.parse(source: #"{"rules":{"a":{"\#(kind)":"query.limitToFirst == 1"}}}"#)
            }
        }
    }
    @Test(arguments: miscRows) func misc(_ row: Row) throws { try check(row) }

    @Test func theNoIndexWarningNamesTheIndexAndLocation() throws {
        let rules = try RulesSet.parse(source: queryRules)
        let decision = rules.canQuery(path: "scores", query: orderByChild("name"), auth: nil, root: .empty, now: 0)
        #expect(decision.warnings == [.noIndex(path: "scores", index: "name")])
        #expect(decision.warnings.map(\.wireCode) == ["no_index"])
        #expect(decision.warnings[0].description.contains(#"".indexOn": "name" at /scores"#))
        #expect(rules.indexOn(at: "people/anything") == [".value"])
        #expect(rules.hasIndex(path: "scores", on: .child("meta/level")))
        #expect(!rules.hasIndex(path: "scores", on: .child("meta")))
    }

    @Test func anEmptyUpdateIsRefused() throws {
        let rules = try RulesSet.parse(source: #"{"rules":{".write":true}}"#)
        #expect(!rules.canUpdate(writes: [], oldRoot: .empty, auth: nil, now: 0).isAllowed)
    }

    @Test func oneRulesSetIsSharedAcrossConcurrentRequests() async throws {
        let rules = try RulesSet.parse(source: userDataRules)
        let root = try Node(jsonText: #"{"users":{"alice":{"name":"A"}}}"#)
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<64 {
                group.addTask {
                    let auth = RulesAuth(uid: i % 2 == 0 ? "alice" : "bob")
                    return rules.canRead(path: "users/alice", auth: auth, root: root, now: 0).isAllowed == (i % 2 == 0)
                }
            }
            var all: [Bool] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.count == 64 && results.allSatisfy { $0 })
    }

    @Test func regexRulesAreSafeToEvaluateConcurrently() async throws {
        let rules = try RulesSet.parse(
            source: #"{"rules":{"$k":{".write":"newData.val().matches(/^[a-z]+[0-9]*$/i)"}}}"#)
        let ok = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<64 {
                group.addTask {
                    let good = i % 3 != 0
                    let value = Node.string(good ? "Abc\(i)" : "\(i)abc")
                    let path = Path(keys: [ChildKey("k\(i)")])
                    let d = rules.canWrite(
                        path: path, newRoot: Node.empty.updating(path, with: value),
                        oldRoot: .empty, auth: nil, now: 0)
                    return d.isAllowed == good
                }
            }
            var all = true
            for await r in group { all = all && r }
            return all
        }
        #expect(ok)
    }
}
