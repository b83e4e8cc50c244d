// Expr: the parsed form of a rule expression, and the static types the parser checks.

import HearthModel

/// A parsed rule expression. Built once when the rules file loads; evaluated per request.
struct Expr: Sendable {
    let kind: Kind
    /// Offset (in Unicode scalars) of the expression's first character, for error messages.
    let offset: Int
    /// The levels of the tree from here down (a leaf is 1): the evaluator recurses this deep,
    /// so the parser refuses a tree higher than its limit.
    let height: Int

    init(kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
        var below = 0
        kind.forEachChild { below = max(below, $0.height) }
        height = below + 1
    }

    indirect enum Kind: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        /// A string literal used as a child path (`child('a/b')`, `hasChildren(['a'])`):
        /// the text, and the path it was checked and parsed into when the rules loaded.
        case path(String, Path)
        case regex(RuleRegex)
        case array([Expr])
        /// `auth`, `now`, `root`, `data` or `newData`.
        case builtin(Builtin)
        /// A `$wildcard` captured from the path: its name without the `$`, and its position
        /// among the wildcards on the rule's location (the index into the captured keys).
        case capture(String, Int)
        /// `target.name`, or `target['name']` with a constant name.
        case member(Expr, String)
        /// `target[index]` with a computed index.
        case index(Expr, Expr)
        /// `target.name(arguments)`.
        case call(Expr, Method, [Expr])
        case not(Expr)
        case negate(Expr)
        case binary(BinaryOperator, Expr, Expr)
        /// `a && b && …`: a whole chain as one node (evaluated by a loop, not by recursion;
        /// generated rules hold chains of thousands of terms).
        case and([Expr])
        /// `a || b || …`, as `and`.
        case or([Expr])
        case conditional(Expr, Expr, Expr)

        /// Calls `body` with each direct subexpression.
        func forEachChild(_ body: (Expr) -> Void) {
            switch self {
            case .null, .bool, .number, .string, .path, .regex, .builtin, .capture: break
            case .array(let items), .and(let items), .or(let items): items.forEach(body)
            case .member(let target, _): body(target)
            case let .index(target, index): body(target); body(index)
            case let .call(target, _, arguments): body(target); arguments.forEach(body)
            case .not(let operand), .negate(let operand): body(operand)
            case let .binary(_, lhs, rhs): body(lhs); body(rhs)
            case let .conditional(condition, yes, no): body(condition); body(yes); body(no)
            }
        }
    }
}

/// The variables every rule can read.
enum Builtin: String, Sendable {
    case auth, now, root, data, newData, query
}

/// The members of `query` in `.read` rules (Firebase's query-based rules).
let queryMembers: Set<String> = [
    "orderByKey", "orderByPriority", "orderByValue", "orderByChild", "startAt", "endAt", "equalTo",
    "limitToFirst", "limitToLast",
]

/// The operators that evaluate both operands.
enum BinaryOperator: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case equal = "==", notEqual = "!="
}

/// Every method the language has: snapshot methods and string methods.
enum Method: String, Sendable, CaseIterable {
    // RuleDataSnapshot
    case val, exists, child, parent, hasChild, hasChildren, isNumber, isString, isBoolean, getPriority
    // String
    case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase, matches

    var isSnapshotMethod: Bool {
        switch self {
        case .val, .exists, .child, .parent, .hasChild, .hasChildren, .isNumber, .isString, .isBoolean, .getPriority:
            true
        default:
            false
        }
    }
}

/// What the parser knows about an expression's type. `unknown` is a value only known at
/// evaluation (`auth.token.x`, `data.val()`): checks on it are left to evaluation.
enum StaticType: Equatable {
    case boolean, number, string, null, snapshot, regex, array, unknown

    var name: String {
        switch self {
        case .boolean: "boolean"
        case .number: "number"
        case .string: "string"
        case .null: "null"
        case .snapshot: "RuleDataSnapshot"
        case .regex: "regular expression"
        case .array: "array"
        case .unknown: "value"
        }
    }
}
