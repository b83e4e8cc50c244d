// The one path trie: a map from paths to values shaped as a tree, with an optional value at every
// location. State keeps its untracked paths and the pruner its keep/prune sets in it; the views
// keep merges, the pending-write overlay and the sync-point tree in it (Firebase's `ImmutableTree`).
//
// Decision: one path trie for State and the views. Both need the same shape — a value and a map
// of non-empty child tries per level — with the same costs, so one serves both at no cost: it holds
// the union of their operations and lives in `Support/`, below State and Views, which both use it.
// What differs is kept and named: the two visit children in different orders, and each order is
// load-bearing.
// State's walks (`entries`, `entries(below:)`, `forEachEntry`) go in Firebase key order
// (`ChildKey`'s `<`), which decides the order checkpoints list untracked paths in; the views' walks
// (`sortedChildren`, `forEach`, `forEachChildValue`, `fold`) go in plain UTF-16 order of the key
// strings, as Firebase's `ImmutableTree` does (`stringCompare`), which decides the order merges
// are applied in and sibling locations raise events in.
import HearthModel

/// A sparse tree keyed by path, with an optional value at every location: "the value at a path",
/// "the nearest entry at or above a path", "everything below a path" in O(depth) levels, each
/// an O(log siblings) search of a level kept in key order (``KeyOrderedMap``; one comparison
/// for a key after the level's last, as push ids are).
///
/// A value type: copies share storage until written. The functional forms (``setting(_:_:)``,
/// ``settingTree(_:_:)``) copy one level's list of blocks and one block per level, where a
/// dictionary per level would copy O(siblings); the mutating forms (``set(_:_:)``, ``setTree(_:_:)``,
/// ``removeEntries(below:)``) change a trie held in one place in O(depth) levels, mutating each
/// level in place when nothing else shares it (how the write tree keeps a pending write cheap
/// however many siblings it has).
///
/// Invariant (kept by every operation, asserted where a level is rebuilt): no child subtree is
/// empty, so two tries holding the same entries are equal.
struct PathTrie<Value> {
    /// The value at this location.
    private(set) var value: Value?
    /// The non-empty subtries under each child key, in key order (KeyOrderedMap.swift says why
    /// not a Dictionary).
    private(set) var children: KeyOrderedMap<PathTrie<Value>>

    /// A trie holding `value` at its root (or nothing).
    init(_ value: Value? = nil) {
        self.value = value
        self.children = KeyOrderedMap()
    }

    private init(value: Value?, children: KeyOrderedMap<PathTrie<Value>>) {
        assert(children.allValues { !$0.isEmpty }, "a path trie stores no empty child subtree")
        self.value = value
        self.children = children
    }

    /// Whether no path holds a value.
    var isEmpty: Bool { value == nil && children.isEmpty }

    /// The number of entries.
    var count: Int {
        var n = value == nil ? 0 : 1
        children.forEach { _, child in n += child.count }
        return n
    }

    // MARK: Lookups

    /// The value stored exactly at `path`.
    func value(at path: Path) -> Value? {
        var node = self
        for key in path.keys {
            guard let next = node.children[key] else { return nil }
            node = next
        }
        return node.value
    }

    /// The subtrie at `path` (empty when absent).
    func subtree(_ path: Path) -> PathTrie<Value> {
        var t = self
        for key in path.keys {
            guard let c = t.children[key] else { return PathTrie() }
            t = c
        }
        return t
    }

    /// The entry at `path` or at its nearest (deepest) ancestor that holds one.
    func nearestAtOrAbove(_ path: Path) -> (path: Path, value: Value)? {
        var best: (Int, Value)? = value.map { (0, $0) }
        var node = self
        for (i, key) in path.keys.enumerated() {
            guard let next = node.children[key] else { break }
            node = next
            if let v = node.value { best = (i + 1, v) }
        }
        return best.map { (Path(keys: Array(path.keys.prefix($0.0))), $0.1) }
    }

    /// The root-most location on `path` (from this trie's root down to `path` inclusive) that
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

