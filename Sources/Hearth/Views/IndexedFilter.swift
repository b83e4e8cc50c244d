import HearthModel

/// The filter of views that load all data: keeps every child, indexed by the query's index,
/// and reports the differences (Firebase's `IndexedFilter`).
struct IndexedFilter: NodeFilter {
    let index: QueryIndex

    func updateChild(
        _ snap: IndexedNode, _ key: ChildKey, _ newChild: Node, affectedPath: Path,
        source: any CompleteChildSource, accumulator: ChildChangeAccumulator?
    ) -> IndexedNode {
        let oldChild = snap.child(key)
        // Firebase compares only at the affected path: a change elsewhere in the child is not
        // this operation's business.
        if oldChild.child(at: affectedPath) == newChild.child(at: affectedPath) && oldChild.isEmpty == newChild.isEmpty
        {
            return snap
        }
        if let accumulator {
            if newChild.isEmpty {
                if snap.hasChild(key) { accumulator.track(.removed(key, oldChild)) }
            } else if oldChild.isEmpty {
                accumulator.track(.added(key, newChild))
            } else {
                accumulator.track(.changed(key, new: newChild, old: oldChild))
            }
        }
        if snap.isLeaf && newChild.isEmpty { return snap }
        return snap.updatingChild(key, newChild)
    }

    func updateFullNode(_ oldSnap: IndexedNode, _ newSnap: Node, accumulator: ChildChangeAccumulator?) -> IndexedNode {
        if let accumulator {
            let old = oldSnap.node
            if !old.isLeaf {
                for (key, child) in old.children where !newSnap.hasChild(key) {
                    accumulator.track(.removed(key, child))
                }
            }
            if !newSnap.isLeaf {
                for (key, child) in newSnap.children {
                    let previous = old.child(key)
                    if previous.isEmpty {
                        accumulator.track(.added(key, child))
                    } else if previous != child {
                        accumulator.track(.changed(key, new: child, old: previous))
                    }
                }
            }
        }
        if oldSnap.node.children.isIdentical(to: newSnap.children) && oldSnap.index == index {
            // Same children (a priority change at most): keep the index.
            return oldSnap.replacingNode(newSnap)
        }
        return IndexedNode(newSnap, index: index)
    }

    func updatePriority(_ oldSnap: IndexedNode, _ newPriority: Node) -> IndexedNode {
        if oldSnap.isEmpty { return .empty(index) }
        return oldSnap.withPriority(newPriority.asPriority)
    }

    var filtersNodes: Bool { false }
    var indexedFilter: IndexedFilter { self }
}
