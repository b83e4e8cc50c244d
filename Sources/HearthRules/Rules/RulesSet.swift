// RulesSet: a loaded rules file, and the read, query and index questions a server asks of it.

import HearthModel

/// A Firebase Realtime Database rules file, parsed and checked once, ready to answer every
/// read, listen, query, set and update a server receives. Pure: it never does I/O, and the
/// data, identity and clock are passed into every call. Immutable and `Sendable`: share one
/// value across every connection.
///
/// ```swift
/// let rules = try RulesSet.parse(source: """
///     { "rules": { "users": { "$uid": {
///         ".read": "auth != null && auth.uid == $uid",
///         ".write": "auth != null && auth.uid == $uid" } } } }
///     """)
/// let decision = rules.canWrite(path: "users/alice", newRoot: newRoot, oldRoot: oldRoot,
///                               auth: RulesAuth(uid: "alice"), now: nowMillis)
/// // decision.isAllowed == true; decision.rule is /users/$uid/.write
/// ```
///
/// Semantics (Firebase's):
/// - `.read` and `.write` cascade: a grant at a location or any ancestor allows the request,
///   and no deeper rule can revoke it; where no rule on the way down grants, the request is
///   denied. Rules are not filters: a read of a parent is denied even when every child
///   could be read one by one.
/// - `.validate` does not cascade: every `.validate` on the way from the root to a written
///   location, and in the written subtree, must pass for the new data; none runs where the
///   new data is null (deletes).
/// - An error while evaluating a rule (reading a property of null, comparing a string with a
///   number) makes that rule false; the decision's reason says what went wrong.
/// - A write to `x/.priority` is checked as a write to `x`.
///
/// Bounds (``Limits``, checked at load and per request): a request's evaluation stops at
/// ``Limits/evaluationSteps`` and the request is denied (``Decision/exceededBudget``), so with
/// the defaults no request costs more than about 60 ms of rules evaluation, whatever its data.
public struct RulesSet: Sendable {
    let root: RuleNode

    /// The bounds the file was loaded within; ``Limits/evaluationSteps`` bounds each request.
    public let limits: Limits

    /// The number of `.read`, `.write` and `.validate` rules in the file.
    public var ruleCount: Int { root.ruleCount }

    /// Parses and checks a rules file: Firebase's JSON format, `{"rules": {...}}`, read as
    /// Firebase reads it — `//` and `/* */` comments, string values spanning lines, trailing
    /// commas; a key given twice in one object is refused. Every expression is parsed and
    /// type-checked here, once. The default ``Limits`` apply.
    ///
    /// - Throws: ``RulesError`` naming the 1-based line and column of the first problem and,
    ///   for a bad rule, its location such as `/users/$uid/.write`. A server should print it
    ///   and refuse to start.
    public static func parse(source: String) throws(RulesError) -> RulesSet {
        try parse(source: source, limits: Limits())
    }

    /// Parses and checks a rules file as ``parse(source:)`` does, within `limits`: a file, an
    /// expression or a nesting past its bound is refused with a ``RulesError`` that names the
    /// bound, and every request evaluated later gets `limits.evaluationSteps`.
    public static func parse(source: String, limits: Limits) throws(RulesError) -> RulesSet {
        let bytes = source.utf8.count
        guard bytes <= limits.maxSourceBytes else {
            throw .syntax(
                message: "the rules file is \(bytes) bytes, over the limit of \(limits.maxSourceBytes)", line: 1,
                column: 1)
        }
        let text = SourceText(source)
        var parser = RulesJSONParser(source: text)
        let document = try parser.parseDocument()
        return RulesSet(root: try RulesCompiler(source: text, limits: limits).compileDocument(document), limits: limits)
    }

    /// Whether `auth` may read `path`: a value read, a listen, or a REST GET.
    ///
    /// - Parameters:
    ///   - path: The location read.
    ///   - auth: The requester; `nil` when unauthenticated (`auth == null` in rules).
    ///   - root: The whole database tree as it is now (`root` and `data` in rules).
    ///   - now: The server's clock in milliseconds since the epoch (`now` in rules).
    /// - Returns: The decision and the `.read` rule that made it.
    public func canRead(path: Path, auth: RulesAuth?, root: Node, now: Double) -> Decision {
        if auth?.isAdmin == true { return .allowed(by: nil, at: path, reason: "admin access bypasses rules") }
        var evaluator = Evaluator(steps: limits.evaluationSteps)
        return grant(
            .read, at: Self.ruleLocation(of: path), auth: auth, oldRoot: root, newRoot: root, now: now,
            evaluator: &evaluator)
    }

