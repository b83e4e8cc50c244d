// A node's children by key: the persistent AVL tree every `Node` holds its children in.
//
// Decision: Hearth's views keep a second persistent AVL tree,
// `IndexOrderedChildren` (children in a query index's order). Both stay: the orders differ in
// kind (a static key order here, a runtime query index comparing whole pairs there), this tree
// carries subtree counts for rank and positional access, and it is public API and the hottest
// structure in the engine. See Sources/Hearth/Views/IndexOrderedChildren.swift for the reasons
// in full.

/// The children of a node: a persistent (immutable, structurally shared) AVL tree ordered by
/// Firebase key order.
///
/// Every update returns a new map that shares all untouched subtrees with the old one, so an
/// insert, replace or remove on a node with n children allocates O(log n) tree nodes and the
/// old version stays valid — which is what lets the engine hand out snapshots and write
/// checkpoints while writers keep going. Lookups, rank and positional access are O(log n);
/// iteration is O(n) in either direction.
///
/// Invariants (checked by ``checkInvariants()`` in tests):
/// - in-order traversal is strictly increasing by ``ChildKey/compare(_:_:)``;
/// - every tree node's height is 1 + the larger of its children's, and the two differ by at
///   most one (AVL balance), so the height is at most 1.44·log2(n + 2);
/// - every tree node's `count` is 1 + its children's counts;
/// - no value stored is the empty node (removing is how a child becomes empty).
public struct ChildMap: Sendable {
    /// One node of the tree. Its fields other than the key change only while the node is
    /// uniquely referenced (ChildMap+InPlace.swift), when no other thread can reach it: hence
    /// `@unchecked Sendable`. Every other version sees it immutable.
    ///
    /// The `var` fields are `@exclusivity(unchecked)`: a class's stored `var` is otherwise
    /// checked for overlapping accesses at run time on every read, and every walk of a tree
    /// (encoding, lookups, inspection) reads them per node — with the checks, `swift_beginAccess`
    /// is ~10% of the inspection walk's samples. No access overlaps another to the same field of
    /// the same node: the in-place updates (ChildMap+InPlace.swift) hold a field's access across
    /// a call only to swap a value out of it or to rotate the child it holds, which touches other
    /// nodes' fields.
    @usableFromInline
    final class Tree: @unchecked Sendable {
        let key: ChildKey
        @exclusivity(unchecked) var value: Node
        @exclusivity(unchecked) var left: Tree?
        @exclusivity(unchecked) var right: Tree?
        @exclusivity(unchecked) var height: Int32
        @exclusivity(unchecked) var count: Int

        @usableFromInline
        init(_ key: ChildKey, _ value: Node, _ left: Tree?, _ right: Tree?) {
            self.key = key
            self.value = value
            self.left = left
            self.right = right
            self.height = 1 + Swift.max(left?.height ?? 0, right?.height ?? 0)
            self.count = 1 + (left?.count ?? 0) + (right?.count ?? 0)
        }
    }

    /// The tree; replaced (or, where unshared, changed in place) only by this map's mutating
    /// updates.
    @usableFromInline
    var root: Tree?

    @usableFromInline
    init(root: Tree?) { self.root = root }

    /// The empty map.
    public init() { self.root = nil }

    /// Builds a map from pairs already sorted strictly ascending by key, in O(n).
    ///
    /// - Precondition: `sorted` is strictly ascending and holds no empty nodes.
    public init(sortedPairs sorted: [(key: ChildKey, value: Node)]) {
        func build(_ lo: Int, _ hi: Int) -> Tree? {
            guard lo < hi else { return nil }
            let mid = (lo + hi) / 2
            return Tree(sorted[mid].key, sorted[mid].value, build(lo, mid), build(mid + 1, hi))
        }
        self.root = build(0, sorted.count)
    }

    /// Builds a map from pairs in any order; later duplicates win, empty values are dropped.
    public init(_ pairs: some Sequence<(key: ChildKey, value: Node)>) {
        var all = Array(pairs).enumerated().map { ($0.offset, $0.element) }
        all.sort { a, b in
            let c = ChildKey.compare(a.1.key, b.1.key)
            return c != 0 ? c < 0 : a.0 < b.0
        }
        var out: [(key: ChildKey, value: Node)] = []
        out.reserveCapacity(all.count)
        for (_, pair) in all {
            if let last = out.last, last.key == pair.key { out.removeLast() }
            out.append(pair)
        }
        out.removeAll { $0.value.isEmpty }
        self.init(sortedPairs: out)
    }

