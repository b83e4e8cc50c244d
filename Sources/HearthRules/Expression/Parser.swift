// Parser: rule expression text → a type-checked Expr (precedence climbing over tokens).

import HearthModel

/// What a rule expression may refer to: the `$wildcards` bound on its path (names without
/// `$`, from the root down), and whether it sits in a `.read` rule (where `newData` does not
/// exist).
struct ExpressionScope {
    var captures: [String]
    var allowsNewData: Bool
}

/// The bounds an expression must keep to load (from ``RulesSet/Limits``).
struct ExpressionLimits {
    /// The deepest nesting: of the parser's recursion (parentheses, call arguments, `?:`,
    /// unary operators) and of the tree it builds (which the evaluator recurses through).
    var maxDepth: Int
    /// The most states a regular expression's program may have.
    var maxRegexStates: Int
}

/// Parses and type-checks one expression. Precedence, loosest first: `?:`, `||`, `&&`,
/// equality (`== != === !==`), relational (`< <= > >=`), `+ -`, `* / %`, unary `! -`,
/// postfix (`.name`, `[index]`, `(arguments)`).
///
/// Recursive descent, with the recursion bounded: every level that recurses (``nest()``)
/// counts against `limits.maxDepth` before it goes deeper, and every node built
/// (``node(_:at:pointing:)``) checks the tree's height, so 100,000 nested parentheses fail at
/// the limit's depth, not with a stack overflow. `&&` and `||` chains are one n-ary node each.
struct ExpressionParser {
    let tokens: [PositionedToken]
    let scope: ExpressionScope
    let limits: ExpressionLimits
    var i = 0
    /// The recursion depth of the parse so far.
    var depth = 0

    /// Parses `text` as a whole rule: it must be boolean (or a value only known at evaluation).
    static func parseRule(
        _ text: String, scope: ExpressionScope, limits: ExpressionLimits
    ) throws(ExpressionError) -> Expr {
        var parser = ExpressionParser(tokens: try Lexer.tokens(text), scope: scope, limits: limits)
        if case .end = parser.tokens[0].token {
            throw ExpressionError(message: "empty expression", offset: 0)
        }
        let (expr, type) = try parser.parseConditional()
        assert(parser.depth == 0, "every level of recursion the parse entered it left")
        assert(
            expr.height <= max(1, limits.maxDepth),
            "the tree is no higher than the limit the evaluator's recursion relies on")
        guard case .end = parser.current.token else {
            throw ExpressionError(
                message: "unexpected \(parser.describe(parser.current.token)) after the expression",
                offset: parser.current.offset)
        }
        guard type == .boolean || type == .unknown else {
            throw ExpressionError(message: "a rule must evaluate to a boolean, this is a \(type.name)", offset: 0)
        }
        return expr
    }

    private init(tokens: [PositionedToken], scope: ExpressionScope, limits: ExpressionLimits) {
        self.tokens = tokens
        self.scope = scope
        self.limits = limits
    }

    private func tooDeep(at offset: Int) -> ExpressionError {
        ExpressionError(
            message:
                "the expression nests deeper than \(limits.maxDepth) levels (each parenthesis, operator, member access, call and ?: adds one)",
            offset: offset)
    }

    /// Enters one level of recursion; call `depth -= 1` when leaving it.
    mutating func nest() throws(ExpressionError) {
        depth += 1
        if depth > limits.maxDepth { throw tooDeep(at: current.offset) }
    }

    /// A node of the tree, refused when it makes the tree higher than the limit (`at` is where
    /// the error points: the operator or member that went too deep).
    func node(_ kind: Expr.Kind, at offset: Int, pointing at: Int? = nil) throws(ExpressionError) -> Expr {
        let expr = Expr(kind: kind, offset: offset)
        if expr.height > limits.maxDepth { throw tooDeep(at: at ?? offset) }
        return expr
    }

    var current: PositionedToken { tokens[i] }

