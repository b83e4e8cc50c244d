/// What a query orders children by, with Firebase's exact comparison rules.
///
/// Every index compares `(indexed value, key)` pairs: first the indexed values, then — on a
/// tie — the keys in ``ChildKey`` order.
public enum QueryIndex: Sendable, Hashable, CustomStringConvertible {
    /// By priority (the default): no priority < numeric priorities < string priorities.
    case priority
    /// By key alone.
    case key
    /// By the child's value: null < false < true < numbers < strings < objects.
    case value
    /// By the value at a path under each child (a missing one sorts as null).
    case child(Path)

    /// The wire spelling of `i`: `.key`, `.value`, the child path, or `.priority`
    /// (which the wire omits).
    public var wireName: String {
        switch self {
        case .priority: ".priority"
        case .key: ".key"
        case .value: ".value"
        case .child(let p): p.description
        }
    }

    public var description: String { wireName }

    /// The value this index orders `child` by (unused by ``key``).
    @inline(__always)
    public func indexedValue(of child: Node) -> Node {
        switch self {
        case .priority: child.priorityNode
        case .key: .empty
        case .value: child
        case .child(let path): child.child(at: path)
        }
    }

    /// Three-way comparison of two children in this index's order.
    @inline(__always)
    public func compare(_ a: (key: ChildKey, value: Node), _ b: (key: ChildKey, value: Node)) -> Int {
        if case .key = self { return ChildKey.compare(a.key, b.key) }
        let c = Node.compareForOrdering(indexedValue(of: a.value), indexedValue(of: b.value))
        return c != 0 ? c : ChildKey.compare(a.key, b.key)
    }
}
