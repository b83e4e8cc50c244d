import HearthModel
import HearthRules
import Testing

/// One request of a table row.
enum Operation: Sendable {
    /// A read or listen at a path.
    case read(String)
    /// A query at a path.
    case query(String, QuerySpec)
    /// A set of a path to JSON (`null` deletes).
    case set(String, String)
    /// A multi-path update: absolute paths and JSON values, applied together.
    case update([(String, String)])
}

/// What a row expects: allowed or denied, and the rule that decided, spelled
/// `/location/.kind` (`/users/$uid/.write`), or `nil` when no rule applies.
enum Outcome: Sendable, CustomStringConvertible {
    case allowed(by: String?)
    case denied(by: String?)

    var isAllowed: Bool { if case .allowed = self { true } else { false } }
    var rule: String? {
        switch self {
        case .allowed(let r), .denied(let r): r
        }
    }
    var description: String { "\(isAllowed ? "allowed" : "denied") by \(rule ?? "no rule")" }
}

/// One row of a table: rules, data, auth and operation → outcome.
struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let rules: String
    var data: String = "null"
    var auth: RulesAuth? = nil
    let operation: Operation
    let expected: Outcome
    /// Whether the decision must (true) or must not (false) carry the no_index warning.
    var noIndex: Bool = false
    /// Text the decision's reason must contain, when given.
    var reasonContains: String? = nil
    /// `now` in milliseconds.
    var now: Double = 1_700_000_000_000

    var testDescription: String { name }
}

/// The rule a decision names, spelled `/location/.kind`.
func ruleID(_ decision: Decision) -> String? {
    decision.rule.map { ($0.location == "/" ? "" : $0.location) + "/" + $0.kind.rawValue }
}

/// Runs one row's operation against its rules and data.
func decide(_ row: Row) throws -> Decision {
    let rules = try RulesSet.parse(source: row.rules)
    let root = try Node(jsonText: row.data)
    switch row.operation {
    case .read(let p):
        return rules.canRead(path: try Path(validating: p), auth: row.auth, root: root, now: row.now)
    case .query(let p, let spec):
        return rules.canQuery(path: try Path(validating: p), query: spec, auth: row.auth, root: root, now: row.now)
    case .set(let p, let json):
        let path = try Path(validating: p)
        let newRoot = root.updating(path, with: try Node(jsonText: json, at: path))
        return rules.canWrite(path: path, newRoot: newRoot, oldRoot: root, auth: row.auth, now: row.now)
    case .update(let writes):
        var parsed: [(path: Path, value: Node)] = []
        for (p, json) in writes {
            let path = try Path(validating: p)
            parsed.append((path, try Node(jsonText: json, at: path)))
        }
        return rules.canUpdate(writes: parsed, oldRoot: root, auth: row.auth, now: row.now)
    }
}

/// Checks one row: allowed/denied, the deciding rule, the warning and the reason.
func check(_ row: Row) throws {
    let decision = try decide(row)
    #expect(decision.isAllowed == row.expected.isAllowed, "\(row.name): \(decision)")
    #expect(ruleID(decision) == row.expected.rule, "\(row.name): \(decision)")
    #expect(decision.isMissingIndex == row.noIndex, "\(row.name): \(decision)")
    if let text = row.reasonContains {
        #expect(decision.reason.contains(text), "\(row.name): reason was \(decision.reason)")
    }
}

let alice = RulesAuth(
    uid: "alice", provider: "password",
    token: .object([
        JSONMember(key: "email", value: .string("alice@example.com")),
        JSONMember(key: "email_verified", value: .bool(true)),
    ]))
let bob = RulesAuth(uid: "bob")