    /// Whether `auth` may run `query` at `path` (a listen with query parameters, or a REST
    /// GET with `orderBy`): the `.read` rules decide as for a read of `path` (rules are not
    /// filters), and they may test the query itself (`query.orderByChild`, `query.limitToFirst`
    /// and the rest: Firebase's query-based rules).
    /// An allowed query ordered by a child or by value that no `.indexOn` at `path` names
    /// carries ``RulesWarning/noIndex(path:index:)`` in ``Decision/warnings``; its results
    /// are still to be computed and sent.
    ///
    /// - Parameters:
    ///   - path: The query's location.
    ///   - query: The query's parameters.
    ///   - auth: The requester; `nil` when unauthenticated.
    ///   - root: The whole database tree as it is now.
    ///   - now: The server's clock in milliseconds since the epoch.
    public func canQuery(path: Path, query: QuerySpec, auth: RulesAuth?, root: Node, now: Double) -> Decision {
        if auth?.isAdmin == true { return .allowed(by: nil, at: path, reason: "admin access bypasses rules") }
        var evaluator = Evaluator(steps: limits.evaluationSteps)
        let decision = grant(
            .read, at: Self.ruleLocation(of: path), auth: auth, oldRoot: root, newRoot: root, now: now,
            query: query, evaluator: &evaluator)
        guard decision.isAllowed, !hasIndex(path: path, on: query.index) else { return decision }
        return decision.adding(.noIndex(path: path, index: query.index.wireName))
    }

    /// Whether an `.indexOn` at exactly `path` covers `index`: always `true` for key and
    /// priority order, which need no index; `.value` order needs `".indexOn": ".value"`;
    /// child order needs the child's path (`"a/b"`) listed.
    public func hasIndex(path: Path, on index: QueryIndex) -> Bool {
        switch index {
        case .key, .priority: return true
        case .value: return indexOn(at: path).contains(".value")
        case .child(let child): return indexOn(at: path).contains(child.description)
        }
    }

    /// The `.indexOn` entries that apply at `path` (child paths such as `a/b`, or `.value`),
    /// following `$wildcards` as requests do; empty when none.
    public func indexOn(at path: Path) -> [String] {
        var captures: [String] = []
        var node = root
        for key in path.keys {
            guard let next = node.child(key, captures: &captures) else { return [] }
            node = next
        }
        return node.indexOn
    }

    /// The location rules are checked at for a request at `path`: `x/.priority` is `x`.
    static func ruleLocation(of path: Path) -> Path {
        path.isPriority ? (path.parent ?? .root) : path
    }

    /// Walks from the root to `path` and evaluates the cascading rule of `kind` at each level:
    /// the first that evaluates to `true` grants. Otherwise the deepest rule that was
    /// evaluated is reported as the one that denied. A rule that runs out of the request's
    /// steps denies at once: no deeper rule is tried.
    func grant(
        _ kind: RuleKind, at path: Path, auth: RulesAuth?, oldRoot: Node, newRoot: Node, now: Double,
        query: QuerySpec? = nil, evaluator: inout Evaluator
    ) -> Decision {
        var captures: [String] = []
        var node: RuleNode? = root
        // The data at the current depth, before and after: one lookup per level. (Reads pass
        // the same tree twice: walk it once.)
        let sameTree = kind == .read
        var oldNode = oldRoot, newNode = newRoot
        var lastDenial: (rule: RuleReference, path: Path, reason: String)?
        for depth in 0...path.depth {
            guard let current = node else { break }
            if let rule = kind == .read ? current.read : current.write {
                let location = depth == path.depth ? path : Path(keys: Array(path.keys[..<depth]))
                let context = EvaluationContext(
                    auth: auth, now: now, oldRoot: oldRoot, newRoot: newRoot, path: location,
                    data: oldNode, newData: sameTree ? oldNode : newNode, captures: captures, query: query)
                switch evaluator.isTrue(rule.expression, in: context) {
                case .success(true):
                    return .granted(by: rule.reference, at: location, steps: evaluator.budget.used)
                case .success(false):
                    lastDenial = (rule.reference, location, "\(kind.rawValue) at \(location) is false")
                case .failure(let error) where error.exceededBudget:
                    return .overBudget(
                        by: rule.reference, at: location,
                        reason: "\(kind.rawValue) at \(location) is false: \(error.message)",
                        steps: evaluator.budget.used)
                case .failure(let error):
                    lastDenial = (
                        rule.reference, location, "\(kind.rawValue) at \(location) is false: \(error.message)"
                    )
                }
            }
            guard depth < path.depth else { break }
            let key = path.keys[depth]
            node = current.child(key, captures: &captures)
            oldNode = oldNode.child(key)
            if !sameTree { newNode = newNode.child(key) }
        }
        if let denial = lastDenial {
            return .denied(
                by: denial.rule, at: denial.path,
                reason: "no \(kind.rawValue) rule grants access to \(path) (\(denial.reason))",
                steps: evaluator.budget.used)
        }
        return .denied(
            by: nil, at: path, reason: "no \(kind.rawValue) rule applies to \(path)", steps: evaluator.budget.used)
    }
}
