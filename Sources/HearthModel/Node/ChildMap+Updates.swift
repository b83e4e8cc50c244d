// Updates of a `ChildMap` that copy less than one path per key: a child found and replaced in
// one descent, and a sorted run of keys inserted with split and join.

extension ChildMap {
    /// A map with `key` set to `transform` of its current child (the empty node when absent),
    /// or without `key` when that is empty: ``setting(_:to:)`` of the transformed child, found
    /// and replaced in one descent instead of a lookup and then an insert.
    func updatingValue(_ key: ChildKey, _ transform: (Node) -> Node) -> ChildMap {
        var emptied = false
        let updated = ChildMap.update(root, key, transform, &emptied)
        if emptied { return removing(key) }  // rare; the walk above copied nothing
        return ChildMap(root: updated)
    }

    /// A map with each of `pairs` set: ``setting(_:to:)`` of each pair in turn, in
    /// O(k·log(n/k + 1)) tree nodes for k pairs rather than k paths of O(log n) (a run of keys
    /// that lands in one place, such as new push ids at the end, costs one path plus k nodes).
    /// `pairs` must be strictly ascending by key and hold no empty node (``Node/merging(_:at:)``
    /// makes sure).
    package func setting(sortedPairs pairs: [(key: ChildKey, value: Node)]) -> ChildMap {
        ChildMap(root: ChildMap.insertSorted(root, pairs[...]))
    }

    /// This map followed by `other`, whose keys must all sort after this map's: one tree that
    /// shares every node of both but O(log n) on the seam, in O(log n) time — where building a
    /// map from both maps' pairs costs a node per child. (A checkpoint splits a large node's
    /// children into range chunks; this puts the decoded chunks back together,
    /// CheckpointReader.assemble.)
    ///
    /// Returns `nil`, and builds nothing, when some key of `other` does not sort after every
    /// key of this map.
    package func concatenating(_ other: ChildMap) -> ChildMap? {
        guard let right = other.root else { return self }
        guard let left = root else { return other }
        var last = left
        while let r = last.right { last = r }
        var first = right
        while let l = first.left { first = l }
        guard ChildKey.compare(last.key, first.key) < 0 else { return nil }
        let (k, v, rest) = ChildMap.removeMin(right)
        return ChildMap(root: ChildMap.join(left, k, v, rest))
    }

    // MARK: - Mechanics

    /// Inserts a strictly ascending run: split it at the node's key, insert each side into its
    /// subtree, and join the two results around the node (or the pair replacing it).
    private static func insertSorted(_ t: Tree?, _ p: ArraySlice<(key: ChildKey, value: Node)>) -> Tree? {
        if p.isEmpty { return t }
        guard let t else {
            func build(_ lo: Int, _ hi: Int) -> Tree? {
                guard lo < hi else { return nil }
                let mid = (lo + hi) / 2
                return Tree(p[mid].key, p[mid].value, build(lo, mid), build(mid + 1, hi))
            }
            return build(p.startIndex, p.endIndex)
        }
        var lo = p.startIndex, hi = p.endIndex
        while lo < hi {
            let mid = (lo + hi) / 2
            if ChildKey.compare(p[mid].key, t.key) < 0 { lo = mid + 1 } else { hi = mid }
        }
        let same = lo < p.endIndex && ChildKey.compare(p[lo].key, t.key) == 0
        let (k, v) = same ? (p[lo].key, p[lo].value) : (t.key, t.value)
        let l = insertSorted(t.left, p[p.startIndex..<lo])
        let r = insertSorted(t.right, p[(same ? lo + 1 : lo)...])
        return join(l, k, v, r)
    }

    /// A tree of `l`, the pair, and `r` (every key of `l` below `k`, every key of `r` above),
    /// whatever their heights: descends the taller side's spine to where the heights meet.
    static func join(_ l: Tree?, _ k: ChildKey, _ v: Node, _ r: Tree?) -> Tree {
        let hl = height(l), hr = height(r)
        if hl > hr + 1, let l { return balance(l.key, l.value, l.left, join(l.right, k, v, r)) }
        if hr > hl + 1, let r { return balance(r.key, r.value, join(l, k, v, r.left), r.right) }
        return Tree(k, v, l, r)
    }

    /// ``insert(_:_:_:)`` of `f(current)`; sets `emptied` (and copies nothing) when that is empty.
    private static func update(_ t: Tree?, _ k: ChildKey, _ f: (Node) -> Node, _ emptied: inout Bool) -> Tree? {
        guard let t else {
            let v = f(.empty)
            if v.isEmpty {
                emptied = true
                return nil
            }
            return Tree(k, v, nil, nil)
        }
        let c = ChildKey.compare(k, t.key)
        if c < 0 {
            let l = update(t.left, k, f, &emptied)
            return emptied ? t : balance(t.key, t.value, l, t.right)
        }
        if c > 0 {
            let r = update(t.right, k, f, &emptied)
            return emptied ? t : balance(t.key, t.value, t.left, r)
        }
        let v = f(t.value)
        if v.isEmpty {
            emptied = true
            return t
        }
        return Tree(k, v, t.left, t.right)
    }
}
