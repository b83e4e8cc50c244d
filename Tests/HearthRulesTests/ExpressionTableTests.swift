// Every construct of the expression language, one row each: rules, data, auth and operation →
// allowed or denied, with the rule that decided.
import HearthModel
import HearthRules
import Testing

/// The data the expression rows read: `t` holds one child of each kind.
let expressionData = #"""
    {
      "t": {
        "s": "Hello World", "n": 7, "b": true, "o": {"k": 1},
        "p": {".value": 1, ".priority": 5}, "sp": {".value": "x", ".priority": "hi"},
        "emoji": "😀"
      },
      "admins": {"alice": true}
    }
    """#

/// A rules file with one rule of `kind` at `/t` (built as JSON, so any expression text is
/// escaped correctly).
func oneRule(_ kind: String, _ expression: String, at location: [String] = ["t"]) -> String {
    var value = JSONValue.object([JSONMember(key: kind, value: .string(expression))])
    for key in location.reversed() { value = .object([JSONMember(key: key, value: value)]) }
    return JSONValue.object([JSONMember(key: "rules", value: value)]).serialized()
}

/// A read of `/t` decided by the `.read` expression at `/t`.
func readRow(
    _ expression: String, _ allowed: Bool, auth: RulesAuth? = alice,
    data: String = expressionData, reason: String? = nil
) -> Row {
    Row(
        name: "\(expression) [auth \(auth?.uid ?? "null")] → \(allowed)", rules: oneRule(".read", expression),
        data: data, auth: auth, operation: .read("t"),
        expected: allowed ? .allowed(by: "/t/.read") : .denied(by: "/t/.read"), reasonContains: reason)
}

/// A set of `/t` to `json`, decided by the `.write` expression at `/t`.
func writeRow(
    _ expression: String, _ json: String, _ allowed: Bool, auth: RulesAuth? = alice,
    data: String = expressionData
) -> Row {
    Row(
        name: "\(expression) writing \(json) → \(allowed)", rules: oneRule(".write", expression),
        data: data, auth: auth, operation: .set("t", json),
        expected: allowed ? .allowed(by: "/t/.write") : .denied(by: "/t/.write"))
}

let googleUser = RulesAuth(
    uid: "g1", provider: "google.com",
    token: .object([
        JSONMember(
            key: "firebase",
            value: .object([
                JSONMember(key: "sign_in_provider", value: .string("google.com")),
                JSONMember(
                    key: "identities",
                    value: .object([
                        JSONMember(key: "email", value: .array([.string("g1@example.com")]))
                    ])),
            ]))
    ]))

/// `databaseAuthVariableOverride: {"uid": "my-service-worker"}`.
let serviceWorker = RulesAuth(variable: [JSONMember(key: "uid", value: .string("my-service-worker"))])

let literalRows: [Row] = [
    readRow("true", true),
    readRow("false", false),
    readRow("1 === 1", true),
    readRow("1.5e1 === 15", true),
    readRow("-1 < 0", true),
    readRow(#"'a' === "a""#, true),
    readRow("null === null", true),
    readRow("'it\\'s' === \"it's\"", true),
    Row(
        name: "boolean true (not a string) as the rule", rules: #"{"rules":{"t":{".read":true}}}"#,
        operation: .read("t"), expected: .allowed(by: "/t/.read")),
    Row(
        name: "boolean false as the rule", rules: #"{"rules":{"t":{".read":false}}}"#,
        operation: .read("t"), expected: .denied(by: "/t/.read")),
]

let authRows: [Row] = [
    readRow("auth != null", true),
    readRow("auth != null", false, auth: nil),
    readRow("auth == null", true, auth: nil),
    readRow("auth === null", false),
    readRow("auth.uid === 'alice'", true),
    readRow("auth.uid === 'alice'", false, auth: bob),
    // Firebase: a property of null is null; an operator or method that needs a value fails.
    readRow("auth.uid === 'alice'", false, auth: nil),
    readRow("auth.uid !== 'alice'", true, auth: nil),
    readRow("auth.token.claims.deeper == null", true, auth: nil),
    readRow("auth.uid.length > 0", false, auth: nil, reason: "cannot compare"),
    readRow("auth.uid.contains('a')", false, auth: nil),
    readRow("auth.provider === 'password'", true),
    readRow("auth.provider === 'password'", false, auth: bob),
    readRow("auth.token.email === 'alice@example.com'", true),
    readRow("auth.token.email_verified === true", true),
    readRow("auth.token['email_verified'] == true", true),
    readRow("auth.token.admin === true", false),
    readRow("auth.token.admin == null", true),
    readRow("auth.token.firebase.sign_in_provider === 'google.com'", true, auth: googleUser),
    readRow("auth.token.firebase.identities.email[0] === 'g1@example.com'", true, auth: googleUser),
    readRow("auth.token.firebase.identities.email.length === 1", true, auth: googleUser),
    readRow("auth.uid === 'my-service-worker'", true, auth: serviceWorker),
    readRow("auth.provider == null", true, auth: serviceWorker),
    readRow("auth == null || auth.uid === 'x'", true, auth: nil),
    readRow("auth != null && auth.uid === 'alice'", false, auth: nil),
]

let variableRows: [Row] = [
    Row(
        name: "$room + '/' + $msg",
        rules: oneRule(".read", "$room + '/' + $msg === 'r1/m1'", at: ["rooms", "$room", "$msg"]),
        operation: .read("rooms/r1/m1"), expected: .allowed(by: "/rooms/$room/$msg/.read")),
    Row(
        name: "$room + '/' + $msg (other keys)",
        rules: oneRule(".read", "$room + '/' + $msg === 'r1/m1'", at: ["rooms", "$room", "$msg"]),
        operation: .read("rooms/r1/m2"), expected: .denied(by: "/rooms/$room/$msg/.read")),
    Row(
        name: "a named child wins over the wildcard",
        rules: #"{"rules":{"u":{"$id":{".read":"$id === 'x'"},"special":{".read":true}}}}"#,
        operation: .read("u/special"), expected: .allowed(by: "/u/special/.read")),
    Row(
        name: "the wildcard takes every other key",
        rules: #"{"rules":{"u":{"$id":{".read":"$id === 'x'"},"special":{".read":true}}}}"#,
        operation: .read("u/x"), expected: .allowed(by: "/u/$id/.read")),
    Row(
        name: "the wildcard's rule denies",
        rules: #"{"rules":{"u":{"$id":{".read":"$id === 'x'"},"special":{".read":true}}}}"#,
        operation: .read("u/y"), expected: .denied(by: "/u/$id/.read")),
    readRow("now === 1700000000000", true),
    readRow("now > 1600000000000 && now < 1800000000000", true),
]

let snapshotRows: [Row] = [
    readRow("root.child('admins').child(auth.uid).exists()", true),
    readRow("root.child('admins').child(auth.uid).exists()", false, auth: bob),
    readRow("root.child('admins/' + auth.uid).val() === true", true),
    readRow("data.exists()", true),
    readRow("data.exists()", false, data: "null"),
    readRow("data.child('n').val() === 7", true),
    readRow("!data.child('nope').exists()", true),
    readRow("data.child('s').isString()", true),
    readRow("data.child('n').isString()", false),
    readRow("data.child('n').isNumber()", true),
    readRow("data.child('s').isNumber()", false),
    readRow("data.child('b').isBoolean()", true),
    readRow("data.child('n').isBoolean()", false),
    readRow("data.child('o').isString() || data.child('o').isNumber() || data.child('o').isBoolean()", false),
    readRow("data.hasChild('o')", true),
    readRow("data.hasChild('o/k')", true),
    readRow("data.hasChild('zz')", false),
    readRow("data.hasChildren()", true),
    readRow("data.child('s').hasChildren()", false),
    readRow("data.hasChildren(['s', 'n'])", true),
    readRow("data.hasChildren(['s', 'zz'])", false),
    readRow("data.child('o/k').parent().hasChild('k')", true),
    readRow("data.parent().child('admins/alice').val() === true", true),
    readRow("root.parent().exists()", false, reason: "root has no parent"),
    readRow("data.child('p').getPriority() === 5", true),
    readRow("data.child('p').val() === 1", true),
    readRow("data.child('sp').getPriority() === 'hi'", true),
    readRow("data.child('n').getPriority() === null", true),
    readRow("data.child('o').val() === null", false),
    readRow("data.child('nope').val() === null", true),
    // A path that is no valid path names no child (Firebase), literal or computed.
    readRow("data.child(auth.uid + '.x').exists()", false),
    readRow("!data.child('a.b').exists() && !data.hasChild('a.b') && !data.hasChildren(['s', 'a#b'])", true),
    readRow("data.child('s.x').val() === null", true),
    readRow("data.hasChildren([auth.uid, 's'])", false),
    readRow("root.child('t/' + 's').hasChild('s') || data.hasChildren(['s', auth.provider + 'x'])", false),
]

let operatorRows: [Row] = [
    readRow("data.child('n').val() + 1 === 8", true),
    readRow("data.child('n').val() - 1 === 6", true),
    readRow("data.child('n').val() * 2 === 14", true),
    readRow("data.child('n').val() / 2 === 3.5", true),
    readRow("data.child('n').val() % 4 === 3", true),
    readRow("-data.child('n').val() === -7", true),
    readRow("2 + 3 * 4 === 14", true),
    readRow("(2 + 3) * 4 === 20", true),
    readRow("10 - 4 - 3 === 3", true),
    readRow("'ab' + 'c' === 'abc'", true),
    readRow("data.child('s').val() + '!' === 'Hello World!'", true),
    // Firebase: a division by zero is NaN, ordered and equal with nothing; `+` with a string
    // concatenates a number as JavaScript prints it.
    readRow("data.child('n').val() / 0 > 0", false),
    readRow("data.child('n').val() / 0 <= 0", false),
    readRow("(1 / 0 + '') === 'NaN' && (0 % 0 + '') === 'NaN'", true),
    readRow("data.child('s').val() + 1 === 'Hello World1'", true),
    readRow("1.5 + data.child('s').val() === '1.5Hello World' && 1e21 + '' === '1e+21'", true),
    readRow("data.child('s').val() + auth.token.email_verified === 'x'", false, reason: "cannot add"),
    readRow("root['child']('t')['hasChild']('s') && data.child('s').val()['length'] === 11", true),
    readRow("7 > 6", true), readRow("7 > 7", false),
    readRow("7 >= 7", true), readRow("6 >= 7", false),
    readRow("6 < 7", true), readRow("7 < 7", false),
    readRow("7 <= 7", true), readRow("8 <= 7", false),
    readRow("'abc' < 'abd'", true),
    readRow("'B' < 'a'", true),
    readRow("data.child('s').val() > 3", false, reason: "cannot compare"),
    readRow("1 == 1", true), readRow("1 != 2", true), readRow("1 != 1", false),
    readRow("1 === 1", true), readRow("1 !== 1", false),
    readRow("1 !== '1'", true),
    readRow("'1' == 1", false),
    readRow("true == 1", false),
    readRow("true && false", false), readRow("true && true", true),
    readRow("false || true", true), readRow("false || false", false),
    readRow("!false", true), readRow("!(1 === 1)", false),
    readRow("1 === 1 ? true : false", true),
    readRow("false ? true : 1 === 2", false),
    readRow("data.child('n').val() > 5 ? data.child('s').isString() : false", true),
    readRow("1 === 1 || data.child('nope').val().length > 0", true),
]

let stringRows: [Row] = [
    readRow("data.child('s').val().length === 11", true),
    readRow("'abc'.length === 3", true),
    readRow("data.child('emoji').val().length === 2", true),
    readRow("data.child('n').val().length > 0", false, reason: "number has no property 'length'"),
    readRow("data.child('s').val().contains('lo W')", true),
    readRow("data.child('s').val().contains('xyz')", false),
    readRow("data.child('s').val().beginsWith('Hello')", true),
    readRow("data.child('s').val().beginsWith('World')", false),
    readRow("data.child('s').val().endsWith('World')", true),
    readRow("data.child('s').val().endsWith('Hello')", false),
    readRow("data.child('s').val().replace('o', '0') === 'Hell0 W0rld'", true),
    readRow("data.child('s').val().toLowerCase() === 'hello world'", true),
    readRow("data.child('s').val().toUpperCase() === 'HELLO WORLD'", true),
    readRow("data.child('s').val().matches(/^Hello/)", true),
    readRow("data.child('s').val().matches(/^hello/)", false),
    readRow("data.child('s').val().matches(/^hello/i)", true),
    readRow("data.child('s').val().matches(/\\d/)", false),
    readRow("data.child('s').val().matches(/^[A-Z][a-z]+ [A-Z][a-z]+$/)", true),
    readRow("auth.token.email.matches(/.*@example\\.com$/)", true),
    readRow("auth.token.email.matches(/.*@example\\.com$/)", false, auth: bob),
    readRow("data.child('emoji').val().matches(/^.$/)", true),
    readRow("data.child('n').val().matches(/7/)", false, reason: "string method"),
]

let newDataRows: [Row] = [
    writeRow("newData.val() === 'x'", #""x""#, true),
    writeRow("newData.val() === 'x'", #""y""#, false),
    writeRow("newData.exists()", "null", false),
    writeRow("!newData.exists()", "null", true),
    writeRow("!data.exists()", #""new""#, false),
    writeRow("!data.exists()", #""new""#, true, data: "null"),
    writeRow("root.child('t/n').val() === 7", #""replaces n""#, true),
    writeRow("newData.child('a').isNumber() && newData.hasChildren(['a', 'b'])", #"{"a":1,"b":2}"#, true),
    writeRow("newData.child('a').isNumber()", #"{"a":"1"}"#, false),
    writeRow("newData.parent().child('admins').hasChild(auth.uid)", "1", true),
    writeRow("newData.getPriority() === 3", #"{".value":1,".priority":3}"#, true),
    writeRow("newData.val() === data.val() + 1", "8", false),
    Row(
        name: ".write evaluates newData at its own location when a deeper path is written",
        rules: oneRule(".write", "newData.child('x').val() === 1", at: ["a"]),
        operation: .set("a/x", "1"), expected: .allowed(by: "/a/.write")),
    Row(
        name: "newData.parent() of a wildcard write sees the sibling",
        rules: #"{"rules":{"items":{"$i":{".write":"newData.parent().child('owner').val() === auth.uid"}}}}"#,
        data: #"{"items":{"owner":"alice"}}"#, auth: alice,
        operation: .set("items/x", "1"), expected: .allowed(by: "/items/$i/.write")),
    Row(
        name: "newData.parent() of a wildcard write sees the sibling (other user)",
        rules: #"{"rules":{"items":{"$i":{".write":"newData.parent().child('owner').val() === auth.uid"}}}}"#,
        data: #"{"items":{"owner":"alice"}}"#, auth: bob,
        operation: .set("items/x", "1"), expected: .denied(by: "/items/$i/.write")),
    Row(
        name: "now in .validate: a timestamp in the past passes",
        rules: #"{"rules":{".write":true,"ts":{".validate":"newData.isNumber() && newData.val() <= now"}}}"#,
        operation: .set("ts", "1600000000000"), expected: .allowed(by: "/.write")),
    Row(
        name: "now in .validate: a timestamp in the future fails",
        rules: #"{"rules":{".write":true,"ts":{".validate":"newData.isNumber() && newData.val() <= now"}}}"#,
        operation: .set("ts", "1800000000000"), expected: .denied(by: "/ts/.validate")),
    Row(
        name: "the rule evaluates to a non-boolean: false", rules: oneRule(".read", "data.child('s').val()"),
        data: expressionData, operation: .read("t"), expected: .denied(by: "/t/.read"), reasonContains: "not a boolean"),
]

@Suite struct ExpressionTableTests {
    @Test(arguments: literalRows) func literals(_ row: Row) throws { try check(row) }
    @Test(arguments: authRows) func auth(_ row: Row) throws { try check(row) }
    @Test(arguments: variableRows) func wildcardsAndNow(_ row: Row) throws { try check(row) }
    @Test(arguments: snapshotRows) func snapshots(_ row: Row) throws { try check(row) }
    @Test(arguments: operatorRows) func operators(_ row: Row) throws { try check(row) }
    @Test(arguments: stringRows) func strings(_ row: Row) throws { try check(row) }
    @Test(arguments: newDataRows) func newData(_ row: Row) throws { try check(row) }
}
