import HearthModel

extension StoreBatch {
    /// Records how this batch's server data moves the windows of tracked filtered queries
    /// (Firebase's `SyncPoint.applyOperationToView` → `updateTrackedQueryKeys`). Called once,
    /// after the batch is built, so the keys are committed in the same record as the data.
    ///
    /// Which queries, as Firebase: the keys of a query whose view is served follow it — an
    /// active or pinned one, and one this batch tracks or changes (a listen's answer completing
    /// it) — and no other query's keys are looked at. Firebase leaves an inactive query complete
    /// with keys the write may have made stale, and serves them offline as its window; here a
    /// write that may move the window of an inactive complete query makes it incomplete
    /// instead (its keys kept, its last use unchanged), once: offline it is then served what it
    /// is known to hold, without a `value` event, until its listen answers again. A query that
    /// is neither active nor complete costs a write nothing (``StoreState/keyWatchers``), so a
    /// write costs the same beside 0 or 1,000 inactive windows at its location.
    ///
    /// A query's view holds the children of its keys; a server write at or above its path
    /// replaces them all, one at a child (`path/k`) brings that whole child, and one deeper
    /// changes a child the view holds (a partial child it does not hold stays out, as
    /// Firebase's views ignore a deep update to a child they lack). The new keys are the
    /// window over those children. Cost: O(depth) per written path to find the queries, then
    /// per served query related to a write one window over its kept and touched children (the
    /// whole location only when replaced).
    @_spi(HearthInternals) public mutating func recordTrackedKeyChanges() {
        let own = queries.values.contains { $0.map { !$0.query.loadsAllData } ?? false }
        // Without a query to look at there is nothing to record: the written paths (a merge's
        // joined once per child) are not even listed.
        guard own || base.hasKeyWatcher else { return }
        var written: [Path] = []
        var pinned: [QueryLocation: Bool] = [:]  // as this batch leaves them
        for event in events {
            switch event {
            case let .serverOverwrite(path, _, _): written.append(path)
            case let .serverMerge(path, children, _): written += children.map { path.appending($0.path) }
            case let .pinChanged(location, on): pinned[location] = on
            default: break
            }
        }
        guard !written.isEmpty else { return }
        for q in candidates(written) where !keysSetExplicitly.contains(q.location) {
            let old = q.keys ?? []
            var replaced = false
            var touched = Set<ChildKey>()
            for p in written {
                if p.contains(q.path) {
                    replaced = true
                    break
                }
                guard q.path.contains(p) else { continue }
                let key = p.keys[q.path.keys.count]
                if p.keys.count == q.path.keys.count + 1 || old.contains(key) { touched.insert(key) }
            }
            guard replaced || !touched.isEmpty else { continue }
            if queries[q.location] == nil, !q.active, !(pinned[q.location] ?? base.pins.contains(q.location)) {
                assert(q.complete, "an inactive query a write looks at is complete (StoreState.watchesKeys)")
                var incomplete = q
                incomplete.complete = false
                queries[q.location] = incomplete
                append(.trackedQuerySaved(incomplete))
                continue
            }
            let value = serverValue(at: q.path)
            let held: Node
            if replaced {
                held = value
            } else {
                held = Node(
                    children: old.union(touched).sorted().compactMap { key in
                        let child = value.child(key)
                        return child.isEmpty ? nil : (key, child)
                    })
            }
            let new = Set(q.query.window(of: held).keys)
            guard new != old else { continue }
            var updated = q
            updated.keys = new
            queries[q.location] = updated
            append(
                .trackedQueryKeysChanged(
                    id: q.id, added: new.subtracting(old).sorted(), removed: old.subtracting(new).sorted()))
        }
    }

    /// The filtered queries a write at one of `written` may concern, in id order: those this
    /// batch tracks or changes, and the store's ``StoreState/keyWatchers`` at, above or below
    /// a written path.
    func candidates(_ written: [Path]) -> [TrackedQuery] {
        var found: [Int64: TrackedQuery] = [:]
        for case let q? in queries.values where !q.query.loadsAllData { found[q.id] = q }
        guard base.hasKeyWatcher else { return found.values.sorted { $0.id < $1.id } }
        func add(_ ids: Set<Int64>) {
            for id in ids where found[id] == nil {
                // A query this batch changed is the batch's (added above), or untracked by it.
                guard let q = base.trackedQueries[id], queries[q.location] == nil else { continue }
                found[id] = q
            }
        }
        var below: Set<Path> = []
        for p in written {
            base.keyWatchers.forEachAncestorValue(of: p) { _, ids in add(ids) }
            let subtree = base.keyWatchers.subtree(p)
            if let ids = subtree.value { add(ids) }
            // The queries below a written path, once per path (a merge writes many siblings).
            guard !subtree.children.isEmpty, below.insert(p).inserted else { continue }
            for path in base.keyWatchers.entries(below: p) {
                if let ids = base.keyWatchers.value(at: path) { add(ids) }
            }
        }
        return found.values.sorted { $0.id < $1.id }
    }
}
