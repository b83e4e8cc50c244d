// RulesSet+Write: sets and multi-path updates, checked as a whole against .write and .validate.

import HearthModel

extension RulesSet {
    /// Whether `auth` may set `path` (a `set`, a REST PUT or DELETE, an onDisconnect set or
    /// remove, a transaction's final write) so that the tree becomes `newRoot`.
    ///
    /// `.write` must grant at `path` or an ancestor, evaluated with `data` the old value and
    /// `newData` the new one at the rule's location. Then every `.validate` from the root
    /// down to `path`, and in the new subtree at `path`, must pass wherever the new data is
    /// not null; a delete (`newRoot` null at `path`) runs no `.validate` at or below `path`.
    ///
    /// - Parameters:
    ///   - path: The location written.
    ///   - newRoot: The whole tree as it would be after the write
    ///     (`oldRoot.updating(path, with: value)`), server values already resolved.
    ///   - oldRoot: The whole tree before the write (`root` and `data` in rules).
    ///   - auth: The requester; `nil` when unauthenticated.
    ///   - now: The server's clock in milliseconds since the epoch (`now` in rules).
    /// - Returns: The decision: the granting `.write` when allowed; the failing `.validate`, or
    ///   the deepest `.write` that did not grant, when denied.
    public func canWrite(path: Path, newRoot: Node, oldRoot: Node, auth: RulesAuth?, now: Double) -> Decision {
        if auth?.isAdmin == true { return .allowed(by: nil, at: path, reason: "admin access bypasses rules") }
        return checkWrites(at: [path], auth: auth, oldRoot: oldRoot, newRoot: newRoot, now: now)
    }

    /// Whether `auth` may apply a multi-path update (an `update`, a REST PATCH, an
    /// onDisconnect update): every `(path, value)` written together, atomically.
    ///
    /// The update is checked as one operation: `newData` everywhere is the tree after
    /// **every** write is applied, each written location needs its own `.write` grant, and
    /// the `.validate` rules of all of them must pass; one failure denies the whole update.
    /// An empty update is denied (Firebase clients never send one).
    ///
    /// - Parameters:
    ///   - writes: Absolute locations and their new values (`Node.empty` deletes), applied
    ///     in order; server values already resolved.
    ///   - oldRoot: The whole tree before the update.
    ///   - auth: The requester; `nil` when unauthenticated.
    ///   - now: The server's clock in milliseconds since the epoch.
    /// - Returns: The decision: the first written location's granting `.write` when allowed;
    ///   the first refusal when denied.
    public func canUpdate(writes: [(path: Path, value: Node)], oldRoot: Node, auth: RulesAuth?, now: Double) -> Decision
    {
        guard let first = writes.first else {
            return .denied(by: nil, at: .root, reason: "an update must write at least one location")
        }
        if auth?.isAdmin == true { return .allowed(by: nil, at: first.path, reason: "admin access bypasses rules") }
        let newRoot = oldRoot.merging(writes.map { (path: $0.path, node: $0.value) })
        return checkWrites(at: writes.map(\.path), auth: auth, oldRoot: oldRoot, newRoot: newRoot, now: now)
    }

    private func checkWrites(
        at written: [Path], auth: RulesAuth?, oldRoot: Node, newRoot: Node, now: Double
    ) -> Decision {
        var firstGrant: Decision?
        var locations: [Path] = []
        var evaluator = Evaluator(steps: limits.evaluationSteps)
        for path in written {
            if path.isInfo {
                return .denied(
                    by: nil, at: path, reason: "\(path) is under .info, which is read-only",
                    steps: evaluator.budget.used)
            }
            let location = Self.ruleLocation(of: path)
            locations.append(location)
            let decision = grant(
                .write, at: location, auth: auth, oldRoot: oldRoot, newRoot: newRoot, now: now, evaluator: &evaluator)
            guard decision.isAllowed else { return decision }
            if firstGrant == nil { firstGrant = decision }
        }
        var validator = Validator(
            auth: auth, oldRoot: oldRoot, newRoot: newRoot, now: now, deduplicate: locations.count > 1,
            evaluator: evaluator)
        for location in locations {
            if let failure = validator.validate(root, along: location) { return failure }
        }
        let steps = validator.evaluator.budget.used
        return firstGrant?.spending(steps) ?? .denied(by: nil, at: .root, reason: "nothing was written", steps: steps)
    }
}