    func describe(_ token: Token) -> String {
        switch token {
        case .number(let d): "number \(d)"
        case .string(let s): "string '\(s)'"
        case .identifier(let s): "'\(s)'"
        case .regex(let p, _): "regular expression /\(p)/"
        case .symbol(let s): "'\(s)'"
        case .end: "end of expression"
        }
    }

    mutating func accept(_ symbol: String) -> Bool {
        if case .symbol(let s) = current.token, s == symbol { i += 1; return true }
        return false
    }

    mutating func expect(_ symbol: String) throws(ExpressionError) {
        guard accept(symbol) else {
            throw ExpressionError(
                message: "expected '\(symbol)' but found \(describe(current.token))", offset: current.offset)
        }
    }

    func requireType(
        _ type: StaticType, of allowed: [StaticType], _ what: String, at offset: Int
    ) throws(ExpressionError) {
        if type == .unknown || allowed.contains(type) { return }
        throw ExpressionError(
            message: "\(what) needs a \(allowed.map(\.name).joined(separator: " or ")), not a \(type.name)",
            offset: offset)
    }

    // MARK: - Levels

    mutating func parseConditional() throws(ExpressionError) -> (Expr, StaticType) {
        try nest()
        defer { depth -= 1 }
        let (condition, conditionType) = try parseOr()
        guard accept("?") else { return (condition, conditionType) }
        try requireType(conditionType, of: [.boolean], "the condition of ?:", at: condition.offset)
        let (yes, yesType) = try parseConditional()
        try expect(":")
        let (no, noType) = try parseConditional()
        // Branches of two known types: the type that is not boolean, so that a rule that could
        // evaluate to a number (`c ? 7 : true`) is refused when it loads, as Firebase does.
        let type: StaticType
        if yesType == noType {
            type = yesType
        } else if [yesType, noType].contains(.unknown) || [yesType, noType].contains(.null) {
            type = .unknown
        } else {
            type = yesType == .boolean ? noType : yesType
        }
        return (try node(.conditional(condition, yes, no), at: condition.offset), type)
    }

    mutating func parseOr() throws(ExpressionError) -> (Expr, StaticType) {
        let (first, firstType) = try parseAnd()
        guard case .symbol("||") = current.token else { return (first, firstType) }
        try requireType(firstType, of: [.boolean], "'||'", at: first.offset)
        var terms = [first]
        while accept("||") {
            let (term, type) = try parseAnd()
            try requireType(type, of: [.boolean], "'||'", at: term.offset)
            terms.append(term)
        }
        return (try node(.or(terms), at: first.offset), .boolean)
    }

    mutating func parseAnd() throws(ExpressionError) -> (Expr, StaticType) {
        let (first, firstType) = try parseEquality()
        guard case .symbol("&&") = current.token else { return (first, firstType) }
        try requireType(firstType, of: [.boolean], "'&&'", at: first.offset)
        var terms = [first]
        while accept("&&") {
            let (term, type) = try parseEquality()
            try requireType(type, of: [.boolean], "'&&'", at: term.offset)
            terms.append(term)
        }
        return (try node(.and(terms), at: first.offset), .boolean)
    }

    mutating func parseEquality() throws(ExpressionError) -> (Expr, StaticType) {
        var (lhs, lhsType) = try parseRelational()
        while true {
            let op: BinaryOperator
            if accept("===") || accept("==") {
                op = .equal
            } else if accept("!==") || accept("!=") {
                op = .notEqual
            } else {
                break
            }
            let (rhs, rhsType) = try parseRelational()
            for (e, t) in [(lhs, lhsType), (rhs, rhsType)] where t == .snapshot || t == .regex {
                throw ExpressionError(message: "cannot compare a \(t.name) (did you mean .val()?)", offset: e.offset)
            }
            lhs = try node(.binary(op, lhs, rhs), at: lhs.offset, pointing: rhs.offset)
            lhsType = .boolean
        }
        return (lhs, lhsType)
    }

