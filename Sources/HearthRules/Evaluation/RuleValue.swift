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
    /// Boxed, as `regex` is: a snapshot is about 100 bytes, and every value (and every frame
    /// of the recursive evaluator holding one) would be as large.
    indirect case snapshot(RuleSnapshot)
    /// An object or array from the `auth` variable (`auth`, `auth.token`, …), whose members
    /// can be read; scalars from it become the cases above.
    case json(JSONValue)
    indirect case regex(RuleRegex)
    case array([String])

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .object: "object"
        case .snapshot: "RuleDataSnapshot"
        case .json(.array): "array"
        case .json: "object"
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

    /// A leaf's value. Server-value placeholders should have been resolved by the caller
    /// before rules run; one that was not reads as `null`.
    init(leaf: LeafValue) {
        switch leaf {
        case .bool(let b): self = .bool(b)
        case .number(let d): self = .number(d)
        // Rules arithmetic is JavaScript's: a 64-bit integer beyond 2^53 is its nearest double.
        case .integer(let i): self = .number(Double(i))
        case .string(let s): self = .string(s)
        case .serverValue: self = .null
        }
    }

    /// A value from the `auth` variable: scalars as themselves, objects and arrays wrapped.
    init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let d): self = .number(d)
        case .integer(let i): self = .number(Double(i))
        case .string(let s): self = .string(s)
        case .array, .object: self = .json(json)
        }
    }

    /// Strict equality (`==` and `===` alike): same type and same value; strings by exact
    /// code points. Objects (the `.val()` sentinel, `auth`, claims objects) equal nothing,
    /// not even themselves, so `auth != null` is true for a signed-in user.
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