    /// The number of children.
    public var count: Int { root?.count ?? 0 }

    /// Whether there are no children.
    public var isEmpty: Bool { root == nil }

    /// The child under `key`, or `nil`.
    public subscript(key: ChildKey) -> Node? {
        var t = root
        while let n = t {
            let c = ChildKey.compare(key, n.key)
            if c == 0 { return n.value }
            t = c < 0 ? n.left : n.right
        }
        return nil
    }

    /// A map with `key` set to `value`, or removed when `value` is empty.
    public func setting(_ key: ChildKey, to value: Node) -> ChildMap {
        if value.isEmpty { return removing(key) }
        return ChildMap(root: ChildMap.insert(root, key, value))
    }

    /// Whether some child's node satisfies `predicate`, visited in no particular order. Walks
    /// the tree directly: unlike iterating, it allocates nothing (an iterator's stack is a heap
    /// array), which matters for whole-tree scans such as ``Node/nestingExceeds(_:)``.
    package func containsValue(where predicate: (Node) -> Bool) -> Bool {
        func visit(_ t: Tree?) -> Bool {
            guard let t else { return false }
            return predicate(t.value) || visit(t.left) || visit(t.right)
        }
        return visit(root)
    }

    /// Calls `body` with every pair in ascending key order.
    ///
    /// Walks the tree recursively instead of through an ``Iterator``, whose stack is a heap
    /// array: a walk over every node of a tree (encoding it, sizing it) would otherwise pay an
    /// allocation per children node, plus a retain and release per tree node pushed. The
    /// recursion is as deep as the tree is high — at most 1.44·log2(n + 2), under 90 for any
    /// map that fits in memory.
    ///
    /// The walk holds the root and passes the nodes below it unretained, as the ``Iterator``
    /// does (see there for why that is safe): a retain and a release per tree node otherwise.
    package func forEachPair(_ body: (ChildKey, Node) throws -> Void) rethrows {
        func visit(_ u: Unmanaged<Tree>) throws {
            try u._withUnsafeGuaranteedRef { t in
                if let l = t.left.map(Unmanaged.passUnretained) { try visit(l) }
                try body(t.key, t.value)
                if let r = t.right.map(Unmanaged.passUnretained) { try visit(r) }
            }
        }
        guard let root else { return }
        try withExtendedLifetime(root) { try visit(.passUnretained(root)) }
    }

    /// A map without `key` (the same map when it is absent).
    public func removing(_ key: ChildKey) -> ChildMap {
        ChildMap(root: ChildMap.remove(root, key))
    }

    /// The first pair in key order.
    public var first: (key: ChildKey, value: Node)? {
        var t = root
        while let n = t {
            if n.left == nil { return (n.key, n.value) }
            t = n.left
        }
        return nil
    }

    /// The last pair in key order.
    public var last: (key: ChildKey, value: Node)? {
        var t = root
        while let n = t {
            if n.right == nil { return (n.key, n.value) }
            t = n.right
        }
        return nil
    }

    /// The pair at position `index` in key order, in O(log n).
    public func element(at index: Int) -> (key: ChildKey, value: Node)? {
        guard index >= 0, index < count else { return nil }
        var t = root
        var i = index
        while let n = t {
            let leftCount = n.left?.count ?? 0
            if i < leftCount {
                t = n.left
            } else if i == leftCount {
                return (n.key, n.value)
            } else {
                i -= leftCount + 1
                t = n.right
            }
        }
        return nil
    }

    /// The number of keys ordered strictly before `key` (its position if present), in O(log n).
    public func rank(of key: ChildKey) -> Int {
        var t = root
        var r = 0
        while let n = t {
            let c = ChildKey.compare(key, n.key)
            if c <= 0 {
                t = n.left
                if c == 0 { return r + (n.left?.count ?? 0) }
            } else {
                r += (n.left?.count ?? 0) + 1
                t = n.right
            }
        }
        return r
    }

    /// The key ordered immediately before `key` (which need not be present), or `nil`.
    public func predecessor(of key: ChildKey) -> ChildKey? {
        var t = root
        var best: ChildKey?
        while let n = t {
            if ChildKey.compare(n.key, key) < 0 {
                best = n.key
                t = n.right
            } else {
                t = n.left
            }
        }
        return best
    }

    /// The key ordered immediately after `key` (which need not be present), or `nil`.
    public func successor(of key: ChildKey) -> ChildKey? {
        var t = root
        var best: ChildKey?
        while let n = t {
            if ChildKey.compare(n.key, key) > 0 {
                best = n.key
                t = n.left
            } else {
                t = n.right
            }
        }
        return best
    }