    mutating func parseRelational() throws(ExpressionError) -> (Expr, StaticType) {
        var (lhs, lhsType) = try parseAdditive()
        while true {
            let op: BinaryOperator
            if accept("<=") {
                op = .lessOrEqual
            } else if accept(">=") {
                op = .greaterOrEqual
            } else if accept("<") {
                op = .less
            } else if accept(">") {
                op = .greater
            } else {
                break
            }
            let (rhs, rhsType) = try parseAdditive()
            try requireType(lhsType, of: [.number, .string], "'\(op.rawValue)'", at: lhs.offset)
            try requireType(rhsType, of: [.number, .string], "'\(op.rawValue)'", at: rhs.offset)
            if lhsType != .unknown && rhsType != .unknown && lhsType != rhsType {
                throw ExpressionError(
                    message: "'\(op.rawValue)' compares a \(lhsType.name) with a \(rhsType.name)", offset: lhs.offset)
            }
            lhs = try node(.binary(op, lhs, rhs), at: lhs.offset, pointing: rhs.offset)
            lhsType = .boolean
        }
        return (lhs, lhsType)
    }

    mutating func parseAdditive() throws(ExpressionError) -> (Expr, StaticType) {
        var (lhs, lhsType) = try parseMultiplicative()
        while true {
            let op: BinaryOperator
            if accept("+") { op = .add } else if accept("-") { op = .subtract } else { break }
            let (rhs, rhsType) = try parseMultiplicative()
            let allowed: [StaticType] = op == .add ? [.number, .string] : [.number]
            try requireType(lhsType, of: allowed, "'\(op.rawValue)'", at: lhs.offset)
            try requireType(rhsType, of: allowed, "'\(op.rawValue)'", at: rhs.offset)
            lhs = try node(.binary(op, lhs, rhs), at: lhs.offset, pointing: rhs.offset)
            // `+` with a string on either side concatenates (a number as JavaScript prints it).
            if lhsType == .string || rhsType == .string {
                lhsType = .string
            } else {
                lhsType = lhsType == .unknown ? rhsType : lhsType
            }
        }
        return (lhs, lhsType)
    }

    mutating func parseMultiplicative() throws(ExpressionError) -> (Expr, StaticType) {
        var (lhs, lhsType) = try parseUnary()
        while true {
            let op: BinaryOperator
            if accept("*") {
                op = .multiply
            } else if accept("/") {
                op = .divide
            } else if accept("%") {
                op = .remainder
            } else {
                break
            }
            let (rhs, rhsType) = try parseUnary()
            try requireType(lhsType, of: [.number], "'\(op.rawValue)'", at: lhs.offset)
            try requireType(rhsType, of: [.number], "'\(op.rawValue)'", at: rhs.offset)
            lhs = try node(.binary(op, lhs, rhs), at: lhs.offset, pointing: rhs.offset)
            lhsType = .number
        }
        return (lhs, lhsType)
    }

    mutating func parseUnary() throws(ExpressionError) -> (Expr, StaticType) {
        let offset = current.offset
        if accept("!") {
            try nest()
            defer { depth -= 1 }
            let (operand, type) = try parseUnary()
            try requireType(type, of: [.boolean], "'!'", at: operand.offset)
            return (try node(.not(operand), at: offset), .boolean)
        }
        if accept("-") {
            try nest()
            defer { depth -= 1 }
            let (operand, type) = try parseUnary()
            try requireType(type, of: [.number], "unary '-'", at: operand.offset)
            return (try node(.negate(operand), at: offset), .number)
        }
        return try parsePostfix()
    }

