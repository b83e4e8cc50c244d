// A node's children in a query index's order (not key order): the per-index tree a view keeps
// beside the node's own `ChildMap` when the index is not key order (Firebase's `IndexMap`).
//
// Decision: this and HearthModel's `ChildMap` are both persistent AVL trees of (ChildKey, Node)
// pairs, and both stay, each named for what it holds. They differ where a shared generic tree
// would have to bend:
// - the order: `ChildMap`'s is a static function of the key alone, so a lookup needs only the
//   key; this one's is a runtime value (a `QueryIndex`) that compares whole pairs, reading into
//   the node (its priority, value or a grandchild), so locating a pair needs its node too
//   (`removing(_:_:)` takes both);
// - the bookkeeping: `ChildMap`'s nodes carry subtree counts (rank, positional access, `count`),
//   which this tree does not need;
// - the place and the price: `ChildMap` is public API of HearthModel and the engine's hottest
//   structure; a generic tree shared with this one would live in HearthModel, be specialized for
//   this use across the module boundary only if `@inlinable` throughout, and thread the runtime
//   comparator through every `ChildMap` operation. No generic version has been built and
//   measured against the model benchmarks, so the hot one stays as it is.

import HearthModel

/// The children of a node sorted by a query index that is not key order: a persistent
/// (immutable, structurally shared) AVL tree of `(key, node)` pairs ordered by
/// ``QueryIndex/compare(_:_:)-(tuple,tuple)``.
///
/// This is what Firebase keeps per index inside a `ChildrenNode` (`IndexMap`). An insert or
/// remove costs O(log n) and shares every untouched subtree; predecessor, successor, first,
/// last and positioned iteration are O(log n) (+ O(1) per further element).
///
/// Invariants: the in-order traversal is strictly increasing in the index's order (keys are
/// unique, and every index breaks ties by key); heights and sizes are AVL-consistent; no
/// stored node is empty.
struct IndexOrderedChildren {
    final class Tree: Sendable {
        let key: ChildKey
        let node: Node
        let left: Tree?
        let right: Tree?
        let height: Int32

        init(_ key: ChildKey, _ node: Node, _ left: Tree?, _ right: Tree?) {
            self.key = key
            self.node = node
            self.left = left
            self.right = right
            self.height = 1 + Swift.max(left?.height ?? 0, right?.height ?? 0)
        }
    }

    /// The order.
    let index: QueryIndex
    private let root: Tree?

    private init(index: QueryIndex, root: Tree?) {
        self.index = index
        self.root = root
    }

    /// The children of `node` in `index` order. O(n log n).
    init(_ children: ChildMap, index: QueryIndex) {
        var pairs: [(key: ChildKey, value: Node)]
        if case .key = index {
            pairs = Array(children)
        } else {
            // Each child's indexed value looked up once, not at every comparison (a child
            // index such as `ts` is a lookup in the child's own map). The same order as
            // `index.compare`: the indexed values, then the keys.
            var decorated = children.map { (pair: $0, value: index.indexedValue(of: $0.value)) }
            decorated.sort { a, b in
                let c = Node.compareForOrdering(a.value, b.value)
                return c != 0 ? c < 0 : ChildKey.compare(a.pair.key, b.pair.key) < 0
            }
            pairs = decorated.map(\.pair)
        }
        func build(_ lo: Int, _ hi: Int) -> Tree? {
            guard lo < hi else { return nil }
            let mid = (lo + hi) / 2
            return Tree(pairs[mid].key, pairs[mid].value, build(lo, mid), build(mid + 1, hi))
        }
        self.init(index: index, root: build(0, pairs.count))
    }

    var isEmpty: Bool { root == nil }

    /// The tree with `(key, node)` added. The pair must not be present.
    func inserting(_ key: ChildKey, _ node: Node) -> IndexOrderedChildren {
        IndexOrderedChildren(index: index, root: insert(root, key, node))
    }

    /// The tree without `(key, node)` (`node` is the stored node, which locates the pair).
    func removing(_ key: ChildKey, _ node: Node) -> IndexOrderedChildren {
        IndexOrderedChildren(index: index, root: remove(root, key, node))
    }

    /// The first pair in index order.
    var first: (key: ChildKey, value: Node)? {
        var t = root
        while let n = t {
            if n.left == nil { return (n.key, n.node) }
            t = n.left
        }
        return nil
    }

    /// The last pair in index order.
    var last: (key: ChildKey, value: Node)? {
        var t = root
        while let n = t {
            if n.right == nil { return (n.key, n.node) }
            t = n.right
        }
        return nil
    }

    /// The pair ordered immediately before `post` (which need not be present).
    func predecessor(of post: IndexPost) -> (key: ChildKey, value: Node)? {
        var t = root
        var best: Tree?
        while let n = t {
            if index.compare(post, child: n.key, n.node) > 0 {
                best = n
                t = n.right
            } else {
                t = n.left
            }
        }
        return best.map { ($0.key, $0.node) }
    }

