// Evaluator: one rule expression against one request, Firebase's way — an error inside the
// expression (a type mismatch, reading a property of null) makes the rule false, never a crash.

import HearthModel

/// Everything an expression can see while it is evaluated at one location.
struct EvaluationContext {
    let auth: RulesAuth?
    /// `now`: milliseconds since the epoch.
    let now: Double
    /// The tree before the operation (`root`, `data`).
    let oldRoot: Node
    /// The tree after the whole operation (`newData`); the old tree for reads.
    let newRoot: Node
    /// The location the rule is evaluated at.
    let path: Path
    /// `oldRoot` at `path` (`data`), found once while walking down.
    let data: Node
    /// `newRoot` at `path` (`newData`), found once while walking down.
    let newData: Node
    /// The keys the `$wildcards` on the rule's location captured, from the root down.
    let captures: [String]
}

/// Why an expression could not produce a value; the rule then counts as false.
struct EvaluationError: Error {
    let message: String
}

enum Evaluator {
    /// Evaluates a whole rule: `true` only when the expression yields the boolean `true`.
    static func isTrue(_ expr: Expr, in context: EvaluationContext) -> Result<Bool, EvaluationError> {
        do {
            let value = try evaluate(expr, context)
            guard case .bool(let b) = value else {
                return .failure(EvaluationError(message: "the rule evaluated to a \(value.typeName), not a boolean"))
            }
            return .success(b)
        } catch {
            return .failure(error)
        }
    }

    private static func fail(_ message: String) -> EvaluationError { EvaluationError(message: message) }

