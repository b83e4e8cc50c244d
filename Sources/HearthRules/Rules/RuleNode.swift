// RuleNode: the rules file as a tree that mirrors the data, built and checked once.

import HearthModel

/// One compiled rule: its expression and where it came from.
struct CompiledRule: Sendable {
    let reference: RuleReference
    let expression: Expr
}

/// The rules at one location of the rules tree, and the locations below it.
///
/// A request walks down from the root: at each level the named child matching the key is
/// taken, else the `$wildcard` child (which captures the key); when neither exists, no rule
/// lies deeper. Immutable after parsing, so shared freely across threads.
final class RuleNode: Sendable {
    /// The location as written, such as `/users/$uid`.
    let location: String
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    /// The `.indexOn` entries: child paths (`a/b`) or `.value`.
    let indexOn: [String]
    let children: [ChildKey: RuleNode]
    /// The `$name` child (name without `$`).
    let wildcard: (name: String, node: RuleNode)?
    /// Whether this node or one below it has a `.validate` rule: where none does, a write's
    /// new data need not be walked.
    let hasValidate: Bool
    /// The named children that have a `.validate` at or below them, in key order: a write's
    /// validation walks them in this fixed order, so that which failing rule is reported, and
    /// the steps spent before it, never depend on a dictionary's per-instance order.
    let validatedChildren: [(key: ChildKey, node: RuleNode)]

    init(
        location: String, read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?,
        indexOn: [String], children: [ChildKey: RuleNode], wildcard: (name: String, node: RuleNode)?
    ) {
        self.location = location
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = children
        self.wildcard = wildcard
        hasValidate =
            validate != nil || children.values.contains { $0.hasValidate } || wildcard?.node.hasValidate == true
        validatedChildren = children.filter { $0.value.hasValidate }.sorted { $0.key < $1.key }
            .map { (key: $0.key, node: $0.value) }
    }

    /// The rule node for `key`, appending the key to `captures` when a wildcard is what
    /// matched (so the i-th capture is the key under the i-th wildcard of the location).
    func child(_ key: ChildKey, captures: inout [String]) -> RuleNode? {
        if let named = children[key] { return named }
        if let (_, node) = wildcard {
            captures.append(key.string)
            return node
        }
        return nil
    }

    /// The number of `.read`/`.write`/`.validate` rules in this subtree.
    var ruleCount: Int {
        var n = [read, write, validate].compactMap { $0 }.count
        for child in children.values { n += child.ruleCount }
        if let (_, node) = wildcard { n += node.ruleCount }
        return n
    }
}