    /// Whether any entry lies strictly below `path`.
    func hasEntries(below path: Path) -> Bool {
        var node = self
        for key in path.keys {
            guard let next = node.children[key] else { return false }
            node = next
        }
        return !node.children.isEmpty
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

    // MARK: Changes

    /// Sets (or with `nil`, removes) the value at `path` in place, keeping everything below it
    /// and pruning emptied branches. O(depth) hash operations when this trie's storage is not
    /// shared; a shared level is copied once, as with ``setting(_:_:)``.
    mutating func set(_ path: Path, _ newValue: Value?) {
        modify(path.keys[...]) { $0.value = newValue }
    }

    /// Changes the value at `path` in place with `body` (``set(_:_:)`` with the old value at
    /// hand: a collection held there is changed where it is stored, not copied).
    mutating func updateValue(at path: Path, _ body: (inout Value?) -> Void) {
        modify(path.keys[...]) { body(&$0.value) }
    }

    /// Replaces the subtrie at `path` by `tree`, in place; see ``set(_:_:)``.
    mutating func setTree(_ path: Path, _ tree: PathTrie<Value>) {
        modify(path.keys[...]) { $0 = tree }
    }

    /// Removes every entry strictly below `path` (the entry at `path` stays).
    mutating func removeEntries(below path: Path) {
        modify(path.keys[...]) { $0.children.removeAll() }
    }

    /// Writes along `path` in one descent, in place (the overlay's
    /// ``CompoundWrite/addWrite(_:_:)``): the root-most location on `path` holding a value
    /// gets `fold(&value, keys)`, `keys` leading from there to `path`; when none does, the
    /// subtrie at `path` becomes `tree`, which must not be empty. One hash per level — where
    /// ``rootMostValue(on:)`` then ``set(_:_:)`` hashed each key three times — and no level
    /// is left empty: both branches leave a value on the path.
    mutating func writeRootMost(
        _ path: Path, fold: (inout Value, ArraySlice<ChildKey>) -> Void, otherwise tree: () -> PathTrie<Value>
    ) {
        writeRootMost(path.keys[...], fold: fold, otherwise: tree)
    }

    private mutating func writeRootMost(
        _ keys: ArraySlice<ChildKey>, fold: (inout Value, ArraySlice<ChildKey>) -> Void,
        otherwise tree: () -> PathTrie<Value>
    ) {
        if value != nil {
            fold(&value!, keys)
            return
        }
        guard let front = keys.first else {
            self = tree()
            precondition(!isEmpty, "writeRootMost leaves a value on the path")
            return
        }
        // The child is yielded in place (an empty one inserted first when absent): its
        // storage stays uniquely referenced.
        children.modify(front, default: PathTrie()) { $0.writeRootMost(keys.dropFirst(), fold: fold, otherwise: tree) }
    }

    /// Applies `body` to the subtrie at `keys` in place, keeping the no-empty-subtree invariant.
    private mutating func modify(_ keys: ArraySlice<ChildKey>, _ body: (inout PathTrie<Value>) -> Void) {
        guard let front = keys.first else {
            body(&self)
            return
        }
        // An absent child is built aside and inserted only if something is left in it: an
        // insert that the removal then undid could split a full block for nothing.
        guard children[front] != nil else {
            var child = PathTrie()
            child.modify(keys.dropFirst(), body)
            if !child.isEmpty { children[front] = child }
            return
        }
        // A present child is changed where it is stored (its own storage uniquely referenced
        // when this level's is), and removed when it ends up empty.
        let emptied = children.modify(front, default: PathTrie()) { child -> Bool in
            child.modify(keys.dropFirst(), body)
            return child.isEmpty
        }
        if emptied { children.removeValue(forKey: front) }
    }

    /// The trie with `value` at `path` (keeping everything below it).
    func setting(_ path: Path, _ value: Value?) -> PathTrie<Value> {
        setting(path.keys[...], value)
    }

    private func setting(_ keys: ArraySlice<ChildKey>, _ newValue: Value?) -> PathTrie<Value> {
        guard let front = keys.first else { return PathTrie(value: newValue, children: children) }
        let child = (children[front] ?? PathTrie()).setting(keys.dropFirst(), newValue)
        var c = children
        c[front] = child.isEmpty ? nil : child
        return PathTrie(value: value, children: c)
    }

    /// The trie with the subtrie at `path` replaced by `tree`.
    func settingTree(_ path: Path, _ tree: PathTrie<Value>) -> PathTrie<Value> {
        settingTree(path.keys[...], tree)
    }

    private func settingTree(_ keys: ArraySlice<ChildKey>, _ tree: PathTrie<Value>) -> PathTrie<Value> {
        guard let front = keys.first else { return tree }
        let child = (children[front] ?? PathTrie()).settingTree(keys.dropFirst(), tree)
        var c = children
        c[front] = child.isEmpty ? nil : child
        return PathTrie(value: value, children: c)
    }

    /// The trie without the value at `path` (the subtrie below it stays).
    func removing(_ path: Path) -> PathTrie<Value> {
        setting(path, nil)
    }
}

// MARK: Walks in Firebase key order (State's)

extension PathTrie {
    /// The entries strictly below `path`, in key order; with `topmostOnly`, only those with
    /// no other entry between them and `path`. O(depth + the visited part of the subtree).
    func entries(below path: Path, topmostOnly: Bool = false) -> [Path] {
        let node = subtree(path)
        var out: [Path] = []
        var stack = path.keys
        func walk(_ node: PathTrie) {
            node.children.forEach { key, child in
                stack.append(key)
                if child.value != nil { out.append(Path(keys: stack)) }
                if child.value == nil || !topmostOnly { walk(child) }
                stack.removeLast()
            }
        }
        walk(node)
        return out
    }

