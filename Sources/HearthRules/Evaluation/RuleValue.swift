// RuleValue: the values an expression evaluates to.

import HearthModel

/// A snapshot of one location in one version of the tree (`root`, `data`, `newData`).
struct RuleSnapshot {
    /// The whole tree this snapshot belongs to (before or after the write).
    let tree: Node
    let path: Path
    let node: Node
}

/// A value during evaluation.
enum RuleValue {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// What `.val()` gives for a node with children: Firebase's opaque sentinel, equal to
    /// nothing and usable in no operator.
    case object
    case snapshot(RuleSnapshot)
    /// `auth` of a signed-in user.
    case auth(RulesAuth)
    /// A claims object under `auth.token` (a children node).
    case claims(Node)
    case regex(RuleRegex)
    case array([String])

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .object: "object"
        case .snapshot: "RuleDataSnapshot"
        case .auth, .claims: "object"
        case .regex: "regular expression"
        case .array: "array"
        }
    }

    /// The primitive a node holds: its leaf value, `null` when absent, or the object sentinel.
    init(primitive node: Node) {
        if node.isEmpty { self = .null; return }
        guard let leaf = node.leafValue else { self = .object; return }
        self.init(leaf: leaf)
    }

    init(leaf: LeafValue) {
        if case .bool(let b) = leaf { self = .bool(b); return }
        if case .number(let d) = leaf { self = .number(d); return }
        if case .string(let s) = leaf { self = .string(s); return }
        // Any other numeric representation (an exact integer) prints as its decimal value;
        // server-value placeholders never reach stored data and read as null.
        if let d = Double(leaf.description), d.isFinite { self = .number(d); return }
        self = .null
    }

    /// Strict equality (`==` and `===` alike): same type and same value; strings by exact
    /// code points; the object sentinel equals nothing.
    func strictlyEquals(_ other: RuleValue) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a.unicodeScalars.elementsEqual(b.unicodeScalars)
        default: false
        }
    }
}
