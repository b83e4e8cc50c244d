// Updates of a `ChildMap` in place where no other version shares the tree nodes they touch.
//
// The persistent update (ChildMap+Updates.swift) copies every tree node on the path to the key,
// and each copy retains its key, its value and both subtrees — touching the memory of every
// sibling on the way down. In a large cache those siblings are cold: the retains, not the
// comparisons, cost 41% of applying a server event that way.
//
// Here a tree node is changed in place when `isKnownUniquelyReferenced` says this map holds the
// only reference to it, and copied (once) otherwise. The invariant that makes it safe: a tree
// node reachable from any other map, node or snapshot has a reference count above one along
// every path from that holder, so the first shared node on the way down — and everything below
// it on the path — is copied before anything is written. An old version is therefore never
// changed, which is all the persistent tree promises (`ChildMap`'s documentation). A uniquely
// referenced object is reachable from this thread alone, so writing it is not a data race
// (why `Tree` may be `@unchecked Sendable`).
//
// Only the rebalancing after an insert writes more than the path: an AVL insert rotates nodes
// on the insert path only, which the descent has already made unique.

extension ChildMap {
    /// Sets `key` to `transform` of its current child (the empty node when absent), or removes
    /// `key` when that is empty: the same map as ``updatingValue(_:_:)``, built in place where
    /// this map is the only holder of its tree nodes.
    ///
    /// `transform` gets the child as an `inout` value that no tree node refers to any more, so
    /// a child this map alone holds stays uniquely referenced and can be updated in place in
    /// turn (``Node/update(_:with:)``).
    mutating func updateValue(_ key: ChildKey, _ transform: (inout Node) -> Void) {
        // Two steps, so that the recursive descent takes no closure: specialized for a
        // transform that captured values (the node being written, the rest of its path), the
        // descent would copy and destroy those captures at every tree level — ~30 copies of a
        // `Node` a server write, 18% of applying it (callgrind).
        // 1. The tree node holding `key`, made unique on the way down; inserted holding the
        //    empty node when absent (briefly breaking "no empty values", restored in 2.).
        var found: Unmanaged<Tree>?
        _ = ChildMap.uniqueNode(&root, key, &found)
        guard let t = found?.takeUnretainedValue() else { preconditionFailure("uniqueNode finds or inserts the key") }
        // 2. The child taken out of its tree node, so that `transform` sees its only reference.
        var v = Node.empty
        swap(&v, &t.value)
        transform(&v)
        let emptied = v.isEmpty
        swap(&v, &t.value)
        // Rare: the child became (or stayed) empty. Its tree node holds the empty node until
        // removed here.
        if emptied { root = ChildMap.remove(root, key) }
    }

    /// Sets each of `pairs`: the same map as ``setting(sortedPairs:)``, built in place where
    /// this map alone holds the tree nodes it touches. `pairs` must be strictly ascending by
    /// key and hold no empty node (``Node/merge(_:at:)`` makes sure).
    ///
    /// A run whose keys all sort after this map's — new push ids, the usual server merge — is
    /// built as one balanced subtree and joined onto the right spine (``joinInPlace(_:_:_:_:)``):
    /// the spine's nodes made unique on the way down, rotated in place on the way up. The
    /// persistent split-and-join allocates a copy of every node on that spine, each copy
    /// retaining both subtrees — the left ones cold. Any other run takes that persistent path.
    mutating func insert(sortedPairs pairs: [(key: ChildKey, value: Node)]) {
        guard let first = pairs.first else { return }
        if let top = root {
            var last = top
            while let next = last.right { last = next }
            guard ChildKey.compare(last.key, first.key) < 0 else {
                self = setting(sortedPairs: pairs)
                return
            }
        }
        // The rest of the run as one balanced subtree; the first pair joins it to the map.
        var i = pairs.startIndex + 1
        let run = ChildMap(count: pairs.count - 1) { () -> (key: ChildKey, value: Node) in
            defer { i += 1 }
            return pairs[i]
        }
        ChildMap.joinInPlace(&root, first.key, first.value, run.root)
    }

    // MARK: - Mechanics

    /// `t` itself when this is its only reference, else a copy of it (sharing its subtrees).
    @inline(__always)
    private static func makeUnique(_ t: inout Tree) {
        if !isKnownUniquelyReferenced(&t) { t = Tree(t.key, t.value, t.left, t.right) }
    }

    /// What an insert below a tree node did to its subtree.
    private struct Growth {
        /// A node was inserted: the counts on the path grow by one.
        var inserted = false
        /// The subtree's height grew (by one): the heights above may change.
        var taller = false
    }

