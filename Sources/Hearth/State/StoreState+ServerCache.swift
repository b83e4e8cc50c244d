import HearthModel

// What the persisted state knows about a query's server data — the rules of Firebase's
// persistence layer (iOS `FPersistenceManager serverCacheForQuery:`,
// `FTrackedQueryManager isQueryComplete:` / `knownCompleteChildrenAtPath:`), which decide
// whether a view built offline may raise a `value` event:
//
// - a query is complete when a complete default query sits at its path or above it, or (for
//   a filtered query) its own tracked query is complete;
// - a complete filtered query's data is the cached children it tracked (its keys), nothing
//   more: other cached children at the path may belong to other windows;
// - an incomplete query is served the "known complete children" at its path — the keys of
//   every filtered query there, complete or not (their keys name whole children the server
//   sent: `TrackedQueryManager.getKnownCompleteChildren` / `filteredQueryIdsAtPath`), and the
//   children that complete default queries just below cover — and is incomplete, so it raises
//   child events but no `value`.
//
// So after a complete `limitToLast(4)` is cached and the store reopens: `limitToLast(2)` is
// served those four children (its window keeps two), incomplete; `limitToLast(6)` gets the
// same four, incomplete; `limitToLast(4)` again is complete.

extension StoreState {
    /// Whether a complete default query covers `path` (at it or above it).
    func isCoveredByCompleteDefaultQuery(_ path: Path) -> Bool {
        var keys = path.keys
        while true {
            if let q = trackedQuery(at: QueryLocation(path: Path(keys: keys), query: .default)), q.complete {
                return true
            }
            if keys.isEmpty { return false }
            keys.removeLast()
        }
    }

    /// Whether the persisted server data for `query` at `path` is complete.
    public func isServerCacheComplete(path: Path, query: QuerySpec) -> Bool {
        if isCoveredByCompleteDefaultQuery(path) { return true }
        if query.loadsAllData { return false }
        return trackedQuery(at: QueryLocation(path: path, query: query))?.complete == true
    }

    /// The keys at `path` whose data is known complete: the tracked keys of every filtered
    /// query at `path` (complete or not: a filtered query's keys follow its view, which holds
    /// whole children), and the children covered by complete default queries just below.
    func knownCompleteChildren(at path: Path) -> Set<ChildKey> {
        var keys = Set<ChildKey>()
        for q in trackedQueries.values {
            if q.path == path, !q.query.loadsAllData {
                keys.formUnion(q.keys ?? [])
            } else if q.complete, q.query.loadsAllData, let parent = q.path.parent, parent == path,
                let key = q.path.back
            {
                keys.insert(key)
            }
        }
        return keys
    }

    /// The persisted server data for `query` at `path` and whether it is complete, given
    /// `serverValue` — the cached server data at `path`. `nil` when nothing is known.
    public func persistedServerCache(
        at path: Path, query: QuerySpec, serverValue: Node
    ) -> (node: Node, complete: Bool)? {
        persistedServerCache(at: path, query: query) { _ in serverValue }
    }

    /// The persisted server data for `query` at `path` and whether it is complete, reading
    /// only what the rules select: `read(nil)` must return the cached server data at `path`,
    /// `read(keys)` a node holding (at least) those of its children. A complete filtered
    /// query and an incomplete query are served named children only, so a store whose cache
    /// is still in the checkpoint decodes just the chunks holding them.
    /// Whether ``persistedServerCache(at:query:serverValue:)`` gives a complete cache holding
    /// only the query's tracked keys (a complete filtered query): Android's `serverCache(query)`
    /// marks it `filtered`.
    func persistedServerCacheIsFiltered(at path: Path, query: QuerySpec) -> Bool {
        guard !query.loadsAllData, isServerCacheComplete(path: path, query: query),
            let own = trackedQuery(at: QueryLocation(path: path, query: query)), own.complete
        else { return false }
        return own.keys != nil
    }

    func persistedServerCache(
        at path: Path, query: QuerySpec, read: (Set<ChildKey>?) -> Node
    ) -> (node: Node, complete: Bool)? {
        let complete = isServerCacheComplete(path: path, query: query)
        let keys: Set<ChildKey>?
        if complete {
            let own = trackedQuery(at: QueryLocation(path: path, query: query))
            keys = (!query.loadsAllData && own?.complete == true) ? own?.keys : nil
        } else {
            keys = knownCompleteChildren(at: path)
        }
        guard let keys else { return (read(nil), true) }
        if keys.isEmpty { return complete ? (.empty, true) : nil }
        let node = StoreState.children(keys, of: read(keys))
        if !complete && node.isEmpty { return nil }
        return (node, complete)
    }

    /// The children `keys` of `value` (those it has), as a node.
    static func children(_ keys: Set<ChildKey>, of value: Node) -> Node {
        let children = value.children
        if children.count <= 2 * keys.count {
            // Few children besides the keys: taken in key order, no sort.
            return Node(children: ChildMap(sortedPairs: children.filter { keys.contains($0.key) }))
        }
        let pairs = keys.compactMap { key -> (key: ChildKey, value: Node)? in
            let child = value.child(key)
            return child.isEmpty ? nil : (key, child)
        }
        return Node(children: pairs)
    }

    /// `cache` with `event`'s server data written, or its prune applied (other events leave it):
    /// the server-cache part of ``apply(_:)``, for a cache held apart from the state.
    static func applyingCacheEvent(_ event: StoreEvent, to cache: Node) -> Node {
        switch event {
        case let .serverOverwrite(path, node, _):
            return cache.updating(path, with: node)
        case let .serverMerge(path, children, _):
            // As apply: the one-by-one writes' result, the path above copied once.
            return cache.merging(children.map { ($0.path, $0.node) }, at: path)
        case .cachePruned(let result):
            return pruning(cache, by: result)
        default:
            return cache
        }
    }
}
