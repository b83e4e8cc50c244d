import HearthModel

/// A position in a query index's order: a child, or a query bound (Firebase's "post": a
/// `NamedNode` built by `makePost`, or the `minPost`/`maxPost` sentinels).
///
/// Positions compare by the index's value first, then by key; the sentinels `[MIN_NAME]` and
/// `[MAX_NAME]` sort before and after every key, and ``SortValue/max`` after every value.
/// Under ``QueryIndex/key`` only the key counts.
struct IndexPost: Sendable {
    /// The index value of a position.
    enum SortValue: Sendable {
        /// An index value (the empty node for null).
        case node(Node)
        /// Firebase's `MAX_NODE`: after every value.
        case max
    }

    /// The index value (ignored by the key index).
    let value: SortValue
    /// The key, or a sentinel.
    let key: BoundKey

    /// The first position of every index: `(null, [MIN_NAME])`.
    static let min = IndexPost(value: .node(.empty), key: .min)
    /// The last position of every index: `(MAX_NODE, [MAX_NAME])`.
    static let max = IndexPost(value: .max, key: .max)

    /// The position of a child under `index`.
    init(child key: ChildKey, _ node: Node, index: QueryIndex) {
        self.value = index == .key ? .node(.empty) : .node(index.indexedValue(of: node))
        self.key = .key(key)
    }

    init(value: SortValue, key: BoundKey) {
        self.value = value
        self.key = key
    }

    /// The position a query bound denotes (Firebase's `makePost`): under the key index the
    /// bound's value is the key; otherwise the value with the bound's key, or `[MIN_NAME]`
    /// for a start and `[MAX_NAME]` for an end given without one.
    init(bound: QueryBound, isStart: Bool, index: QueryIndex) {
        if index == .key {
            if case .string(let s)? = bound.value.leafValue {
                self.init(value: .node(.empty), key: .key(ChildKey(s)))
            } else {
                // QuerySpec only builds string bounds for the key index.
                self.init(value: .node(.empty), key: isStart ? .min : .max)
            }
        } else {
            self.init(value: .node(bound.value), key: bound.key ?? (isStart ? .min : .max))
        }
    }
}

extension BoundKey {
    /// Three-way comparison of two bound keys (sentinels included).
    static func compare(_ a: BoundKey, _ b: BoundKey) -> Int {
        switch (a, b) {
        case let (.key(x), .key(y)): ChildKey.compare(x, y)
        case (.min, .min), (.max, .max): 0
        case (.min, _), (_, .max): -1
        case (_, .min), (.max, _): 1
        }
    }
}

extension QueryIndex {
    /// Three-way comparison of two positions in this index's order.
    func compare(_ a: IndexPost, _ b: IndexPost) -> Int {
        if self != .key {
            let c: Int
            switch (a.value, b.value) {
            case (.max, .max): c = 0
            case (.max, .node): c = 1
            case (.node, .max): c = -1
            case let (.node(x), .node(y)): c = Node.compareForOrdering(x, y)
            }
            if c != 0 { return c }
        }
        return BoundKey.compare(a.key, b.key)
    }

    /// Three-way comparison of a position with a child.
    func compare(_ post: IndexPost, child key: ChildKey, _ node: Node) -> Int {
        compare(post, IndexPost(child: key, node, index: self))
    }
}
