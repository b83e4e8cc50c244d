import HearthModel

/// A node together with its children's order under a query index (Firebase's
/// `ChildrenNode.withIndex`): what view caches hold, so that the event generator can find a
/// child's predecessor and the limit filter its window boundary in O(log n).
///
/// Representation: when the index order is key order — the key index, or the priority index
/// while no child has a priority — no separate order is kept and the node's own key-ordered
/// ``ChildMap`` answers every query. Otherwise an ``IndexOrderedChildren`` tree mirrors the
/// children; it is built once (O(n log n)) and then updated per child (O(log n)).
///
/// Invariant: when ``order`` is non-nil it holds exactly the children of ``node``; when it is
/// nil, key order is index order for ``node``'s children. `prioritized` counts the children
/// with a priority (maintained for the priority index only).
struct IndexedNode {
    /// The node.
    let node: Node
    /// The index the children are ordered by.
    let index: QueryIndex
    private let order: IndexOrderedChildren?
    private let prioritized: Int

    private init(node: Node, index: QueryIndex, order: IndexOrderedChildren?, prioritized: Int) {
        self.node = node
        self.index = index
        self.order = order
        self.prioritized = prioritized
    }

    /// Indexes `node`: O(1) for the key index, O(n) for the priority index while no child has
    /// a priority, otherwise O(n log n).
    init(_ node: Node, index: QueryIndex) {
        self.node = node
        self.index = index
        switch index {
        case .key:
            order = nil
            prioritized = 0
        case .priority:
            var count = 0
            for (_, child) in node.children where child.priority != nil { count += 1 }
            prioritized = count
            order = count > 0 ? IndexOrderedChildren(node.children, index: index) : nil
        case .value, .child:
            prioritized = 0
            order = node.children.isEmpty ? nil : IndexOrderedChildren(node.children, index: index)
        }
    }

    /// The empty node under `index`.
    static func empty(_ index: QueryIndex) -> IndexedNode {
        IndexedNode(node: .empty, index: index, order: nil, prioritized: 0)
    }

    var isEmpty: Bool { node.isEmpty }
    var isLeaf: Bool { node.isLeaf }
    var childCount: Int { node.childCount }

    func child(_ key: ChildKey) -> Node { node.child(key) }
    func hasChild(_ key: ChildKey) -> Bool { node.hasChild(key) }

    /// The node with the child under `key` replaced by `child` (removed when empty), with
    /// Firebase's node rules (see ``Node/updatingChild(_:_:)``). O(log n).
    func updatingChild(_ key: ChildKey, _ child: Node) -> IndexedNode {
        if key.string == ".priority" {
            return IndexedNode(
                node: node.updatingChild(key, child), index: index, order: order, prioritized: prioritized)
        }
        let old = node.child(key)
        let newNode = node.updatingChild(key, child)
        // A leaf ignores empty child writes; a children node that loses its last child becomes
        // empty. In both cases the children are exactly those of `newNode`.
        let stored = newNode.child(key)
        var count = prioritized
        if index == .priority {
            if old.priority != nil { count -= 1 }
            if stored.priority != nil { count += 1 }
        }
        guard var order else {
            if index == .priority && count > 0 {
                return IndexedNode(
                    node: newNode, index: index, order: IndexOrderedChildren(newNode.children, index: index),
                    prioritized: count)
            }
            if index != .priority && index != .key && !newNode.children.isEmpty {
                return IndexedNode(
                    node: newNode, index: index, order: IndexOrderedChildren(newNode.children, index: index),
                    prioritized: count)
            }
            return IndexedNode(node: newNode, index: index, order: nil, prioritized: count)
        }
        if !old.isEmpty { order = order.removing(key, old) }
        if !stored.isEmpty { order = order.inserting(key, stored) }
        return IndexedNode(node: newNode, index: index, order: order, prioritized: count)
    }

    /// The node with `priority` (no effect on the empty node). O(1).
    func withPriority(_ priority: Priority?) -> IndexedNode {
        IndexedNode(node: node.withPriority(priority), index: index, order: order, prioritized: prioritized)
    }

    /// `node` under this index, reusing this value's order.
    ///
    /// - Precondition: `node` has exactly this node's children (say, it differs in its
    ///   priority or leaf value only).
    func replacingNode(_ node: Node) -> IndexedNode {
        IndexedNode(node: node, index: index, order: order, prioritized: prioritized)
    }

    /// The first child in index order.
    var firstChild: (key: ChildKey, value: Node)? {
        order.map { $0.first } ?? node.children.first
    }

    /// The last child in index order.
    var lastChild: (key: ChildKey, value: Node)? {
        order.map { $0.last } ?? node.children.last
    }

    /// The key of the child ordered immediately before `(key, child)` in index order (which
    /// need not be present), or nil. O(log n).
    func predecessorKey(of key: ChildKey, _ child: Node) -> ChildKey? {
        if let order { return order.predecessor(of: IndexPost(child: key, child, index: index))?.key }
        return node.children.predecessor(of: key)
    }

    /// Children in index order from the first at or after `post`, or in reverse from the last
    /// at or before it.
    func children(from post: IndexPost, reverse: Bool) -> AnyIterator<(key: ChildKey, value: Node)> {
        if let order {
            var it = order.pairs(from: post, reverse: reverse)
            return AnyIterator { it.next() }
        }
        // Key order is index order here. Every child's index value is null (key index: not
        // consulted), so a post whose value is above null lies after every child.
        let children = node.children
        var afterAll = false
        if index != .key, case .node(let v) = post.value, !v.isEmpty { afterAll = true }
        if index != .key, case .max = post.value { afterAll = true }
        if afterAll {
            if !reverse { return AnyIterator { nil } }
            var it = children.reversedPairs.makeIterator()
            return AnyIterator { it.next() }
        }
        switch (post.key, reverse) {
        case (.min, false):
            var it = children.makeIterator()
            return AnyIterator { it.next() }
        case (.min, true):
            return AnyIterator { nil }
        case (.max, false):
            return AnyIterator { nil }
        case (.max, true):
            var it = children.reversedPairs.makeIterator()
            return AnyIterator { it.next() }
        case (.key(let k), false):
            var it = children.pairs(from: k).makeIterator()
            return AnyIterator { it.next() }
        case (.key(let k), true):
            var it = children.reversedPairs(from: k).makeIterator()
            return AnyIterator { it.next() }
        }
    }

    /// Children in index order (or reverse).
    func allChildren(reverse: Bool) -> AnyIterator<(key: ChildKey, value: Node)> {
        children(from: reverse ? .max : .min, reverse: reverse)
    }

    /// Checks the order mirror against the node (tests).
    func checkInvariants() -> String? {
        guard let order else { return nil }
        if let e = order.checkInvariants() { return e }
        var n = 0
        var it = order.pairs(from: .min, reverse: false)
        while let p = it.next() {
            n += 1
            if node.child(p.key) != p.value { return "order holds a stale \(p.key)" }
        }
        return n == node.childCount ? nil : "order holds \(n) children, node \(node.childCount)"
    }
}
