import HearthModel

// What a listen's answers do, beyond the persisted server cache: Firebase's SyncTree gives
// tagged server data (pushes for a filtered query, `{"t": tag}` on the wire) to that query's
// view only, and a listen's completion marks its view complete. Neither is a persisted fact
// of its own — the persisted part is the server cache (and the tracked query's completeness),
// recorded as ordinary events — so the view part travels beside the events as a
// ``StoreBatch/ViewOperation`` and reaches the views in the same commit, after the batch's
// server data and before its acks (ViewHost.apply).
//
// Why the view part matters: a filtered query's window is replaced by the server's, so a child
// that left the window because it was deleted leaves the view at once, although the
// persisted merge (Firebase's `updateServerCache(query, node)` merges a filtered answer) still
// holds it; after a restart the view is rebuilt from the query's tracked keys, which followed
// the view, so it stays out.

extension StoreBatch {
    /// Server data for one listened query's view only (never persisted as such).
    enum ViewOperation: Sendable {
        /// The data at `path` (the query's location or below) for the query at `location`.
        case taggedOverwrite(QueryLocation, path: Path, node: Node)
        /// A merge at `path` for the query at `location`.
        case taggedMerge(QueryLocation, path: Path, children: [ChildUpdate])
        /// The server finished answering the listen at `location`.
        case listenComplete(QueryLocation)
        /// The batch's write `id` is hidden: kept in the views' pending writes, raising no
        /// events and showing in no local read (``StoreBatch/saveHiddenWrite(_:at:writer:)``).
        case hideWrite(Int64)
    }

    /// Tagged server data: the server's `d` push for the filtered query at `location` (data at
    /// `path`, the query's path or below it). Persisted as Firebase persists it — at the
    /// query's own path a merge of the returned children (a window says nothing about the
    /// children outside it), below it an overwrite — and given to that query's view as a
    /// replacement of what it held there. A query that loads all data is not tagged: its data
    /// is an ordinary ``applyServerOverwrite(_:at:)``.
    /// Data at a path outside the query's is true server data for no view in particular: an
    /// ordinary overwrite.
    /// - Throws: ``StoreError/invalidPath(_:)`` or ``StoreError/invalidData(_:)``.
    public mutating func applyTaggedServerOverwrite(
        _ node: Node, at path: Path, for location: QueryLocation
    ) throws(StoreError) {
        if location.query.loadsAllData || !location.path.contains(path) {
            try applyServerOverwrite(node, at: path)
            return
        }
        if path == location.path {
            try StoreBatch.validate(node, at: path)
            try applyServerMerge(
                node.children.map { ChildUpdate(path: Path(keys: [$0.key]), node: $0.value) }, at: path)
            // The window is the server's word on which children the query holds: its tracked
            // keys become exactly those (a merge alone would keep a deleted child's key).
            if let q = trackedQuery(at: location), let old = q.keys {
                let new = Set(node.children.map(\.key))
                if new != old {
                    try updateTrackedQueryKeys(at: location, added: new.subtracting(old), removed: old.subtracting(new))
                }
            }
        } else {
            try applyServerOverwrite(node, at: path)
        }
        viewOperations.append(.taggedOverwrite(location, path: path, node: node))
    }

    /// Tagged server merge: the server's `m` push for the filtered query at `location`.
    /// Persisted as a merge, and given to that query's view.
    /// - Throws: ``StoreError/invalidPath(_:)`` or ``StoreError/invalidData(_:)``.
    public mutating func applyTaggedServerMerge(
        _ children: [ChildUpdate], at path: Path, for location: QueryLocation
    ) throws(StoreError) {
        try applyServerMerge(children, at: path)
        if !location.query.loadsAllData && location.path.contains(path) {
            viewOperations.append(.taggedMerge(location, path: path, children: children))
        }
    }

    /// The server answered `ok` to the listen at `location`: the tracked query becomes
    /// complete (``setQueryComplete(_:)``) and so does its view — an absent location is then
    /// known to be empty, and a filtered view may raise `value`.
    public mutating func applyListenComplete(_ location: QueryLocation) throws(StoreError) {
        try setQueryComplete(location)
        viewOperations.append(.listenComplete(location))
    }
}
