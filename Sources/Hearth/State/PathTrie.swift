import HearthModel

/// A map from paths to values shaped as a tree, answering "the nearest entry at or above a
/// path" and "remove everything below a path" in O(depth). A value type: copies share storage
/// until written (each level's dictionary is copy-on-write).
struct PathTrie<Value: Sendable & Hashable>: Sendable, Hashable {
    private(set) var value: Value?
    private var children: [ChildKey: PathTrie] = [:]

    init() {}

    /// Whether no path holds a value.
    var isEmpty: Bool { value == nil && children.isEmpty }

    /// The value stored exactly at `path`.
    func value(at path: Path) -> Value? {
        var node = self
        for key in path.keys {
            guard let next = node.children[key] else { return nil }
            node = next
        }
        return node.value
    }

    /// The entry at `path` or at its nearest ancestor that holds one.
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

    /// Whether any entry lies strictly below `path`.
    func hasEntries(below path: Path) -> Bool {
        var node = self
        for key in path.keys {
            guard let next = node.children[key] else { return false }
            node = next
        }
        return !node.children.isEmpty
    }

    /// Sets (or with `nil`, removes) the value at `path`, pruning emptied branches.
    mutating func set(_ path: Path, _ newValue: Value?) {
        set(path.keys[...], newValue)
    }

    private mutating func set(_ keys: ArraySlice<ChildKey>, _ newValue: Value?) {
        guard let key = keys.first else {
            value = newValue
            return
        }
        var child = children.removeValue(forKey: key) ?? PathTrie()
        child.set(keys.dropFirst(), newValue)
        if !child.isEmpty { children[key] = child }
    }

    /// Removes every entry strictly below `path` (the entry at `path` stays).
    mutating func removeEntries(below path: Path) {
        removeBelow(path.keys[...])
    }

    private mutating func removeBelow(_ keys: ArraySlice<ChildKey>) {
        guard let key = keys.first else {
            children = [:]
            return
        }
        guard var child = children.removeValue(forKey: key) else { return }
        child.removeBelow(keys.dropFirst())
        if !child.isEmpty { children[key] = child }
    }

    /// The entries strictly below `path`, in path order; with `topmostOnly`, only those with
    /// no other entry between them and `path`. O(depth + the visited part of the subtree).
    func entries(below path: Path, topmostOnly: Bool = false) -> [Path] {
        var node = self
        for key in path.keys {
            guard let next = node.children[key] else { return [] }
            node = next
        }
        var out: [Path] = []
        var stack = path.keys
        func walk(_ node: PathTrie) {
            for key in node.children.keys.sorted() {
                let child = node.children[key]!
                stack.append(key)
                if child.value != nil { out.append(Path(keys: stack)) }
                if child.value == nil || !topmostOnly { walk(child) }
                stack.removeLast()
            }
        }
        walk(node)
        return out
    }

    /// Every entry, in path order.
    var entries: [(path: Path, value: Value)] {
        var out: [(path: Path, value: Value)] = []
        func walk(_ node: PathTrie, _ prefix: [ChildKey]) {
            if let v = node.value { out.append((Path(keys: prefix), v)) }
            for key in node.children.keys.sorted() { walk(node.children[key]!, prefix + [key]) }
        }
        walk(self, [])
        return out
    }

    /// Calls `body` with every entry's keys (from the root) and value, in path order,
    /// without building a `Path` per entry.
    func forEachEntry(_ body: ([ChildKey], Value) -> Void) {
        var stack: [ChildKey] = []
        func walk(_ node: PathTrie) {
            if let v = node.value { body(stack, v) }
            for key in node.children.keys.sorted() {
                stack.append(key)
                walk(node.children[key]!)
                stack.removeLast()
            }
        }
        walk(self)
    }

    /// The number of entries.
    var count: Int {
        (value == nil ? 0 : 1) + children.values.reduce(0) { $0 + $1.count }
    }
}
