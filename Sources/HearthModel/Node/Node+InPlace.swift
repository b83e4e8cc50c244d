// Writes into a node held in one place (the store's server cache), changing its tree in place
// wherever nothing else shares it (ChildMap+InPlace.swift says why that is safe). Each gives the
// same node as its persistent counterpart — ``Node/updating(_:with:)`` and
// ``Node/merging(_:at:)`` — and leaves every other version untouched.

extension Node {
    /// Writes `node` at `path` below this node: `self = updating(path, with: node)`, without
    /// copying the tree nodes on the path that only this node holds. O(depth · log n).
    package mutating func update(_ path: Path, with node: Node) {
        modify(path.keys[...]) { $0 = node }
    }

    /// Applies a merge at `path`: `self = merging(children, at: path)`, in place where unshared.
    package mutating func merge(_ children: [(path: Path, node: Node)], at path: Path) {
        if children.isEmpty { return }
        // The cases the persistent form writes one by one or through a copied child (a leaf at
        // `path`, `.priority` on it, a child write emptying it) keep its exact semantics.
        guard !path.keys.contains(where: { $0.string == ".priority" }), !child(at: path).isLeaf,
            let pairs = Node.plainChildWrites(children)
        else {
            self = merging(children, at: path)
            return
        }
        // Non-empty values under plain keys of a node with children (or none): the path down
        // is written in place and the map takes the run in one sorted insert — in place too
        // when the run sorts after the map's keys (``ChildMap/insert(sortedPairs:)``), else
        // copying O(k·log(n/k + 1)) of its tree nodes: fewer than k in-place descents touch
        // when k is large. Nothing here can empty the node, so no ancestor collapses.
        modify(path.keys[...]) { target in
            guard case .children(var map, let priority) = target.storage else {
                assert(target.isEmpty, "a leaf at the merge's path was excluded above")
                target = Node(children: ChildMap(sortedPairs: pairs))
                return
            }
            target.storage = .empty  // `map` is now the only reference this node had to its tree.
            map.insert(sortedPairs: pairs)
            target.storage = .children(map, priority)
        }
    }

    /// Calls `body` with the node at `keys` below this one and writes back what it leaves: the
    /// same node as ``updating(_:with:)`` of that result. Descends in place through children
    /// nodes; a leaf or empty node on the way (or `.priority`) is written the persistent way.
    private mutating func modify(_ keys: ArraySlice<ChildKey>, _ body: (inout Node) -> Void) {
        guard let front = keys.first else {
            body(&self)
            return
        }
        let rest = keys.dropFirst()
        guard front.string != ".priority", case .children(var map, let p) = storage else {
            // `.priority` may only be the last key (anything below it is meaningless, and
            // ``updating(_:with:)`` ignores it); a leaf or empty node gains its first child.
            if front.string == ".priority" && !rest.isEmpty { return }
            var child = child(front)
            child.modify(rest, body)
            self = updatingChild(front, child)
            return
        }
        storage = .empty  // `map` is now the only reference this node had to its tree.
        map.updateValue(front) { $0.modify(rest, body) }
        storage = map.isEmpty ? .empty : .children(map, p)
    }
}