    static func evaluate(_ expr: Expr, _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        switch expr.kind {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let d): return .number(d)
        case .string(let s), .path(let s, _): return .string(s)
        case .regex(let r): return .regex(r)
        case .array(let items):
            var strings: [String] = []
            for item in items {
                guard case .string(let s) = try evaluate(item, c) else { throw fail("array elements must be strings") }
                strings.append(s)
            }
            return .array(strings)
        case .builtin(let b):
            switch b {
            case .auth: return c.auth.map { .json($0.json) } ?? .null
            case .now: return .number(c.now)
            case .root: return .snapshot(RuleSnapshot(tree: c.oldRoot, path: .root, node: c.oldRoot))
            case .data: return .snapshot(RuleSnapshot(tree: c.oldRoot, path: c.path, node: c.data))
            case .newData: return .snapshot(RuleSnapshot(tree: c.newRoot, path: c.path, node: c.newData))
            }
        case let .capture(name, index):
            guard index < c.captures.count else { throw fail("$\(name) is not bound") }
            return .string(c.captures[index])
        case let .member(target, name):
            return try member(try evaluate(target, c), name)
        case let .index(target, index):
            let base = try evaluate(target, c)
            switch try evaluate(index, c) {
            case .string(let s): return try member(base, s)
            case .number(let d): return try member(base, d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)")
            case let other: throw fail("cannot index with a \(other.typeName)")
            }
        case let .call(target, method, arguments):
            return try call(try evaluate(target, c), method, arguments, c)
        case .not(let operand):
            guard case .bool(let b) = try evaluate(operand, c) else { throw fail("'!' needs a boolean") }
            return .bool(!b)
        case .negate(let operand):
            guard case .number(let d) = try evaluate(operand, c) else { throw fail("unary '-' needs a number") }
            return .number(-d)
        case let .and(lhs, rhs):
            guard case .bool(let a) = try evaluate(lhs, c) else { throw fail("'&&' needs booleans") }
            if !a { return .bool(false) }
            guard case .bool(let b) = try evaluate(rhs, c) else { throw fail("'&&' needs booleans") }
            return .bool(b)
        case let .or(lhs, rhs):
            guard case .bool(let a) = try evaluate(lhs, c) else { throw fail("'||' needs booleans") }
            if a { return .bool(true) }
            guard case .bool(let b) = try evaluate(rhs, c) else { throw fail("'||' needs booleans") }
            return .bool(b)
        case let .conditional(condition, yes, no):
            guard case .bool(let b) = try evaluate(condition, c) else {
                throw fail("the condition of ?: must be a boolean")
            }
            return try evaluate(b ? yes : no, c)
        case let .binary(op, lhs, rhs):
            return try binary(op, try evaluate(lhs, c), try evaluate(rhs, c))
        }
    }

    private static func member(_ base: RuleValue, _ name: String) throws(EvaluationError) -> RuleValue {
        switch base {
        case .json(.object(let members)):
            // A claim that is absent reads as null (`auth.token.admin === true` is then false).
            guard let member = members.first(where: { $0.key.utf8.elementsEqual(name.utf8) }) else { return .null }
            return RuleValue(json: member.value)
        case .json(.array(let items)):
            if name == "length" { return .number(Double(items.count)) }
            guard let i = Int(name), i >= 0, i < items.count else { return .null }
            return RuleValue(json: items[i])
        case .string(let s) where name == "length":
            // JavaScript's length: UTF-16 code units.
            return .number(Double(s.utf16.count))
        case .null:
            throw fail("cannot read '\(name)' of null")
        default:
            throw fail("a \(base.typeName) has no property '\(name)'")
        }
    }

    private static func binary(
        _ op: BinaryOperator, _ a: RuleValue, _ b: RuleValue
    ) throws(EvaluationError) -> RuleValue {
        switch op {
        case .equal: return .bool(a.strictlyEquals(b))
        case .notEqual: return .bool(!a.strictlyEquals(b))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (a, b) {
            case let (.number(x), .number(y)): order = x < y ? -1 : (x > y ? 1 : 0)
            case let (.string(x), .string(y)): order = ChildKey.compareUTF16(x, y)
            default: throw fail("'\(op.rawValue)' cannot compare a \(a.typeName) with a \(b.typeName)")
            }
            switch op {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case .add:
            switch (a, b) {
            case let (.number(x), .number(y)): return try finite(x + y)
            case let (.string(x), .string(y)): return .string(x + y)
            default: throw fail("'+' cannot add a \(a.typeName) and a \(b.typeName)")
            }
        case .subtract, .multiply, .divide, .remainder:
            guard case .number(let x) = a, case .number(let y) = b else {
                throw fail("'\(op.rawValue)' needs numbers, not a \(a.typeName) and a \(b.typeName)")
            }
            switch op {
            case .subtract: return try finite(x - y)
            case .multiply: return try finite(x * y)
            case .divide:
                guard y != 0 else { throw fail("division by zero") }
                return try finite(x / y)
            default:
                guard y != 0 else { throw fail("remainder by zero") }
                return try finite(x.truncatingRemainder(dividingBy: y))
            }
        }
    }

    private static func finite(_ d: Double) throws(EvaluationError) -> RuleValue {
        guard d.isFinite else { throw fail("arithmetic overflow") }
        return .number(d)
    }

    private static func call(
        _ base: RuleValue, _ method: Method, _ arguments: [Expr], _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        if method.isSnapshotMethod {
            guard case .snapshot(let snapshot) = base else { throw fail("\(method.rawValue)() needs a data snapshot") }
            return try snapshotMethod(snapshot, method, arguments, c)
        }
        guard case .string(let s) = base else {
            throw fail("\(method.rawValue)() is a string method, not a method of a \(base.typeName)")
        }
        var strings: [String] = []
        for argument in arguments {
            switch try evaluate(argument, c) {
            case .string(let a): strings.append(a)
            case .regex(let r) where method == .matches: return .bool(r.matches(s))
            case let other: throw fail("\(method.rawValue)() needs string arguments, not a \(other.typeName)")
            }
        }
        switch method {
        case .contains:
            return .bool(strings[0].isEmpty || s.unicodeScalars.firstRange(of: strings[0].unicodeScalars) != nil)
        case .beginsWith: return .bool(s.unicodeScalars.starts(with: strings[0].unicodeScalars))
        case .endsWith: return .bool(s.unicodeScalars.reversed().starts(with: strings[0].unicodeScalars.reversed()))
        case .replace:
            guard !strings[0].isEmpty else { return .string(s) }
            var scalars = s.unicodeScalars
            scalars.replace(strings[0].unicodeScalars, with: strings[1].unicodeScalars)
            return .string(String(scalars))
        case .toLowerCase: return .string(s.lowercased())
        case .toUpperCase: return .string(s.uppercased())
        default: throw fail("matches() needs a regular expression")
        }
    }

    private static func childPath(
        _ argument: Expr, _ c: EvaluationContext, _ method: Method
    ) throws(EvaluationError) -> Path {
        if case .path(_, let path) = argument.kind { return path }
        guard case .string(let s) = try evaluate(argument, c) else {
            throw fail("\(method.rawValue)() needs a string path")
        }
        let path: Path
        do { path = try Path(validating: s) } catch { throw fail("\(method.rawValue)('\(s)'): \(error)") }
        guard !path.isRoot else { throw fail("\(method.rawValue)() needs a non-empty path") }
        return path
    }

    private static func snapshotMethod(
        _ snap: RuleSnapshot, _ method: Method, _ arguments: [Expr], _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        switch method {
        case .val: return RuleValue(primitive: snap.node)
        case .exists: return .bool(!snap.node.isEmpty)
        case .getPriority:
            guard let priority = snap.node.priority else { return .null }
            return RuleValue(leaf: priority.leafValue)
        case .isNumber:
            if case .number = RuleValue(primitive: snap.node) { return .bool(true) }
            return .bool(false)
        case .isString:
            if case .string = RuleValue(primitive: snap.node) { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool = RuleValue(primitive: snap.node) { return .bool(true) }
            return .bool(false)
        case .child:
            let relative = try childPath(arguments[0], c, method)
            let path = snap.path.appending(relative)
            return .snapshot(RuleSnapshot(tree: snap.tree, path: path, node: snap.node.child(at: relative)))
        case .parent:
            guard let parent = snap.path.parent else { throw fail("the root has no parent") }
            return .snapshot(RuleSnapshot(tree: snap.tree, path: parent, node: snap.tree.child(at: parent)))
        case .hasChild:
            return .bool(!snap.node.child(at: try childPath(arguments[0], c, method)).isEmpty)
        case .hasChildren:
            guard let argument = arguments.first else { return .bool(snap.node.childCount > 0) }
            guard case .array(let names) = argument.kind else { throw fail("hasChildren() needs an array") }
            for name in names where snap.node.child(at: try childPath(name, c, method)).isEmpty {
                return .bool(false)
            }
            return .bool(true)
        default:
            throw fail("\(method.rawValue)() is not a snapshot method")
        }
    }
}
