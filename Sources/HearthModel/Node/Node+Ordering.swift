// Node+Ordering: Firebase's order of nodes and leaf values (empty < leaf < children; among leaves, by type
// then value), which the query indexes and the priority order of the node hash sort by.

extension Node {
    /// The node this node's priority orders by in the priority index (the empty node without one).
    @inline(__always)
    var priorityNode: Node { priority.map { Node($0.leafValue) } ?? .empty }

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
