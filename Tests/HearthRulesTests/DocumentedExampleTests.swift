// Firebase's security-rules guide, example by example: user data, presence, validation,
// cascading, "rules are not filters".
import HearthModel
import HearthRules
import Testing

/// The guide's user-data example: each user reads and writes only their own node.
let userDataRules = """
    {
      "rules": {
        "users": {
          "$uid": {
            // only the signed-in owner
            ".read": "auth != null && auth.uid == $uid",
            ".write": "auth != null && auth.uid == $uid"
          }
        }
      }
    }
    """

/// The guide's presence example.
let presenceRules = """
    { "rules": { "status": { "$uid": { ".write": "$uid === auth.uid" } } } }
    """

/// The guide's validation examples, under a root that lets anyone write.
let validationRules = """
    {
      "rules": {
        ".write": true,
        "foo": { ".validate": "newData.isString() && newData.val().length < 100" },
        "user": { ".validate": "newData.hasChildren(['name', 'age'])" },
        "$any": { ".validate": "newData.hasChildren(['n'])" }
      }
    }
    """

/// The guide's cascading example, and its "rules are not filters" example.
let cascadingRules = """
    {
      "rules": {
        "foo": {
          // allows read to /foo/*
          ".read": "data.child('baz').val() === true",
          "bar": {
            /* ignored, since read was allowed already */
            ".read": false
          }
        },
        "records": {
          "rec1": { ".read": true },
          "rec2": { ".read": false }
        },
        "w": {
          ".write": true,
          "locked": { ".write": false }
        }
      }
    }
    """