    /// Whether both maps are the very same tree (O(1); equal trees may still be distinct).
    public func isIdentical(to other: ChildMap) -> Bool { root === other.root }

    // MARK: - AVL mechanics

    static func height(_ t: Tree?) -> Int32 { t?.height ?? 0 }

    /// Rebuilds a node from parts whose heights differ by at most 2, restoring balance.
    static func balance(_ k: ChildKey, _ v: Node, _ l: Tree?, _ r: Tree?) -> Tree {
        let hl = height(l), hr = height(r)
        if hl > hr + 1, let l {
            if height(l.left) >= height(l.right) {
                return Tree(l.key, l.value, l.left, Tree(k, v, l.right, r))
            }
            let lr = l.right!  // height(l.right) > height(l.left) ≥ 0, so it exists.
            return Tree(lr.key, lr.value, Tree(l.key, l.value, l.left, lr.left), Tree(k, v, lr.right, r))
        }
        if hr > hl + 1, let r {
            if height(r.right) >= height(r.left) {
                return Tree(r.key, r.value, Tree(k, v, l, r.left), r.right)
            }
            let rl = r.left!  // height(r.left) > height(r.right) ≥ 0, so it exists.
            return Tree(rl.key, rl.value, Tree(k, v, l, rl.left), Tree(r.key, r.value, rl.right, r.right))
        }
        return Tree(k, v, l, r)
    }

    private static func insert(_ t: Tree?, _ k: ChildKey, _ v: Node) -> Tree {
        guard let t else { return Tree(k, v, nil, nil) }
        let c = ChildKey.compare(k, t.key)
        if c < 0 { return balance(t.key, t.value, insert(t.left, k, v), t.right) }
        if c > 0 { return balance(t.key, t.value, t.left, insert(t.right, k, v)) }
        return Tree(k, v, t.left, t.right)
    }

    static func remove(_ t: Tree?, _ k: ChildKey) -> Tree? {
        guard let t else { return nil }
        let c = ChildKey.compare(k, t.key)
        if c < 0 {
            let l = remove(t.left, k)
            return l === t.left ? t : balance(t.key, t.value, l, t.right)
        }
        if c > 0 {
            let r = remove(t.right, k)
            return r === t.right ? t : balance(t.key, t.value, t.left, r)
        }
        guard let right = t.right else { return t.left }
        guard t.left != nil else { return right }
        let (mk, mv, rest) = removeMin(right)
        return balance(mk, mv, t.left, rest)
    }

    static func removeMin(_ t: Tree) -> (ChildKey, Node, Tree?) {
        guard let l = t.left else { return (t.key, t.value, t.right) }
        let (k, v, rest) = removeMin(l)
        return (k, v, balance(t.key, t.value, rest, t.right))
    }

    /// Verifies the type's invariants; returns a description of the first violation.
    public func checkInvariants() -> String? {
        func check(_ t: Tree?) -> (h: Int32, n: Int, err: String?) {
            guard let t else { return (0, 0, nil) }
            let l = check(t.left), r = check(t.right)
            if let e = l.err ?? r.err { return (0, 0, e) }
            if abs(l.h - r.h) > 1 { return (0, 0, "unbalanced at \(t.key)") }
            if t.height != 1 + Swift.max(l.h, r.h) { return (0, 0, "bad height at \(t.key)") }
            if t.count != 1 + l.n + r.n { return (0, 0, "bad count at \(t.key)") }
            if t.value.isEmpty { return (0, 0, "empty value at \(t.key)") }
            return (t.height, t.count, nil)
        }
        if let e = check(root).err { return e }
        var previous: ChildKey?
        for (k, _) in self {
            if let p = previous, ChildKey.compare(p, k) >= 0 { return "out of order: \(p) then \(k)" }
            previous = k
        }
        return nil
    }
}

extension ChildMap: Equatable {
    /// Equal when both hold the same keys with equal nodes. O(1) for shared trees, else O(n).
    public static func == (lhs: ChildMap, rhs: ChildMap) -> Bool {
        if lhs.root === rhs.root { return true }
        guard lhs.count == rhs.count else { return false }
        var a = lhs.makeIterator(), b = rhs.makeIterator()
        while let x = a.next(), let y = b.next() {
            if x.key != y.key || x.value != y.value { return false }
        }
        return true
    }
}
