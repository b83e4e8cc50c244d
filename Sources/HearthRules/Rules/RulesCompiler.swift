// RulesCompiler: the parsed rules JSON → a RuleNode tree, every expression parsed and checked.

import HearthModel

/// Turns the rules document into ``RuleNode``s, refusing anything Firebase would refuse:
/// a top level other than `{"rules": {...}}`, unknown `.keys`, rules that are neither strings
/// nor booleans, invalid keys, two `$wildcards` under one node, a wildcard name reused on its
/// own path, a key given twice in one object, and any expression that does not parse or
/// type-check.
struct RulesCompiler {
    let source: SourceText
    let limits: RulesSet.Limits

    func compileDocument(_ document: RulesJSON) throws(RulesError) -> RuleNode {
        guard case .object(let members, let position) = document else {
            throw structure(
                "/", "the rules file must be an object {\"rules\": {...}}, not \(document.kindName)", document.position)
        }
        try refuseRepeatedKeys(members, location: "/")
        guard let rules = members.first(where: { $0.key == "rules" }) else {
            throw structure("/", "the rules file has no top-level \"rules\" key", position)
        }
        if let other = members.first(where: { $0.key != "rules" }) {
            throw structure(
                "/", "unknown top-level key \"\(other.key)\" (only \"rules\" is allowed)", other.keyPosition)
        }
        return try compile(rules.value, location: [], captures: [])
    }

    private func structure(_ location: String, _ message: String, _ at: SourcePosition) -> RulesError {
        .structure(rulePath: location, message: message, line: at.line, column: at.column)
    }

    /// Refuses an object that names one key twice. JSON leaves it undefined which one counts
    /// (most parsers keep the last, silently); Firebase refuses the file, and so does Hearth,
    /// at the second occurrence. Keys are compared scalar by scalar, as child keys are, so a
    /// precomposed and a decomposed `é` are two keys.
    private func refuseRepeatedKeys(
        _ members: [(key: String, keyPosition: SourcePosition, value: RulesJSON)], location: String
    ) throws(RulesError) {
        var seen: [[UInt8]: SourcePosition] = [:]
        for member in members {
            if let first = seen.updateValue(member.keyPosition, forKey: Array(member.key.utf8)) {
                throw structure(
                    location,
                    "duplicate key \"\(member.key)\" (first at line \(first.line), column \(first.column))",
                    member.keyPosition)
            }
        }
    }

    private static func printed(_ location: [String]) -> String {
        "/" + location.joined(separator: "/")
    }

    private func compile(_ value: RulesJSON, location: [String], captures: [String]) throws(RulesError) -> RuleNode {
        let here = Self.printed(location)
        guard case .object(let members, _) = value else {
            throw structure(
                here, "expected an object of rules and child locations, not \(value.kindName)", value.position)
        }
        guard location.count <= Path.maxDepth else {
            throw structure(here, "rules nest deeper than \(Path.maxDepth) levels", value.position)
        }
        try refuseRepeatedKeys(members, location: here)
        var read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?
        var indexOn: [String] = []
        var children: [ChildKey: RuleNode] = [:]
        var wildcard: (name: String, node: RuleNode)?
        for member in members {
            let key = member.key
            switch key {
            case ".read":
                read = try rule(.read, member.value, location: here, captures: captures)
            case ".write":
                write = try rule(.write, member.value, location: here, captures: captures)
            case ".validate":
                validate = try rule(.validate, member.value, location: here, captures: captures)
            case ".indexOn":
                indexOn = try indexes(member.value, location: here)
            default:
                if key.hasPrefix(".") {
                    throw structure(
                        here, "unknown rule type \"\(key)\" (expected .read, .write, .validate or .indexOn)",
                        member.keyPosition)
                }
                if key.hasPrefix("$") {
                    let name = String(key.dropFirst())
                    if let existing = wildcard {
                        throw structure(
                            here, "two wildcards under one location: $\(existing.name) and \(key)", member.keyPosition)
                    }
                    do { try ChildKey.validate(name) } catch {
                        throw structure(here, "invalid wildcard name \"\(key)\": \(error)", member.keyPosition)
                    }
                    if captures.contains(name) {
                        throw structure(here, "wildcard \(key) is already used on this path", member.keyPosition)
                    }
                    let node = try compile(member.value, location: location + [key], captures: captures + [name])
                    wildcard = (name, node)
                } else {
                    do { try ChildKey.validate(key) } catch {
                        throw structure(here, "invalid child key \"\(key)\": \(error)", member.keyPosition)
                    }
                    children[ChildKey(key)] = try compile(member.value, location: location + [key], captures: captures)
                }
            }
        }
        return RuleNode(
            location: here, read: read, write: write, validate: validate,
            indexOn: indexOn, children: children, wildcard: wildcard)
    }

    private func rule(
        _ kind: RuleKind, _ value: RulesJSON, location: String, captures: [String]
    ) throws(RulesError) -> CompiledRule {
        let rulePath = (location == "/" ? "" : location) + "/" + kind.rawValue
        let text: String
        let positions: [SourcePosition]
        switch value {
        case .bool(let b, let p):
            text = b ? "true" : "false"
            positions = Array(repeating: p, count: text.unicodeScalars.count + 1)
        case .string(let s, let ps):
            text = s
            positions = ps
        default:
            throw structure(
                rulePath, "a rule must be a string expression or a boolean, not \(value.kindName)", value.position)
        }
        let length = positions.count - 1
        guard length <= limits.maxExpressionLength else {
            throw .expression(
                rulePath: rulePath,
                message: "the expression is \(length) characters long, over the limit of \(limits.maxExpressionLength)",
                line: positions[0].line, column: positions[0].column)
        }
        let scope = ExpressionScope(captures: captures, allowsNewData: kind != .read)
        let bounds = ExpressionLimits(maxDepth: limits.maxExpressionDepth, maxRegexStates: limits.maxRegexStates)
        do {
            let expression = try ExpressionParser.parseRule(text, scope: scope, limits: bounds)
            return CompiledRule(
                reference: RuleReference(location: location, kind: kind, expression: text), expression: expression)
        } catch {
            let at = positions[min(max(error.offset, 0), positions.count - 1)]
            throw .expression(rulePath: rulePath, message: error.message, line: at.line, column: at.column)
        }
    }

    private func indexes(_ value: RulesJSON, location: String) throws(RulesError) -> [String] {
        let items: [RulesJSON]
        switch value {
        case .string: items = [value]
        case .array(let list, _): items = list
        default:
            throw structure(
                location, ".indexOn must be a string or an array of strings, not \(value.kindName)", value.position)
        }
        var out: [String] = []
        for item in items {
            guard case .string(let s, let ps) = item else {
                throw structure(location, ".indexOn entries must be strings, not \(item.kindName)", item.position)
            }
            if s != ".value" && s != ".key" && s != ".priority" {
                do { _ = try Path(validating: s) } catch {
                    throw structure(location, "invalid .indexOn path \"\(s)\": \(error)", ps[0])
                }
            }
            out.append(s == ".value" ? s : (try? Path(validating: s).description) ?? s)
        }
        return out
    }
}