let userDataRows: [Row] = [
    Row(
        name: "owner reads own node", rules: userDataRules, data: #"{"users":{"alice":{"name":"A"}}}"#,
        auth: alice, operation: .read("users/alice"), expected: .allowed(by: "/users/$uid/.read")),
    Row(
        name: "owner reads below own node (cascade)", rules: userDataRules, auth: alice,
        operation: .read("users/alice/name"), expected: .allowed(by: "/users/$uid/.read")),
    Row(
        name: "another user cannot read", rules: userDataRules, auth: bob,
        operation: .read("users/alice"), expected: .denied(by: "/users/$uid/.read")),
    Row(
        name: "unauthenticated cannot read", rules: userDataRules, auth: nil,
        operation: .read("users/alice"), expected: .denied(by: "/users/$uid/.read")),
    Row(
        name: "the users list is readable by no one", rules: userDataRules, auth: alice,
        operation: .read("users"), expected: .denied(by: nil)),
    Row(
        name: "owner writes own node", rules: userDataRules, auth: alice,
        operation: .set("users/alice", #"{"name":"Alice"}"#), expected: .allowed(by: "/users/$uid/.write")),
    Row(
        name: "owner deletes own node", rules: userDataRules, data: #"{"users":{"alice":{"name":"A"}}}"#,
        auth: alice, operation: .set("users/alice", "null"), expected: .allowed(by: "/users/$uid/.write")),
    Row(
        name: "another user cannot write", rules: userDataRules, auth: bob,
        operation: .set("users/alice/name", #""x""#), expected: .denied(by: "/users/$uid/.write")),
    Row(
        name: "unauthenticated cannot write", rules: userDataRules, auth: nil,
        operation: .set("users/alice", #""x""#), expected: .denied(by: "/users/$uid/.write")),
    Row(
        name: "nothing outside users is writable", rules: userDataRules, auth: alice,
        operation: .set("other", "1"), expected: .denied(by: nil)),
]

let presenceRows: [Row] = [
    Row(
        name: "user sets own presence", rules: presenceRules, auth: alice,
        operation: .set("status/alice", #""online""#), expected: .allowed(by: "/status/$uid/.write")),
    Row(
        name: "user removes own presence (onDisconnect)", rules: presenceRules, data: #"{"status":{"alice":"online"}}"#,
        auth: alice, operation: .set("status/alice", "null"), expected: .allowed(by: "/status/$uid/.write")),
    Row(
        name: "user cannot set another's presence", rules: presenceRules, auth: alice,
        operation: .set("status/bob", #""offline""#), expected: .denied(by: "/status/$uid/.write")),
    Row(
        name: "unauthenticated cannot set presence (auth.uid of null is null, not alice)",
        rules: presenceRules, auth: nil, operation: .set("status/alice", #""online""#),
        expected: .denied(by: "/status/$uid/.write")),
    Row(
        name: "presence is not readable without a .read", rules: presenceRules, auth: alice,
        operation: .read("status/alice"), expected: .denied(by: nil)),
]

let validationRows: [Row] = [
    Row(
        name: "short string passes", rules: validationRules,
        operation: .set("foo", #""hello""#), expected: .allowed(by: "/.write")),
    Row(
        name: "99 characters pass", rules: validationRules,
        operation: .set("foo", "\"" + String(repeating: "x", count: 99) + "\""), expected: .allowed(by: "/.write")),
    Row(
        name: "100 characters fail", rules: validationRules,
        operation: .set("foo", "\"" + String(repeating: "x", count: 100) + "\""),
        expected: .denied(by: "/foo/.validate")),
    Row(
        name: "a number is not a string", rules: validationRules,
        operation: .set("foo", "42"), expected: .denied(by: "/foo/.validate")),
    Row(
        name: "an object at foo is not a string", rules: validationRules,
        operation: .set("foo/x", "1"), expected: .denied(by: "/foo/.validate")),
    Row(
        name: "delete skips .validate", rules: validationRules, data: #"{"foo":"old"}"#,
        operation: .set("foo", "null"), expected: .allowed(by: "/.write")),
    Row(
        name: "required children present", rules: validationRules,
        operation: .set("user", #"{"name":"A","age":3}"#), expected: .allowed(by: "/.write")),
    Row(
        name: "required child missing", rules: validationRules,
        operation: .set("user", #"{"name":"A"}"#), expected: .denied(by: "/user/.validate")),
    Row(
        name: "writing one child runs the parent's .validate on the resulting node (fails)",
        rules: validationRules, operation: .set("user/name", #""A""#), expected: .denied(by: "/user/.validate")),
    Row(
        name: "writing one child runs the parent's .validate on the resulting node (passes)",
        rules: validationRules, data: #"{"user":{"name":"A","age":3}}"#,
        operation: .set("user/name", #""B""#), expected: .allowed(by: "/.write")),
    Row(
        name: "deleting a required child fails the parent's .validate", rules: validationRules,
        data: #"{"user":{"name":"A","age":3}}"#, operation: .set("user/age", "null"),
        expected: .denied(by: "/user/.validate")),
    Row(
        name: "deleting the last child leaves the parent null: its .validate does not run", rules: validationRules,
        data: #"{"user":{"name":"A"}}"#, operation: .set("user/name", "null"), expected: .allowed(by: "/.write")),
    Row(
        name: ".validate does not cascade: $any/n need not have an 'n' child", rules: validationRules,
        operation: .set("thing", #"{"n":{"deep":1}}"#), expected: .allowed(by: "/.write")),
    Row(
        name: "wildcard .validate applies to each new child", rules: validationRules,
        operation: .set("thing", #"{"m":1}"#), expected: .denied(by: "/$any/.validate")),
]

let cascadingRows: [Row] = [
    Row(
        name: "foo/.read grants foo/bar despite foo/bar/.read false", rules: cascadingRules,
        data: #"{"foo":{"baz":true,"bar":1}}"#, operation: .read("foo/bar"), expected: .allowed(by: "/foo/.read")),
    Row(
        name: "when foo/.read is false, foo/bar/.read false decides", rules: cascadingRules,
        data: #"{"foo":{"baz":false}}"#, operation: .read("foo/bar"), expected: .denied(by: "/foo/bar/.read")),
    Row(
        name: "rules are not filters: records is denied although rec1 is readable", rules: cascadingRules,
        operation: .read("records"), expected: .denied(by: nil)),
    Row(
        name: "rec1 alone is readable", rules: cascadingRules,
        operation: .read("records/rec1"), expected: .allowed(by: "/records/rec1/.read")),
    Row(
        name: "rec2 is not", rules: cascadingRules,
        operation: .read("records/rec2"), expected: .denied(by: "/records/rec2/.read")),
    Row(
        name: "w/.write true cannot be revoked by w/locked/.write false", rules: cascadingRules,
        operation: .set("w/locked/x", "1"), expected: .allowed(by: "/w/.write")),
    Row(
        name: "a query is a read: denied where the read is", rules: cascadingRules,
        operation: .query("records", try! QuerySpec(orderBy: .key).limitToFirst(1)), expected: .denied(by: nil)),
]

@Suite struct DocumentedExampleTests {
    @Test(arguments: userDataRows) func userData(_ row: Row) throws { try check(row) }
    @Test(arguments: presenceRows) func presence(_ row: Row) throws { try check(row) }
    @Test(arguments: validationRows) func validation(_ row: Row) throws { try check(row) }
    @Test(arguments: cascadingRows) func cascading(_ row: Row) throws { try check(row) }

    @Test func theDecisionNamesTheRuleAndItsExpressionText() throws {
        let rules = try RulesSet.parse(source: userDataRules)
        let decision = rules.canWrite(
            path: "users/alice", newRoot: try Node(jsonText: #"{"users":{"alice":1}}"#),
            oldRoot: .empty, auth: alice, now: 0)
        #expect(decision.isAllowed)
        #expect(decision.rule?.location == "/users/$uid")
        #expect(decision.rule?.kind == .write)
        #expect(decision.rule?.expression == "auth != null && auth.uid == $uid")
        #expect(decision.path == "users/alice")
        #expect(decision.description.contains("/users/$uid/.write: auth != null && auth.uid == $uid"))
    }
}