/// Runs the `.validate` rules of one write. With several written locations (a multi-path
/// update), each location is validated once even when several share it (their ancestors).
private struct Validator {
    let auth: RulesAuth?
    let oldRoot: Node
    let newRoot: Node
    let now: Double
    /// The locations already validated; `nil` for a single write, where the ancestors and
    /// the subtree of one location never overlap.
    var done: Set<Path>?
    /// The request's evaluator, with what is left of its steps after the `.write` rules.
    var evaluator: Evaluator

    init(auth: RulesAuth?, oldRoot: Node, newRoot: Node, now: Double, deduplicate: Bool, evaluator: Evaluator) {
        self.auth = auth
        self.oldRoot = oldRoot
        self.newRoot = newRoot
        self.now = now
        self.done = deduplicate ? [] : nil
        self.evaluator = evaluator
    }

    /// Validates the locations from the root down to `path`, then the whole new subtree at
    /// `path`. Returns the first failure.
    mutating func validate(_ rules: RuleNode, along path: Path) -> Decision? {
        var captures: [String] = []
        var node = rules
        var oldNode = oldRoot, newNode = newRoot
        for (depth, key) in path.keys.enumerated() {
            if node.validate != nil,
                let failure = check(
                    node, at: Path(keys: Array(path.keys[..<depth])), oldNode: oldNode,
                    newNode: newNode, captures: captures)
            {
                return failure
            }
            guard let next = node.child(key, captures: &captures) else { return nil }
            node = next
            oldNode = oldNode.child(key)
            newNode = newNode.child(key)
        }
        return subtree(node, at: path, oldNode: oldNode, newNode: newNode, captures: &captures)
    }

    /// Validates `newNode` and the new data below it against `rules` and the rules below.
    /// `captures` comes back as it went in.
    private mutating func subtree(
        _ rules: RuleNode, at location: Path, oldNode: Node, newNode: Node,
        captures: inout [String]
    ) -> Decision? {
        // Invariant: nothing is validated where the new data is null (deletes never run .validate).
        guard !newNode.isEmpty, rules.hasValidate else { return nil }
        do { try evaluator.charge(Evaluator.walkSteps) } catch {
            return .overBudget(
                by: nil, at: location, reason: "validating \(location): \(error.message)", steps: evaluator.budget.used)
        }
        if let failure = check(rules, at: location, oldNode: oldNode, newNode: newNode, captures: captures) {
            return failure
        }
        let bound = captures.count
        if rules.wildcard != nil {
            // Every new child meets a rule (named or the wildcard): walk the data.
            for (key, child) in newNode.children {
                defer { captures.removeSubrange(bound...) }
                guard let next = rules.child(key, captures: &captures), next.hasValidate else { continue }
                if let failure = subtree(
                    next, at: location.child(key), oldNode: oldNode.child(key), newNode: child,
                    captures: &captures)
                {
                    return failure
                }
            }
        } else {
            // Only named children have rules: walk the rules.
            for (key, next) in rules.validatedChildren {
                let child = newNode.child(key)
                if child.isEmpty { continue }
                if let failure = subtree(
                    next, at: location.child(key), oldNode: oldNode.child(key), newNode: child,
                    captures: &captures)
                {
                    return failure
                }
            }
        }
        return nil
    }

    private mutating func check(
        _ rules: RuleNode, at location: Path, oldNode: Node, newNode: Node,
        captures: [String]
    ) -> Decision? {
        guard let rule = rules.validate, !newNode.isEmpty else { return nil }
        if done?.insert(location).inserted == false { return nil }
        let context = EvaluationContext(
            auth: auth, now: now, oldRoot: oldRoot, newRoot: newRoot, path: location,
            data: oldNode, newData: newNode, captures: captures)
        switch evaluator.isTrue(rule.expression, in: context) {
        case .success(true):
            return nil
        case .success(false):
            return .denied(
                by: rule.reference, at: location, reason: ".validate at \(location) is false",
                steps: evaluator.budget.used)
        case .failure(let error) where error.exceededBudget:
            return .overBudget(
                by: rule.reference, at: location, reason: ".validate at \(location) is false: \(error.message)",
                steps: evaluator.budget.used)
        case .failure(let error):
            return .denied(
                by: rule.reference, at: location, reason: ".validate at \(location) is false: \(error.message)",
                steps: evaluator.budget.used)
        }
    }
}
