// Evaluator: one rule expression against one request, Firebase's way — an error inside the
// expression (a type mismatch, a method or comparison of null) makes the rule false, never a
// crash.

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
    /// The query a read runs (`query` in `.read` rules); nil for a plain read, and for writes.
    var query: QuerySpec? = nil
}

/// Why an expression could not produce a value; the rule then counts as false.
struct EvaluationError: Error {
    let message: String
    /// Whether the request's step budget ran out: nothing more may be evaluated for it, and
    /// the request is denied.
    var exceededBudget = false
}

/// Evaluates the rule expressions of one request, all drawing on one step budget
/// (``StepBudget``: every node evaluated is a step, and the string, data and regular-expression
/// work below charges its size). Recursion follows the expression tree, whose height the
/// parser bounded (``RulesSet/Limits/maxExpressionDepth``); `&&`/`||` chains are loops.
struct Evaluator {
    var budget: StepBudget

    init(steps: Int) { budget = StepBudget(limit: steps) }

    /// Evaluates a whole rule: `true` only when the expression yields the boolean `true`.
    mutating func isTrue(_ expr: Expr, in context: EvaluationContext) -> Result<Bool, EvaluationError> {
        do {
            try charge(Self.ruleSteps)
            let value = try evaluate(expr, context)
            guard case .bool(let b) = value else {
                return .failure(EvaluationError(message: "the rule evaluated to a \(value.typeName), not a boolean"))
            }
            return .success(b)
        } catch {
            return .failure(error)
        }
    }

    func fail(_ message: String) -> EvaluationError { EvaluationError(message: message) }

    /// Spends `steps` of the request's budget, or fails the evaluation when they are not left.
    mutating func charge(_ steps: Int) throws(EvaluationError) {
        do { try budget.charge(steps) } catch { throw overBudget() }
    }

    /// The error of a request out of steps (out of line: the message is built once, at the end).
    @inline(never)
    func overBudget(in place: String = "") -> EvaluationError {
        EvaluationError(
            message: "the request ran out of its \(budget.limit) evaluation steps\(place)", exceededBudget: true)
    }

    /// Evaluates `expr`. The recursion is kept cheap in stack: each case that recurses is a
    /// function of its own (so the repeated frame holds one case's temporaries, not all of
    /// them) and `RuleValue` boxes its large cases; a level of nesting costs about 200 bytes in
    /// a release build (64 levels, the default limit, about 13 KB).
    mutating func evaluate(_ expr: Expr, _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        try charge(1)
        switch expr.kind {
        case .array(let items): return try array(items, c)
        case let .member(target, name): return try member(target, name, c)
        case let .index(target, index): return try indexed(target, index, c)
        case let .call(target, method, arguments): return try call(target, method, arguments, c)
        case .not(let operand): return try not(operand, c)
        case .negate(let operand): return try negate(operand, c)
        case .and(let terms): return try chain(terms, stopsAt: false, c)
        case .or(let terms): return try chain(terms, stopsAt: true, c)
        case let .conditional(condition, yes, no): return try conditional(condition, yes, no, c)
        case let .binary(op, lhs, rhs): return try binary(op, lhs, rhs, c)
        default: return try leaf(expr.kind, c)
        }
    }

