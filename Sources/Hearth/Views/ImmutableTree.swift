import HearthModel

/// A sparse tree keyed by path, with an optional value at every location (Firebase's
/// `ImmutableTree`): the shape of merges, of pending-write overlays and of the sync-point
/// tree.
///
/// A value type: "updates" return new trees (children dictionaries are copy-on-write, so a
/// functional change copies one dictionary per level — O(siblings) at every level). The
/// mutating forms (``set(_:_:)``, ``setTree(_:_:)``) change a tree held in one place in
/// O(depth): each level's dictionary is mutated in place when nothing else shares it, which is
/// how the write tree keeps a pending write at O(depth) however many siblings it has. Children are visited in the order Firebase visits
/// them — plain UTF-16 string order of the keys (its `ImmutableTree` sorts children with
/// `stringCompare`, not key order) — which decides the order in which merges are applied and
/// in which sibling locations raise events.
///
/// Invariant (kept by every operation): no child subtree is empty.
struct ImmutableTree<Value> {
    /// The value at this location.
    private(set) var value: Value?
    /// The non-empty subtrees under each child key.
    private(set) var children: [ChildKey: ImmutableTree<Value>]

    /// A tree holding `value` at its root (or nothing).
    init(_ value: Value? = nil) {
        self.value = value
        self.children = [:]
    }

    private init(value: Value?, children: [ChildKey: ImmutableTree<Value>]) {
        self.value = value
        self.children = children
    }

    /// Whether the tree holds no value anywhere.
    var isEmpty: Bool { value == nil && children.isEmpty }

    /// The children in Firebase's traversal order (UTF-16 order of the key strings).
    var sortedChildren: [(key: ChildKey, tree: ImmutableTree<Value>)] {
        children.map { (key: $0.key, tree: $0.value) }.sorted { ChildKey.compareUTF16($0.key.string, $1.key.string) < 0 }
    }

    /// The value at `path`, if any.
    func get(_ path: Path) -> Value? {
        var t = self
        for key in path.keys {
            guard let c = t.children[key] else { return nil }
            t = c
        }
        return t.value
    }

    /// The subtree at `path` (empty when absent).
    func subtree(_ path: Path) -> ImmutableTree<Value> {
        var t = self
        for key in path.keys {
            guard let c = t.children[key] else { return ImmutableTree() }
            t = c
        }
        return t
    }

    /// The root-most location on `path` (from this tree's root down to `path` inclusive) that
    /// holds a value, with that value.
    func rootMostValue(on path: Path) -> (path: Path, value: Value)? {
        var t = self
        var depth = 0
        while true {
            if let v = t.value { return (Path(keys: Array(path.keys[..<depth])), v) }
            guard depth < path.keys.count, let c = t.children[path.keys[depth]] else { return nil }
            t = c
            depth += 1
        }
    }

    /// The tree with `value` at `path` (keeping everything below it).
    func setting(_ path: Path, _ value: Value?) -> ImmutableTree<Value> {
        setting(path.keys[...], value)
    }

    private func setting(_ keys: ArraySlice<ChildKey>, _ newValue: Value?) -> ImmutableTree<Value> {
        guard let front = keys.first else { return ImmutableTree(value: newValue, children: children) }
        let child = (children[front] ?? ImmutableTree()).setting(keys.dropFirst(), newValue)
        var c = children
        c[front] = child.isEmpty ? nil : child
        return ImmutableTree(value: value, children: c)
    }

    /// Sets `value` at `path` in place (keeping everything below it). O(depth) hash operations
    /// when this tree's storage is not shared; a shared level is copied once, as with
    /// ``setting(_:_:)``.
    mutating func set(_ path: Path, _ newValue: Value?) {
        modify(path.keys[...]) { $0.value = newValue }
    }

    /// Replaces the subtree at `path` by `tree`, in place; see ``set(_:_:)``.
    mutating func setTree(_ path: Path, _ tree: ImmutableTree<Value>) {
        modify(path.keys[...]) { $0 = tree }
    }

