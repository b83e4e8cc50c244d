// RulesSet+Write: sets and multi-path updates, checked as a whole against .write and .validate.

import HearthModel

extension RulesSet {
    /// Whether `auth` may set `path` to `newValue` (`Node.empty` deletes).
    ///
    /// `.write` must grant at `path` or an ancestor (with `data` the old value and `newData`
    /// the new one); then every `.validate` on the path from the root to `path`, and in the
    /// new subtree, must pass wherever the new data is not null.
    public func canWrite(path: Path, newValue: Node, auth: RulesAuth?, root: Node, now: Double) -> Decision {
        if auth?.isAdmin == true { return .allowed(by: nil, at: path, reason: "admin access bypasses rules") }
        let newRoot = root.updating(path, with: newValue)
        return checkWrites(at: [path], auth: auth, oldRoot: root, newRoot: newRoot, now: now)
    }

    /// Whether `auth` may apply a multi-path update at `path`: each child is written at
    /// `path/child` (children may be deep relative paths such as `a/b`).
    ///
    /// The update is checked as one atomic operation: `newData` is the tree after **every**
    /// child is applied, each written location needs its own `.write` grant, and the
    /// `.validate` rules of all of them must pass; one failure denies the whole update. An
    /// empty update is checked as a write at `path` that changes nothing.
    public func canUpdate(path: Path, children: [(path: Path, node: Node)], auth: RulesAuth?, root: Node, now: Double) -> Decision {
        if auth?.isAdmin == true { return .allowed(by: nil, at: path, reason: "admin access bypasses rules") }
        let newRoot = root.updating(path, with: root.child(at: path).merging(children))
        let written = children.isEmpty ? [path] : children.map { path.appending($0.path) }
        return checkWrites(at: written, auth: auth, oldRoot: root, newRoot: newRoot, now: now)
    }

    private func checkWrites(at written: [Path], auth: RulesAuth?, oldRoot: Node, newRoot: Node, now: Double) -> Decision {
        var firstGrant: Decision?
        for path in written {
            let decision = grant(.write, at: path, auth: auth, oldRoot: oldRoot, newRoot: newRoot, now: now)
            guard decision.isAllowed else { return decision }
            if firstGrant == nil { firstGrant = decision }
        }
        var validator = Validator(auth: auth, oldRoot: oldRoot, newRoot: newRoot, now: now)
        for path in written {
            if let failure = validator.validate(root, along: path) { return failure }
        }
        return firstGrant ?? .denied(by: nil, at: .root, reason: "nothing was written")
    }
}

/// Runs the `.validate` rules of one write. Each location is validated once even when
/// several written paths share it (the ancestors of a multi-path update).
private struct Validator {
    let auth: RulesAuth?
    let oldRoot: Node
    let newRoot: Node
    let now: Double
    var done: Set<Path> = []

    init(auth: RulesAuth?, oldRoot: Node, newRoot: Node, now: Double) {
        self.auth = auth
        self.oldRoot = oldRoot
        self.newRoot = newRoot
        self.now = now
    }

    /// Validates the locations from the root down to `path`, then the whole new subtree at
    /// `path`. Returns the first failure.
    mutating func validate(_ rules: RuleNode, along path: Path) -> Decision? {
        var captures: [String: String] = [:]
        var node = rules
        var location = Path.root
        var newNode = newRoot
        for key in path.keys {
            if let failure = check(node, at: location, newNode: newNode, captures: captures) { return failure }
            guard let next = node.child(key, captures: &captures) else { return nil }
            node = next
            location = location.child(key)
            newNode = newNode.child(key)
        }
        return subtree(node, at: location, newNode: newNode, captures: captures)
    }

    private mutating func subtree(_ rules: RuleNode, at location: Path, newNode: Node, captures: [String: String]) -> Decision? {
        // Invariant: nothing is validated where the new data is null (deletes never run .validate).
        guard !newNode.isEmpty else { return nil }
        if let failure = check(rules, at: location, newNode: newNode, captures: captures) { return failure }
        if rules.wildcard != nil {
            for (key, child) in newNode.children {
                var inner = captures
                guard let next = rules.child(key, captures: &inner) else { continue }
                if let failure = subtree(next, at: location.child(key), newNode: child, captures: inner) { return failure }
            }
        } else {
            for (key, next) in rules.children {
                let child = newNode.child(key)
                if child.isEmpty { continue }
                if let failure = subtree(next, at: location.child(key), newNode: child, captures: captures) { return failure }
            }
        }
        return nil
    }

    private mutating func check(_ rules: RuleNode, at location: Path, newNode: Node, captures: [String: String]) -> Decision? {
        guard let rule = rules.validate, !newNode.isEmpty, done.insert(location).inserted else { return nil }
        let context = EvaluationContext(auth: auth, now: now, oldRoot: oldRoot, newRoot: newRoot,
                                        path: location, captures: captures)
        switch Evaluator.isTrue(rule.expression, in: context) {
        case .success(true):
            return nil
        case .success(false):
            return .denied(by: rule.reference, at: location, reason: ".validate failed at \(location)")
        case .failure(let error):
            return .denied(by: rule.reference, at: location, reason: ".validate failed at \(location): \(error.message)")
        }
    }
}