    /// A literal, a variable or a `$wildcard`.
    @inline(never)
    private mutating func leaf(_ kind: Expr.Kind, _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        switch kind {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let d): return .number(d)
        case .string(let s), .path(let s, _): return .string(s)
        case .regex(let r): return .regex(r)
        case .builtin(let b): return try builtin(b, c)
        case let .capture(name, index):
            guard index < c.captures.count else { throw fail("$\(name) is not bound") }
            return .string(c.captures[index])
        default: throw fail("not a leaf")
        }
    }

    private mutating func builtin(_ b: Builtin, _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        switch b {
        case .auth: return c.auth.map { .json($0.json) } ?? .null
        case .now: return .number(c.now)
        case .query:
            try charge(Self.snapshotSteps)
            return .json(Self.queryObject(c.query))
        case .root, .data, .newData: try charge(Self.snapshotSteps)
        }
        switch b {
        case .root: return .snapshot(RuleSnapshot(tree: c.oldRoot, path: .root, node: c.oldRoot))
        case .data: return .snapshot(RuleSnapshot(tree: c.oldRoot, path: c.path, node: c.data))
        default: return .snapshot(RuleSnapshot(tree: c.newRoot, path: c.path, node: c.newData))
        }
    }

    @inline(never)
    private mutating func array(_ items: [Expr], _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        var strings: [String] = []
        for item in items {
            guard case .string(let s) = try evaluate(item, c) else { throw fail("array elements must be strings") }
            strings.append(s)
        }
        return .array(strings)
    }

    @inline(never)
    private mutating func member(
        _ target: Expr, _ name: String, _ c: EvaluationContext
    ) throws(EvaluationError)
        -> RuleValue
    {
        try member(try evaluate(target, c), name)
    }

    @inline(never)
    private mutating func indexed(
        _ target: Expr, _ index: Expr, _ c: EvaluationContext
    ) throws(EvaluationError)
        -> RuleValue
    {
        let base = try evaluate(target, c)
        switch try evaluate(index, c) {
        case .string(let s): return try member(base, s)
        case .number(let d): return try member(base, d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)")
        case let other: throw fail("cannot index with a \(other.typeName)")
        }
    }

    @inline(never)
    private mutating func call(
        _ target: Expr, _ method: Method, _ arguments: [Expr], _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        try call(try evaluate(target, c), method, arguments, c)
    }

    @inline(never)
    private mutating func not(_ operand: Expr, _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        guard case .bool(let b) = try evaluate(operand, c) else { throw fail("'!' needs a boolean") }
        return .bool(!b)
    }

    @inline(never)
    private mutating func negate(_ operand: Expr, _ c: EvaluationContext) throws(EvaluationError) -> RuleValue {
        guard case .number(let d) = try evaluate(operand, c) else { throw fail("unary '-' needs a number") }
        return .number(-d)
    }

    /// `&&` (stops at the first `false`) or `||` (stops at the first `true`), term by term.
    @inline(never)
    private mutating func chain(
        _ terms: [Expr], stopsAt stop: Bool, _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        assert(terms.count >= 2, "the parser makes a chain only of two terms or more")
        for term in terms {
            guard case .bool(let b) = try evaluate(term, c) else {
                throw fail("'\(stop ? "||" : "&&")' needs booleans")
            }
            if b == stop { return .bool(stop) }
        }
        return .bool(!stop)
    }

    @inline(never)
    private mutating func conditional(
        _ condition: Expr, _ yes: Expr, _ no: Expr, _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        guard case .bool(let b) = try evaluate(condition, c) else {
            throw fail("the condition of ?: must be a boolean")
        }
        return try evaluate(b ? yes : no, c)
    }

    @inline(never)
    private mutating func binary(
        _ op: BinaryOperator, _ lhs: Expr, _ rhs: Expr, _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        let a = try evaluate(lhs, c)
        return try binary(op, a, try evaluate(rhs, c))
    }

    private mutating func member(_ base: RuleValue, _ name: String) throws(EvaluationError) -> RuleValue {
        switch base {
        case .json(.object(let members)):
            // A linear scan comparing names byte by byte.
            try charge(members.count * (name.utf8.count + 1))
            // A claim that is absent reads as null (`auth.token.admin === true` is then false).
            guard let member = members.first(where: { $0.key.utf8.elementsEqual(name.utf8) }) else { return .null }
            return RuleValue(json: member.value)
        case .json(.array(let items)):
            if name == "length" { return .number(Double(items.count)) }
            try charge(name.utf8.count)
            guard let i = Int(name), i >= 0, i < items.count else { return .null }
            return RuleValue(json: items[i])
        case .string(let s) where name == "length":
            // JavaScript's length: UTF-16 code units.
            try charge(s.utf8.count)
            return .number(Double(s.utf16.count))
        case .null:
            // Firebase: a property of null is null (`auth.uid !== 'x'` is true without a
            // credential); what then needs a value (a comparison, a method) fails.
            return .null
        default:
            throw fail("a \(base.typeName) has no property '\(name)'")
        }
    }

    private mutating func binary(
        _ op: BinaryOperator, _ a: RuleValue, _ b: RuleValue
    ) throws(EvaluationError) -> RuleValue {
        if case .string(let x) = a, case .string(let y) = b {
            // Comparing reads the shorter string at most; `+` copies both.
            try charge(op == .add ? x.utf8.count + y.utf8.count : min(x.utf8.count, y.utf8.count))
        }
        switch op {
        case .equal: return .bool(a.strictlyEquals(b))
        case .notEqual: return .bool(!a.strictlyEquals(b))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (a, b) {
            case let (.number(x), .number(y)):
                // NaN (a division by zero) compares false with everything.
                if x.isNaN || y.isNaN { return .bool(false) }
                order = x < y ? -1 : (x > y ? 1 : 0)
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
            case let (.string(x), .number(y)):
                let text = Self.javaScriptString(y)
                try charge(x.utf8.count + text.utf8.count)
                return .string(x + text)
            case let (.number(x), .string(y)):
                let text = Self.javaScriptString(x)
                try charge(text.utf8.count + y.utf8.count)
                return .string(text + y)
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
                // Firebase: a division by zero is NaN (`(1/0 + '') == 'NaN'`), which then
                // equals and orders with nothing.
                guard y != 0 else { return .number(.nan) }
                return try finite(x / y)
            default:
                guard y != 0 else { return .number(.nan) }
                return try finite(x.truncatingRemainder(dividingBy: y))
            }
        }
    }

    private func finite(_ d: Double) throws(EvaluationError) -> RuleValue {
        guard !d.isInfinite else { throw fail("arithmetic overflow") }
        return .number(d)
    }
}

