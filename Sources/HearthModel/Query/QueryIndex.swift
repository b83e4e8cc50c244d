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
        case .priority: child.priority.map { Node($0.leafValue) } ?? .empty
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

extension Node {
    /// Firebase's node comparison used by the value, child and priority indexes:
    /// empty < leaf < children (all children nodes compare equal); among leaves, server-value
    /// placeholders < booleans < numbers < strings; booleans false < true; numbers by value;
    /// strings by UTF-16 code units. Returns negative, zero or positive.
    public static func compareForOrdering(_ a: Node, _ b: Node) -> Int {
        switch (a.storage, b.storage) {
        case (.empty, .empty): return 0
        case (.empty, _): return -1
        case (_, .empty): return 1
        case (.children, .children): return 0
        case (.leaf, .children): return -1
        case (.children, .leaf): return 1
        case let (.leaf(x, _), .leaf(y, _)): return LeafValue.compareForOrdering(x, y)
        }
    }
}

extension LeafValue {
    /// The rank of this value's type in Firebase's leaf type order.
    var typeRank: Int {
        switch self {
        case .serverValue: 0
        case .bool: 1
        case .number, .integer: 2
        case .string: 3
        }
    }

    /// Compares a double with a 64-bit integer by exact value. (Firebase's Android SDK compares
    /// a `LongNode` with a `DoubleNode` as doubles; exact comparison agrees except where the
    /// integer is beyond 2^53 and rounds to the double, where it orders by the true value.)
    static func compareExactly(_ x: Double, _ y: Int64) -> Int {
        let yd = Double(y)
        if x < yd { return -1 }
        if x > yd { return 1 }
        // x == Double(y): x is an integer in Int64's range (or exactly 2^63).
        guard let xi = Int64(exactly: x) else { return 1 }
        return xi < y ? -1 : (xi == y ? 0 : 1)
    }

    /// Firebase's leaf comparison; see ``Node/compareForOrdering(_:_:)``.
    public static func compareForOrdering(_ a: LeafValue, _ b: LeafValue) -> Int {
        switch (a, b) {
        case let (.bool(x), .bool(y)): return x == y ? 0 : (x ? 1 : -1)
        case let (.number(x), .number(y)): return x < y ? -1 : (x == y ? 0 : 1)
        case let (.integer(x), .integer(y)): return x < y ? -1 : (x == y ? 0 : 1)
        case let (.integer(x), .number(y)): return -compareExactly(y, x)
        case let (.number(x), .integer(y)): return compareExactly(x, y)
        case let (.string(x), .string(y)): return ChildKey.compareUTF16(x, y)
        case (.serverValue, .serverValue): return 0
        default: return a.typeRank < b.typeRank ? -1 : 1
        }
    }
}
