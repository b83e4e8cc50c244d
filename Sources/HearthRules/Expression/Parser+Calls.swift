// Parser, continued: member access and method calls on typed targets (`.length`, `.child()`,
// `.hasChildren([...])`, …): their arity, argument types and result types, and constant child
// paths checked when the rules load. The precedence levels are in Parser.swift.

import HearthModel

extension ExpressionParser {
    func member(
        _ target: Expr, _ type: StaticType, _ name: String, at offset: Int
    ) throws(ExpressionError) -> (Expr, StaticType) {
        if case .builtin(.query) = target.kind, !queryMembers.contains(name) {
            throw ExpressionError(
                message: "query has no property '\(name)' (it has \(queryMembers.sorted().joined(separator: ", ")))",
                offset: offset)
        }
        switch type {
        case .unknown:
            // Firebase refuses a property of what val() gives when the rules load (a primitive,
            // or the opaque value of a node with children); a string's length is the exception.
            if case .call(_, .val, _) = target.kind, name != "length" {
                throw ExpressionError(message: "a value from val() has no property '\(name)'", offset: offset)
            }
            return (try node(.member(target, name), at: target.offset, pointing: offset), .unknown)
        case .string where name == "length":
            return (try node(.member(target, name), at: target.offset, pointing: offset), .number)
        case .snapshot where Method(rawValue: name)?.isSnapshotMethod == true:
            throw ExpressionError(message: "'\(name)' is a method: call it as \(name)()", offset: offset)
        case .string where Method(rawValue: name) != nil:
            throw ExpressionError(message: "'\(name)' is a method: call it as \(name)(…)", offset: offset)
        default:
            throw ExpressionError(message: "a \(type.name) has no property '\(name)'", offset: offset)
        }
    }

    mutating func parseCall(
        _ target: Expr, _ type: StaticType, _ name: String, at offset: Int
    ) throws(ExpressionError) -> (Expr, StaticType) {
        var arguments: [(Expr, StaticType)] = []
        if !accept(")") {
            repeat { arguments.append(try parseConditional()) } while accept(",")
            try expect(")")
        }
        guard let method = Method(rawValue: name) else {
            throw ExpressionError(message: "unknown method '\(name)'", offset: offset)
        }
        if method.isSnapshotMethod {
            guard type == .snapshot else {
                throw ExpressionError(
                    message: "'\(name)()' is a method of data snapshots (root, data, newData), not of a \(type.name)",
                    offset: offset)
            }
        } else {
            guard type == .string || type == .unknown else {
                throw ExpressionError(
                    message: "'\(name)()' is a string method, not a method of a \(type.name)", offset: offset)
            }
        }
        func arity(_ n: ClosedRange<Int>) throws(ExpressionError) {
            guard n.contains(arguments.count) else {
                let expected = n.lowerBound == n.upperBound ? "\(n.lowerBound)" : "\(n.lowerBound) or \(n.upperBound)"
                throw ExpressionError(
                    message:
                        "\(name)() takes \(expected) argument\(n.upperBound == 1 ? "" : "s"), not \(arguments.count)",
                    offset: offset)
            }
        }
        func argument(_ k: Int, _ allowed: [StaticType]) throws(ExpressionError) {
            try requireType(arguments[k].1, of: allowed, "argument \(k + 1) of \(name)()", at: arguments[k].0.offset)
        }
        let result: StaticType
        switch method {
        case .val, .getPriority: try arity(0...0); result = .unknown
        case .exists, .isNumber, .isString, .isBoolean: try arity(0...0); result = .boolean
        case .parent: try arity(0...0); result = .snapshot
        case .child, .hasChild:
            try arity(1...1)
            try argument(0, [.string])
            arguments[0].0 = try constantPath(arguments[0].0, of: name)
            result = method == .child ? .snapshot : .boolean
        case .hasChildren:
            try arity(0...1)
            if arguments.count == 1 {
                guard case .array(let items) = arguments[0].0.kind else {
                    throw ExpressionError(
                        message: "hasChildren() takes an array literal of child names, like ['a', 'b']",
                        offset: arguments[0].0.offset)
                }
                var paths: [Expr] = []
                for item in items { paths.append(try constantPath(item, of: name)) }
                arguments[0].0 = Expr(kind: .array(paths), offset: arguments[0].0.offset)
            }
            result = .boolean
        case .contains, .beginsWith, .endsWith: try arity(1...1); try argument(0, [.string]); result = .boolean
        case .replace: try arity(2...2); try argument(0, [.string]); try argument(1, [.string]); result = .string
        case .toLowerCase, .toUpperCase: try arity(0...0); result = .string
        case .matches:
            try arity(1...1)
            guard case .regex = arguments[0].0.kind else {
                throw ExpressionError(
                    message: "matches() takes a regular expression literal, like /^[a-z]+$/",
                    offset: arguments[0].0.offset)
            }
            result = .boolean
        }
        return (try node(.call(target, method, arguments.map(\.0)), at: target.offset, pointing: offset), result)
    }

    /// A string literal used as a child path, kept parsed (`.path`) so that it is not re-parsed
    /// per request. A literal that is no valid path (`'banned/bob@example.com'`: a key with a
    /// dot) loads, as in Firebase, and names no child: it stays a string, and evaluation finds
    /// nothing there. Other expressions are returned unchanged and checked when evaluated.
    func constantPath(_ expr: Expr, of method: String) throws(ExpressionError) -> Expr {
        guard case .string(let text) = expr.kind else { return expr }
        guard let path = try? Path(validating: text) else { return expr }
        guard !path.isRoot else {
            throw ExpressionError(message: "\(method)() needs a non-empty child path", offset: expr.offset)
        }
        return Expr(kind: .path(text, path), offset: expr.offset)
    }
}