extension Evaluator {
    /// A number as JavaScript's `String(n)` prints it, for `+` with a string: `NaN`,
    /// `Infinity`, or the shortest round-tripping digits (HearthModel's JSON number text).
    static func javaScriptString(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return JSONValue.javaScriptNumberText(d)
    }
}

extension Evaluator {
    /// `query` as rules read it, as Firebase's server presents a read's query: a plain read
    /// (or one of all the data in default order) is ordered by key; bounds and limits are null
    /// when absent; `equalTo` is set when both bounds are the same value (and `startAt` and
    /// `endAt` with it, the bounds it stands for).
    static func queryObject(_ query: QuerySpec?) -> JSONValue {
        let q = query.flatMap { $0.isDefault ? nil : $0 }
        func bound(_ b: QueryBound?) -> JSONValue { b.map { $0.value.plainJSON() } ?? .null }
        var equal: JSONValue = .null
        if let s = q?.start, let e = q?.end, s == e, !s.exclusive { equal = bound(s) }
        var first: JSONValue = .null, last: JSONValue = .null
        switch q?.limit {
        case .first(let n)?: first = .integer(exactly: Int64(n))
        case .last(let n)?: last = .integer(exactly: Int64(n))
        case nil: break
        }
        var child: JSONValue = .null
        if case .child(let path)? = q?.index { child = .string(path.description) }
        return .object([
            JSONMember(key: "orderByKey", value: .bool(q == nil || q?.index == .key)),
            JSONMember(key: "orderByPriority", value: .bool(q?.index == .priority)),
            JSONMember(key: "orderByValue", value: .bool(q?.index == .value)),
            JSONMember(key: "orderByChild", value: child),
            JSONMember(key: "startAt", value: bound(q?.start)),
            JSONMember(key: "endAt", value: bound(q?.end)),
            JSONMember(key: "equalTo", value: equal),
            JSONMember(key: "limitToFirst", value: first),
            JSONMember(key: "limitToLast", value: last),
        ])
    }
}