    mutating func parsePostfix() throws(ExpressionError) -> (Expr, StaticType) {
        var (target, type) = try parsePrimary()
        while true {
            if accept(".") {
                let nameOffset = current.offset
                guard case .identifier(let name) = current.token else {
                    throw ExpressionError(
                        message: "expected a name after '.' but found \(describe(current.token))", offset: nameOffset)
                }
                i += 1
                if case .symbol("(") = current.token {
                    i += 1
                    (target, type) = try parseCall(target, type, name, at: nameOffset)
                } else {
                    (target, type) = try member(target, type, name, at: nameOffset)
                }
            } else if accept("[") {
                let (index, indexType) = try parseConditional()
                try expect("]")
                if case .string(let name) = index.kind, accept("(") {
                    // A method named in brackets, as Firebase allows: `root['exists']()`.
                    (target, type) = try parseCall(target, type, name, at: index.offset)
                } else if case .string(let name) = index.kind {
                    (target, type) = try member(target, type, name, at: index.offset)
                } else {
                    guard type == .unknown else {
                        throw ExpressionError(message: "a \(type.name) cannot be indexed", offset: index.offset)
                    }
                    try requireType(indexType, of: [.string, .number], "an index", at: index.offset)
                    target = try node(.index(target, index), at: target.offset, pointing: index.offset)
                    type = .unknown
                }
            } else {
                return (target, type)
            }
        }
    }

    mutating func parsePrimary() throws(ExpressionError) -> (Expr, StaticType) {
        let token = current
        i += 1
        switch token.token {
        case .number(let d):
            return (Expr(kind: .number(d), offset: token.offset), .number)
        case .string(let s):
            return (Expr(kind: .string(s), offset: token.offset), .string)
        case .regex(let pattern, let flags):
            do {
                let regex = try RuleRegex(
                    pattern: pattern, flags: flags, maxDepth: limits.maxDepth, maxStates: limits.maxRegexStates)
                return (Expr(kind: .regex(regex), offset: token.offset), .regex)
            } catch {
                throw ExpressionError(message: error.message, offset: token.offset + error.offset)
            }
        case .symbol("("):
            let inner = try parseConditional()
            try expect(")")
            return inner
        case .symbol("["):
            var items: [Expr] = []
            if !accept("]") {
                repeat {
                    let (item, type) = try parseConditional()
                    try requireType(type, of: [.string], "an array element", at: item.offset)
                    items.append(item)
                } while accept(",")
                try expect("]")
            }
            return (try node(.array(items), at: token.offset), .array)
        case .identifier(let name):
            return try identifier(name, at: token.offset)
        default:
            throw ExpressionError(message: "expected a value but found \(describe(token.token))", offset: token.offset)
        }
    }

    func identifier(_ name: String, at offset: Int) throws(ExpressionError) -> (Expr, StaticType) {
        switch name {
        case "true": return (Expr(kind: .bool(true), offset: offset), .boolean)
        case "false": return (Expr(kind: .bool(false), offset: offset), .boolean)
        case "null": return (Expr(kind: .null, offset: offset), .null)
        case "now": return (Expr(kind: .builtin(.now), offset: offset), .number)
        case "auth": return (Expr(kind: .builtin(.auth), offset: offset), .unknown)
        case "root": return (Expr(kind: .builtin(.root), offset: offset), .snapshot)
        case "data": return (Expr(kind: .builtin(.data), offset: offset), .snapshot)
        case "newData":
            guard scope.allowsNewData else {
                throw ExpressionError(message: "newData is not available in .read rules", offset: offset)
            }
            return (Expr(kind: .builtin(.newData), offset: offset), .snapshot)
        case "query":
            guard !scope.allowsNewData else {
                throw ExpressionError(message: "query is only available in .read rules", offset: offset)
            }
            return (Expr(kind: .builtin(.query), offset: offset), .unknown)
        default:
            if name.hasPrefix("$") {
                let capture = String(name.dropFirst())
                guard let index = scope.captures.firstIndex(of: capture) else {
                    throw ExpressionError(
                        message: "unknown variable '\(name)': no such $wildcard on this rule's path", offset: offset)
                }
                return (Expr(kind: .capture(capture, index), offset: offset), .string)
            }
            throw ExpressionError(message: "unknown variable '\(name)'", offset: offset)
        }
    }
}
