// RulesSet: a loaded rules file, and the read and index questions a server asks of it.

import HearthModel

/// A Firebase Realtime Database rules file, parsed and checked once, ready to answer every
/// read, write, update and query a server receives. Pure: it never does I/O, and the data,
/// identity and clock are passed into every call.
///
/// ```swift
/// let rules = try RulesSet.parse(text: """
///     { "rules": { "users": { "$uid": { ".read": "auth.uid === $uid", ".write": "auth.uid === $uid" } } } }
///     """)
/// let decision = rules.canWrite(path: "users/alice", newValue: .string("hi"),
///                               auth: RulesAuth(uid: "alice"), root: .empty, now: 0)
/// // decision.isAllowed == true, decision.rule?.location == "/users/$uid"
/// ```
///
/// Semantics (Firebase's): `.read` and `.write` cascade — a grant at a location or any
/// ancestor allows the request, and no deeper rule can revoke it; a location without any
/// granting rule is denied. `.validate` does not cascade: every `.validate` on the written
/// path and in the written subtree must pass for the new data, and none runs where the new
/// data is null (deletes). An error while evaluating a rule makes that rule false.
public struct RulesSet: Sendable {
    let root: RuleNode

    /// The number of `.read`, `.write` and `.validate` rules in the file.
    public var ruleCount: Int { root.ruleCount }

    /// Parses a rules file: JSON with `//` and `/* */` comments, top-level `{"rules": {...}}`.
    ///
    /// - Throws: ``RulesError`` naming the line and column (and, for a bad rule, its location
    ///   such as `/users/$uid/.write`) of the first problem.
    public static func parse(text: String) throws(RulesError) -> RulesSet {
        let source = SourceText(text)
        var parser = RulesJSONParser(source: source)
        let document = try parser.parseDocument()
        return RulesSet(root: try RulesCompiler(source: source).compileDocument(document))
    }

    /// Whether `auth` may read `path` (a value read, a listen, or a query at `path` — a
    /// query is allowed exactly when a read of its location is).
    ///
    /// - Parameters:
    ///   - path: The location read.
    ///   - auth: The requester, `nil` when unauthenticated (`auth == null` in rules).
    ///   - root: The whole database tree as it is now.
    ///   - now: The server's clock in milliseconds since the epoch (`now` in rules).
    public func canRead(path: Path, auth: RulesAuth?, root: Node, now: Double) -> Decision {
        if auth?.isAdmin == true { return .allowed(by: nil, at: path, reason: "admin access bypasses rules") }
        return grant(.read, at: path, auth: auth, oldRoot: root, newRoot: root, now: now)
    }

    /// Whether the query's result would carry Firebase's `no_index` warning: `false` when an
    /// `.indexOn` at exactly `path` covers `index` (always `true` for key and priority
    /// order, which need no index). Send `{"w":["no_index"]}` when this returns `false`.
    public func hasIndex(path: Path, on index: QueryIndex) -> Bool {
        switch index {
        case .key, .priority: return true
        case .value: return indexOn(at: path).contains(".value")
        case .child(let child): return indexOn(at: path).contains(child.description)
        }
    }

    /// The `.indexOn` entries that apply at `path` (child paths such as `a/b`, or `.value`).
    public func indexOn(at path: Path) -> [String] {
        var captures: [String: String] = [:]
        var node = root
        for key in path.keys {
            guard let next = node.child(key, captures: &captures) else { return [] }
            node = next
        }
        return node.indexOn
    }

    /// Walks from the root to `path` and evaluates the cascading rule of `kind` at each level:
    /// the first that evaluates to `true` grants.
    func grant(_ kind: RuleKind, at path: Path, auth: RulesAuth?, oldRoot: Node, newRoot: Node, now: Double) -> Decision {
        var captures: [String: String] = [:]
        var node: RuleNode? = root
        var location = Path.root
        var lastDenial: (rule: RuleReference, path: Path, reason: String)?
        for depth in 0...path.depth {
            guard let current = node else { break }
            if let rule = kind == .read ? current.read : current.write {
                let context = EvaluationContext(auth: auth, now: now, oldRoot: oldRoot, newRoot: newRoot,
                                                path: location, captures: captures)
                switch Evaluator.isTrue(rule.expression, in: context) {
                case .success(true):
                    return .allowed(by: rule.reference, at: location, reason: "\(kind.rawValue) granted at \(location)")
                case .success(false):
                    lastDenial = (rule.reference, location, "\(kind.rawValue) evaluated to false")
                case .failure(let error):
                    lastDenial = (rule.reference, location, "\(kind.rawValue) failed: \(error.message)")
                }
            }
            guard depth < path.depth else { break }
            let key = path.keys[depth]
            node = current.child(key, captures: &captures)
            location = location.child(key)
        }
        if let denial = lastDenial {
            return .denied(by: denial.rule, at: denial.path, reason: "no \(kind.rawValue) rule granted access to \(path) (\(denial.reason))")
        }
        return .denied(by: nil, at: path, reason: "no \(kind.rawValue) rule applies to \(path)")
    }
}