    /// Pairs in index order starting at the first one at or after `post`, or — when
    /// `reverse` — in reverse order starting at the last one at or before `post`.
    func pairs(from post: IndexPost, reverse: Bool) -> Iterator {
        Iterator(root: root, index: index, from: post, reverse: reverse)
    }

    /// An in-order walk (either direction) from a position.
    struct Iterator: IteratorProtocol {
        private var stack: [Tree] = []
        private let reverse: Bool

        init(root: Tree?, index: QueryIndex, from post: IndexPost, reverse: Bool) {
            self.reverse = reverse
            var t = root
            while let n = t {
                let c = index.compare(post, child: n.key, n.node)  // post vs node
                if reverse ? c >= 0 : c <= 0 {
                    stack.append(n)
                    t = reverse ? n.right : n.left
                } else {
                    t = reverse ? n.left : n.right
                }
            }
        }

        mutating func next() -> (key: ChildKey, value: Node)? {
            guard let n = stack.popLast() else { return nil }
            var t = reverse ? n.left : n.right
            while let m = t {
                stack.append(m)
                t = reverse ? m.right : m.left
            }
            return (n.key, n.node)
        }
    }

    // MARK: - AVL mechanics

    private func cmp(_ key: ChildKey, _ node: Node, _ t: Tree) -> Int {
        index.compare((key, node), (t.key, t.node))
    }

    private static func height(_ t: Tree?) -> Int32 { t?.height ?? 0 }

    private static func balance(_ k: ChildKey, _ v: Node, _ l: Tree?, _ r: Tree?) -> Tree {
        let hl = height(l), hr = height(r)
        if hl > hr + 1, let l {
            if height(l.left) >= height(l.right) {
                return Tree(l.key, l.node, l.left, Tree(k, v, l.right, r))
            }
            if let lr = l.right {
                return Tree(lr.key, lr.node, Tree(l.key, l.node, l.left, lr.left), Tree(k, v, lr.right, r))
            }
        }
        if hr > hl + 1, let r {
            if height(r.right) >= height(r.left) {
                return Tree(r.key, r.node, Tree(k, v, l, r.left), r.right)
            }
            if let rl = r.left {
                return Tree(rl.key, rl.node, Tree(k, v, l, rl.left), Tree(r.key, r.node, rl.right, r.right))
            }
        }
        return Tree(k, v, l, r)
    }

    private func insert(_ t: Tree?, _ k: ChildKey, _ v: Node) -> Tree {
        guard let t else { return Tree(k, v, nil, nil) }
        let c = cmp(k, v, t)
        if c < 0 { return Self.balance(t.key, t.node, insert(t.left, k, v), t.right) }
        if c > 0 { return Self.balance(t.key, t.node, t.left, insert(t.right, k, v)) }
        return Tree(k, v, t.left, t.right)
    }

    private func remove(_ t: Tree?, _ k: ChildKey, _ v: Node) -> Tree? {
        guard let t else { return nil }
        let c = cmp(k, v, t)
        if c < 0 {
            let l = remove(t.left, k, v)
            return l === t.left ? t : Self.balance(t.key, t.node, l, t.right)
        }
        if c > 0 {
            let r = remove(t.right, k, v)
            return r === t.right ? t : Self.balance(t.key, t.node, t.left, r)
        }
        guard let right = t.right else { return t.left }
        guard t.left != nil else { return right }
        let (mk, mv, rest) = Self.removeMin(right)
        return Self.balance(mk, mv, t.left, rest)
    }

    private static func removeMin(_ t: Tree) -> (ChildKey, Node, Tree?) {
        guard let l = t.left else { return (t.key, t.node, t.right) }
        let (k, v, rest) = removeMin(l)
        return (k, v, balance(t.key, t.node, rest, t.right))
    }

    /// Checks ordering and balance; returns the first violation (tests).
    func checkInvariants() -> String? {
        func check(_ t: Tree?) -> (Int32, String?) {
            guard let t else { return (0, nil) }
            let (hl, el) = check(t.left), (hr, er) = check(t.right)
            if let e = el ?? er { return (0, e) }
            if abs(hl - hr) > 1 { return (0, "unbalanced at \(t.key)") }
            if t.height != 1 + Swift.max(hl, hr) { return (0, "bad height at \(t.key)") }
            return (t.height, nil)
        }
        if let e = check(root).1 { return e }
        var it = pairs(from: .min, reverse: false)
        var previous: (key: ChildKey, value: Node)?
        while let p = it.next() {
            if let q = previous, index.compare(q, p) >= 0 { return "out of order: \(q.key) then \(p.key)" }
            previous = p
        }
        return nil
    }
}
