import HearthModel

/// One of a view's two caches (Firebase's `CacheNode`): a node, whether it is fully
/// initialized (known complete for the view's query), and whether it was filtered (holds only
/// the query's window, so absent children are unknown rather than null).
struct CacheNode {
    /// The cached node, indexed by the view's query index.
    let indexed: IndexedNode
    /// Whether the node is the complete result for the view's query.
    let fullyInitialized: Bool
    /// Whether the node holds only part of the location (a query window).
    let filtered: Bool

    var node: Node { indexed.node }

    /// Whether the value at `path` (relative to the view) is known: the whole node for the
    /// root, otherwise whether the first child is known.
    func isCompleteForPath(_ path: Path) -> Bool {
        guard let front = path.front else { return fullyInitialized && !filtered }
        return isCompleteForChild(front)
    }

    /// Whether the child under `key` is known: the cache is complete and unfiltered, or holds
    /// that child.
    func isCompleteForChild(_ key: ChildKey) -> Bool {
        (fullyInitialized && !filtered) || indexed.hasChild(key)
    }
}
