// A server merge applied to a node: the path down to the merge's location copied once, and a
// run of plain child writes inserted into its map in one sorted pass.

extension Node {
    /// The node with each of `children` written in order at `path` + its relative path: the
    /// same result as calling ``updating(_:with:)`` once per child, but the path down to `path`
    /// is copied once rather than once per child.
    ///
    /// Writing them one by one can differ from writing their result once only when the node at
    /// `path` is empty after some of them (a collapse drops the priority of an ancestor left
    /// without children, and a leaf ancestor ignores an empty write) or when `path` holds
    /// `.priority`; those cases are written one by one.
    public func merging(_ children: [(path: Path, node: Node)], at path: Path) -> Node {
        func oneByOne() -> Node {
            var result = self
            for (relative, node) in children { result = result.updating(path.appending(relative), with: node) }
            return result
        }
        if children.isEmpty { return self }
        if path.keys.contains(where: { $0.string == ".priority" }) { return oneByOne() }
        var merged = child(at: path)
        if !merged.isLeaf, let pairs = Node.plainChildWrites(children) {
            // Non-empty values under plain keys of a node with children (or none): the map
            // takes them in one sorted insert.
            merged = Node(children: merged.children.setting(sortedPairs: pairs), priority: merged.priority)
            return updating(path, with: merged)
        }
        for (relative, node) in children {
            merged = merged.updating(relative, with: node)
            if merged.isEmpty { return oneByOne() }
        }
        return updating(path, with: merged)
    }

    /// `children` as pairs strictly ascending by key (a later write of a key wins) when each
    /// writes a non-empty node under a single key other than `.priority`; else nil.
    static func plainChildWrites(_ children: [(path: Path, node: Node)]) -> [(key: ChildKey, value: Node)]? {
        var pairs: [(key: ChildKey, value: Node)] = []
        pairs.reserveCapacity(children.count)
        var ascending = true
        for (relative, node) in children {
            guard relative.keys.count == 1, !node.isEmpty, relative.keys[0].string != ".priority" else { return nil }
            if let last = pairs.last, ChildKey.compare(last.key, relative.keys[0]) >= 0 { ascending = false }
            pairs.append((relative.keys[0], node))
        }
        if ascending { return pairs }
        // Stable by key, then the last write of each key kept.
        let order = pairs.indices.sorted { a, b in
            let c = ChildKey.compare(pairs[a].key, pairs[b].key)
            return c != 0 ? c < 0 : a < b
        }
        var out: [(key: ChildKey, value: Node)] = []
        out.reserveCapacity(pairs.count)
        for i in order {
            if let last = out.last, last.key == pairs[i].key { out.removeLast() }
            out.append(pairs[i])
        }
        return out
    }
}