    /// Every entry, in key order (an entry before those below it).
    var entries: [(path: Path, value: Value)] {
        var out: [(path: Path, value: Value)] = []
        forEachEntry { keys, v in out.append((Path(keys: keys), v)) }
        return out
    }

    /// Calls `body` with every entry's keys (from the root) and value, in key order (an entry
    /// before those below it), without building a `Path` per entry.
    func forEachEntry(_ body: ([ChildKey], Value) -> Void) {
        var stack: [ChildKey] = []
        func walk(_ node: PathTrie) {
            if let v = node.value { body(stack, v) }
            node.children.forEach { key, child in
                stack.append(key)
                walk(child)
                stack.removeLast()
            }
        }
        walk(self)
    }
}

// MARK: Walks in UTF-16 order of the key strings (the views', as Firebase's ImmutableTree)

extension PathTrie {
    /// The children in Firebase's `ImmutableTree` traversal order (UTF-16 order of the key strings).
    /// The children's own order is that one unless some key is integer-like: only then sorted.
    var sortedChildren: [(key: ChildKey, tree: PathTrie<Value>)] {
        let inKeyOrder = children.entries.map { (key: $0.key, tree: $0.value) }
        if !children.hasIntegerKeys { return inKeyOrder }
        return inKeyOrder.sorted { ChildKey.compareUTF16($0.key.string, $1.key.string) < 0 }
    }

    /// Calls `body` for every value: children first (in UTF-16 order), then this location's own
    /// value — Firebase's `foreach`, a post-order walk.
    func forEach(_ body: (Path, Value) throws -> Void) rethrows {
        try forEach(prefix: [], body)
    }

    private func forEach(prefix: [ChildKey], _ body: (Path, Value) throws -> Void) rethrows {
        for (key, child) in sortedChildren {
            try child.forEach(prefix: prefix + [key], body)
        }
        if let value { try body(Path(keys: prefix), value) }
    }

    /// Calls `body` for every immediate child that holds a value, in UTF-16 order.
    func forEachChildValue(_ body: (ChildKey, Value) throws -> Void) rethrows {
        for (key, child) in sortedChildren {
            if let v = child.value { try body(key, v) }
        }
    }

    /// Folds the trie bottom-up: `body(path, value, childResults)`, children in UTF-16 order.
    func fold<R>(_ body: (Path, Value?, [(ChildKey, R)]) -> R) -> R {
        fold(prefix: [], body)
    }

    private func fold<R>(prefix: [ChildKey], _ body: (Path, Value?, [(ChildKey, R)]) -> R) -> R {
        let results = sortedChildren.map { ($0.key, $0.tree.fold(prefix: prefix + [$0.key], body)) }
        return body(Path(keys: prefix), value, results)
    }
}

extension PathTrie: Sendable where Value: Sendable {}
extension PathTrie: Equatable where Value: Equatable {}
extension PathTrie: Hashable where Value: Hashable {}