    /// Descends to `k` making each node on the way unique, and sets `found` to the tree node
    /// holding `k` — a new one holding the empty node when `k` was absent, inserted and
    /// rebalanced. Every node from the root to `found` is then referenced by this map alone.
    ///
    /// `found` is unretained: a rotation on the way back up makes the nodes it moves unique
    /// first (``rotate(_:liftingLeft:)``), and a second reference to the new node would make
    /// it copy that node, leaving `found` pointing at a node the tree no longer holds.
    /// Rotations relink nodes without replacing unique ones, so the node `found` names stays
    /// in the tree, which keeps it alive.
    ///
    /// Cost: the path's nodes only. A sibling's height is read only where the subtree beside it
    /// grew taller than the parent allowed for — on average O(1) levels per insert, since an
    /// AVL insert's height change stops within a few levels — so the cold siblings the
    /// persistent update retains at every level are mostly never touched.
    private static func uniqueNode(_ slot: inout Tree?, _ k: ChildKey, _ found: inout Unmanaged<Tree>?) -> Growth {
        guard var t = slot else {
            let new = Tree(k, .empty, nil, nil)
            found = Unmanaged.passUnretained(new)
            slot = new
            return Growth(inserted: true, taller: true)
        }
        slot = nil  // `t` is now the only reference this map has.
        makeUnique(&t)
        let c = ChildKey.compare(k, t.key)
        var growth = Growth()
        if c == 0 {
            found = Unmanaged.passUnretained(t)
        } else {
            var side: Tree?
            if c < 0 { swap(&side, &t.left) } else { swap(&side, &t.right) }
            growth = uniqueNode(&side, k, &found)
            let grown = growth.taller ? side!.height : 0  // on the path: warm
            if c < 0 { swap(&side, &t.left) } else { swap(&side, &t.right) }
            if growth.inserted {
                t.count += 1
                if growth.taller {
                    // The subtree grew to `grown`. Below the node's height minus one it only
                    // evened the balance; at it, the sibling decides.
                    if grown < t.height {
                        growth.taller = false
                    } else if grown - height(c < 0 ? t.right : t.left) <= 1 {
                        t.height = grown + 1
                    } else {
                        // An insert's rotation restores the height the node had before it.
                        rebalance(&t)
                        growth.taller = false
                    }
                }
            }
        }
        assert(
            t.count == 1 + (t.left?.count ?? 0) + (t.right?.count ?? 0)
                && t.height == 1 + Swift.max(height(t.left), height(t.right)),
            "count and height kept")
        slot = t
        return growth
    }

    /// ``join(_:_:_:_:)`` of the tree in `slot`, the pair and `r` (every key of `r` above the
    /// pair's, the pair's above every key in `slot`), in place: while the tree in `slot` is
    /// more than one taller than `r`, its right spine is descended, each node made unique;
    /// where the heights meet, the persistent join builds the one new node (or, when `r` is
    /// the taller, descends `r`'s left spine). On the way back up each spine node is
    /// rebalanced as after an insert: the subtree joined below it is at most two taller than
    /// its left (the join's bound, the one ``balance(_:_:_:_:)`` relies on).
    private static func joinInPlace(_ slot: inout Tree?, _ k: ChildKey, _ v: Node, _ r: Tree?) {
        guard height(slot) > height(r) + 1, var t = slot else {
            slot = join(slot, k, v, r)
            return
        }
        slot = nil  // `t` is now the only reference this map has.
        makeUnique(&t)
        var right: Tree?
        swap(&right, &t.right)
        joinInPlace(&right, k, v, r)
        swap(&right, &t.right)
        rebalance(&t)
        slot = t
    }

    /// Restores `t`'s height, count and AVL balance after an insert below it, rotating in
    /// place. `t` is unique and its subtrees' heights differ by at most 2.
    private static func rebalance(_ t: inout Tree) {
        let hl = height(t.left), hr = height(t.right)
        if hl > hr + 1 {
            // hl > hr + 1 ≥ 1, so the left child exists; a taller inner grandchild goes first.
            if height(t.left!.left) < height(t.left!.right) { rotate(&t.left!, liftingLeft: false) }
            rotate(&t, liftingLeft: true)
        } else if hr > hl + 1 {
            if height(t.right!.right) < height(t.right!.left) { rotate(&t.right!, liftingLeft: true) }
            rotate(&t, liftingLeft: false)
        } else {
            resize(t)
        }
    }

    /// Lifts `t`'s left child (or right) into its place; `t` becomes that child's right child
    /// (or left) and takes over its subtree there. Each node written is made unique first: the
    /// rotated nodes lie on the insert path, unique already, but nothing is assumed. (Ascending
    /// keys, such as push ids, rotate near the bottom of almost every insert: the direction is
    /// a constant at each call, for the inlined accessors to fold away, where a key-path
    /// parameter would be applied through the runtime.)
    @inline(__always)
    private static func rotate(_ t: inout Tree, liftingLeft left: Bool) {
        makeUnique(&t)
        var c = side(t, left)!  // the taller side exists (see rebalance)
        setSide(t, left, nil)
        makeUnique(&c)
        setSide(t, left, side(c, !left))
        setSide(c, !left, nil)
        resize(t)
        setSide(c, !left, t)
        resize(c)
        t = c
    }

    @inline(__always)
    private static func side(_ t: Tree, _ left: Bool) -> Tree? { left ? t.left : t.right }

    @inline(__always)
    private static func setSide(_ t: Tree, _ left: Bool, _ child: Tree?) {
        if left { t.left = child } else { t.right = child }
    }

    /// Recomputes a unique node's height and count from its subtrees.
    @inline(__always)
    private static func resize(_ t: Tree) {
        t.height = 1 + Swift.max(height(t.left), height(t.right))
        t.count = 1 + (t.left?.count ?? 0) + (t.right?.count ?? 0)
    }
}