    /// Applies `body` to the subtree at `keys` in place, keeping the no-empty-subtree invariant.
    private mutating func modify(_ keys: ArraySlice<ChildKey>, _ body: (inout ImmutableTree<Value>) -> Void) {
        guard let front = keys.first else {
            body(&self)
            return
        }
        // Taken out of the dictionary so that the child's own storage is uniquely referenced
        // while it is mutated, and left out when it ends up empty.
        var child = children.removeValue(forKey: front) ?? ImmutableTree()
        child.modify(keys.dropFirst(), body)
        if !child.isEmpty { children[front] = child }
    }

    /// The tree with the subtree at `path` replaced by `tree`.
    func settingTree(_ path: Path, _ tree: ImmutableTree<Value>) -> ImmutableTree<Value> {
        settingTree(path.keys[...], tree)
    }

    private func settingTree(_ keys: ArraySlice<ChildKey>, _ tree: ImmutableTree<Value>) -> ImmutableTree<Value> {
        guard let front = keys.first else { return tree }
        let child = (children[front] ?? ImmutableTree()).settingTree(keys.dropFirst(), tree)
        var c = children
        c[front] = child.isEmpty ? nil : child
        return ImmutableTree(value: value, children: c)
    }

    /// The tree without the value at `path` (the subtree below it stays).
    func removing(_ path: Path) -> ImmutableTree<Value> {
        setting(path, nil)
    }

    /// Calls `body` for every value: children first (in traversal order), then this
    /// location's own value — Firebase's `foreach`, a post-order walk.
    func forEach(_ body: (Path, Value) throws -> Void) rethrows {
        try forEach(prefix: [], body)
    }

    private func forEach(prefix: [ChildKey], _ body: (Path, Value) throws -> Void) rethrows {
        for (key, child) in sortedChildren {
            try child.forEach(prefix: prefix + [key], body)
        }
        if let value { try body(Path(keys: prefix), value) }
    }

    /// Calls `body` for every immediate child that holds a value, in traversal order.
    func forEachChildValue(_ body: (ChildKey, Value) throws -> Void) rethrows {
        for (key, child) in sortedChildren {
            if let v = child.value { try body(key, v) }
        }
    }

    /// Calls `body` for every value strictly above `path` on the way down from the root
    /// (Firebase's `foreachOnPath`, which excludes the location at `path` itself), with the
    /// value's location.
    func forEachAncestorValue(of path: Path, _ body: (Path, Value) throws -> Void) rethrows {
        var t = self
        for depth in 0..<path.keys.count {
            if let v = t.value { try body(Path(keys: Array(path.keys[..<depth])), v) }
            guard let c = t.children[path.keys[depth]] else { return }
            t = c
        }
    }

    /// Whether some location from the root down to `path` inclusive holds a value satisfying
    /// `predicate` (Firebase's `findOnPath`).
    func contains(on path: Path, where predicate: (Path, Value) -> Bool) -> Bool {
        var t = self
        var depth = 0
        while true {
            if let v = t.value, predicate(Path(keys: Array(path.keys[..<depth])), v) { return true }
            guard depth < path.keys.count, let c = t.children[path.keys[depth]] else { return false }
            t = c
            depth += 1
        }
    }

    /// Folds the tree bottom-up: `body(path, value, childResults)`.
    func fold<R>(_ body: (Path, Value?, [(ChildKey, R)]) -> R) -> R {
        fold(prefix: [], body)
    }

    private func fold<R>(prefix: [ChildKey], _ body: (Path, Value?, [(ChildKey, R)]) -> R) -> R {
        let results = sortedChildren.map { ($0.key, $0.tree.fold(prefix: prefix + [$0.key], body)) }
        return body(Path(keys: prefix), value, results)
    }
}
extension ImmutableTree: Sendable where Value: Sendable {}
