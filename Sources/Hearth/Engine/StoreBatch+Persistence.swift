import HearthModel

// The persistence-manager calls a sync client makes (Firebase's `PersistenceManager`:
// firebase-android-sdk `DefaultPersistenceManager`, firebase-ios-sdk `FPersistenceManager`),
// each one batch method, so that an ack, a listen's data and its completeness commit as one
// record. The rest of that interface maps onto the batch as it is:
//
// | Firebase                          | Hearth                                                  |
// |-----------------------------------|---------------------------------------------------------|
// | saveUserOverwrite / saveUserMerge | `saveWrite(.set(_:) / .update(_:), at:)`                 |
// | removeUserWrite                   | `ackWrite(_:)` / `revertWrite(_:)`                        |
// | removeAllUserWrites               | `removeAllWrites()`                                     |
// | applyUserWriteToServerCache       | `applyUserWriteToServerCache(_:at:)`, `applyAckedWrite(_:)` |
// | updateServerCache(query, node)    | `updateServerCache(_:for:)`                             |
// | updateServerCache(path, merge)    | `applyServerMerge(_:at:)`                               |
// | serverCache(query)                | `Store.serverCache(for:)`                               |
// | setQueryActive / Inactive         | `setQueryActive(_:)` / `setQueryInactive(_:)`           |
// | setQueryComplete                  | `setQueryComplete(_:)`                                  |
// | setTrackedQueryKeys               | `trackQuery(at:keys:)`                                  |
// | updateTrackedQueryKeys            | `updateTrackedQueryKeys(at:added:removed:)`             |
// | runInTransaction                  | `Store.commit { batch in … }`                           |

extension StoreBatch {
    // MARK: - Pending writes

    /// The pending write with `id` as this batch sees it (saved earlier in it, or in the store
    /// and not removed by it).
    ///
    /// A write kept in a damaged chunk of the checkpoint the store was opened from reads as nil
    /// here, and the damage then fails the whole commit: `Store.commit(durability:_:)` throws
    /// ``StoreError/corruptCheckpoint(file:offset:reason:)`` and commits nothing, so no caller
    /// acts on that answer. (Mutating only to note the damage.)
    public mutating func pendingWrite(_ id: Int64) -> PendingWrite? {
        do throws(StoreError) { return try storedPendingWrite(id) } catch {
            if damage == nil { damage = error }
            return nil
        }
    }

    /// ``pendingWrite(_:)``, throwing the damage of a checkpoint chunk instead.
    func storedPendingWrite(_ id: Int64) throws(StoreError) -> PendingWrite? {
        if writesRemoved.contains(id) { return nil }
        if let write = writesAdded[id] { return write }
        return try readingCheckpoint { () throws(CheckpointError) in try base.writes.write(id) }
    }

    /// Reverts every pending write (Firebase's `removeAllUserWrites`, used when the client
    /// purges its outstanding writes). Returns their ids, oldest first.
    @discardableResult
    public mutating func removeAllWrites() throws(StoreError) -> [Int64] {
        var ids = try readingCheckpoint { () throws(CheckpointError) in try base.writes.all() }.map(\.id)
        for case .writeSaved(let write) in events { ids.append(write.id) }
        ids = ids.filter { !writesRemoved.contains($0) }
        for id in ids { try revertWrite(id) }
        return ids
    }

    // MARK: - Acknowledged writes into the server cache

    /// Firebase's `applyUserWriteToServerCache`: after the server acknowledged a write of
    /// `node` at `path`, cache it as the server's data and keep it as a complete default query
    /// there — unless an active default query covers `path` (its listen delivers the server's
    /// own data, which may differ, e.g. a resolved timestamp). Pass the value with server
    /// values resolved.
    public mutating func applyUserWriteToServerCache(_ node: Node, at path: Path) throws(StoreError) {
        // One walk up from `path` answers both of Firebase's questions (is an active default
        // query covering it, is a complete one): the overwrite between them changes no query.
        let covering = defaultQueries(atOrAbove: path)
        guard !covering.contains(where: \.active) else { return }
        try applyServerOverwrite(node, at: path)
        try ensureCompleteTrackedQuery(at: path, covering: covering)
    }

    /// `applyUserWriteToServerCache` for an update: each child on its own, as Firebase does.
    public mutating func applyUserWriteToServerCache(_ children: [ChildUpdate], at path: Path) throws(StoreError) {
        for child in children { try applyUserWriteToServerCache(child.node, at: path.appending(child.path)) }
    }

    /// What a client does when the server acknowledges write `id` (Firebase's
    /// `SyncTree.ackUserWrite` with persistence): its server values resolved against the
    /// batch's server data (timestamp = the batch's clock + the server time offset), applied to
    /// the server cache by `applyUserWriteToServerCache(_:at:)`, and the write removed — one
    /// atomic commit.
    /// - Throws: ``StoreError/unknownWrite(id:)`` when no such write is pending.
    public mutating func applyAckedWrite(_ id: Int64) throws(StoreError) {
        guard let write = try storedPendingWrite(id) else { throw .unknownWrite(id: id) }
        let serverNow = Double(now) + serverTimeOffset
        let resolved = write.operation.resolvingServerValues(at: write.path, serverNow: serverNow) {
            serverValue(at: $0)
        }
        switch resolved {
        case .set(let node): try applyUserWriteToServerCache(node, at: write.path)
        case .update(let children): try applyUserWriteToServerCache(children, at: write.path)
        }
        try ackWrite(id)
    }

    /// The server time offset as this batch sees it.
    private var serverTimeOffset: Double { serverTimeOffsetSet ?? base.serverTimeOffsetMs }

    /// Whether an active default query sits at `path` or above it.
    func hasActiveDefaultQuery(covering path: Path) -> Bool {
        defaultQueries(atOrAbove: path).contains(where: \.active)
    }

    /// The default queries tracked at `path` and above it, as this batch sees them, the
    /// deepest first.
    func defaultQueries(atOrAbove path: Path) -> [TrackedQuery] {
        var found: [TrackedQuery] = []
        var keys = path.keys
        while true {
            if let q = trackedQuery(at: QueryLocation(path: Path(keys: keys), query: .default)) { found.append(q) }
            if keys.isEmpty { return found }
            keys.removeLast()
        }
    }

    /// Firebase's `ensureCompleteTrackedQuery`: unless a complete default query already covers
    /// `path` (among `covering`, ``defaultQueries(atOrAbove:)``), the default query there
    /// becomes complete — tracked now (inactive, used now) if new, its last use unchanged if
    /// already tracked.
    private mutating func ensureCompleteTrackedQuery(at path: Path, covering: [TrackedQuery]) throws(StoreError) {
        guard !covering.contains(where: \.complete) else { return }
        if var q = covering.first, q.path == path {
            q.complete = true
            save(q)
        } else {
            try trackQuery(at: QueryLocation(path: path, query: .default), complete: true)
        }
    }

    /// Records `q` as the tracked query at its location without touching its last use (what
    /// Firebase's `setComplete` does).
    private mutating func save(_ q: TrackedQuery) {
        queries[q.location] = q
        events.append(.trackedQuerySaved(q))
    }

    // MARK: - A listen's data

    /// Firebase's `updateServerCache(query, node)`: the server's complete answer to the query
    /// at `location` — an overwrite at its path for a query that loads all data, a merge of
    /// the returned children for a filtered one — then the query marked complete
    /// (``setQueryComplete(_:)``).
    public mutating func updateServerCache(_ node: Node, for location: QueryLocation) throws(StoreError) {
        if location.query.loadsAllData {
            try applyServerOverwrite(node, at: location.path)
        } else {
            try applyServerMerge(
                node.children.map { ChildUpdate(path: Path(keys: [$0.key]), node: $0.value) }, at: location.path)
        }
        try setQueryComplete(location)
    }

    // MARK: - Tracked queries

    /// Tracks the query at `location` as active (a listen started); created if new.
    public mutating func setQueryActive(_ location: QueryLocation) throws(StoreError) {
        try trackQuery(at: location, active: true)
    }

    /// Marks the tracked query at `location` inactive (its listen stopped), last used now.
    /// Untracked locations are left alone.
    public mutating func setQueryInactive(_ location: QueryLocation) throws(StoreError) {
        guard trackedQuery(at: location) != nil else { return }
        try trackQuery(at: location, active: false)
    }

    /// Firebase's `setQueryComplete`: for a query that loads all data, every tracked query at
    /// or below its path becomes complete (the data there is now all known); for a filtered
    /// query, that query. Untracked queries are left untracked (Firebase's
    /// `setQueriesComplete` / `setQueryCompleteIfExists`).
    public mutating func setQueryComplete(_ location: QueryLocation) throws(StoreError) {
        guard location.query.loadsAllData else {
            if var q = trackedQuery(at: location), !q.complete {
                q.complete = true
                save(q)
            }
            return
        }
        var locations = Set(base.trackedQueries.values.map(\.location))
        for case let (loc, _?) in queries { locations.insert(loc) }  // tracked in this batch
        let incomplete = locations.compactMap { trackedQuery(at: $0) }
            .filter { location.path.contains($0.path) && !$0.complete }
            .sorted { $0.id < $1.id }
        for var q in incomplete {
            q.complete = true
            save(q)
        }
    }

    /// Firebase's `updateTrackedQueryKeys`: children that joined (`added`) and left
    /// (`removed`) the window of the filtered query at `location`.
    /// - Throws: ``StoreError/unknownQuery(_:)`` when it is not tracked;
    ///   ``StoreError/invalidQuery(_:)`` for a query that loads all data (it has no keys).
    public mutating func updateTrackedQueryKeys(
        at location: QueryLocation, added: Set<ChildKey>, removed: Set<ChildKey>
    ) throws(StoreError) {
        guard var q = trackedQuery(at: location) else { throw .unknownQuery(location) }
        guard var keys = q.keys else { throw .invalidQuery(.unknownField("keys of a query that loads all data")) }
        keys.subtract(removed)
        keys.formUnion(added)
        q.keys = keys
        queries[location] = q
        keysSetExplicitly.insert(location)
        events.append(.trackedQueryKeysChanged(id: q.id, added: added.sorted(), removed: removed.sorted()))
    }
}

extension Store {
    /// Firebase's `serverCache(query)`: the persisted server data for the query at `location`
    /// and whether it is complete (a view may raise `value` from it), by the persistence rules
    /// (see `StoreState+ServerCache.swift`); `nil` when nothing is known. Does not load the
    /// whole cache: while it is not resident, only the checkpoint chunks holding the children
    /// the rules select are decoded.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a needed chunk is damaged.
    public func serverCache(for location: QueryLocation) throws(StoreError) -> (node: Node, complete: Bool)? {
        let persisted = core.withLock { $0.persisted }
        let loading = persisted.loading
        var failure: StoreError?
        let result = loading.state.persistedServerCache(at: location.path, query: location.query) { keys in
            do throws(StoreError) {
                return try persisted.serverValue(at: location.path, children: keys)
            } catch {
                failure = error
                return .empty
            }
        }
        if let failure { throw failure }
        return result
    }
}

extension StoreBatch {
    // MARK: - onDisconnect operations the server ran

    /// What a client does when its connection drops with onDisconnect operation `id`
    /// acknowledged (Firebase's `runOnDisconnectEvents`): the server has run it, so its effect
    /// — server values resolved with the batch's clock and the server time offset — becomes
    /// server data in the cache, and the operation is removed, in one commit. A cancel has no
    /// effect of its own.
    /// - Throws: ``StoreError/unknownOnDisconnect(id:)`` when no such operation is queued.
    public mutating func applyOnDisconnectLocally(_ id: Int64) throws(StoreError) {
        guard let op = onDisconnectOperation(id) else { throw .unknownOnDisconnect(id: id) }
        let serverNow = Double(now) + serverTimeOffset
        switch op.action {
        case .set(let node):
            try applyServerOverwrite(
                node.resolvingServerValues(over: serverValue(at: op.path), serverNow: serverNow), at: op.path)
        case .update(let children):
            let resolved = children.map { child in
                ChildUpdate(
                    path: child.path,
                    node: child.node.resolvingServerValues(
                        over: serverValue(at: op.path.appending(child.path)), serverNow: serverNow))
            }
            try applyServerMerge(resolved, at: op.path)
        case .remove:
            try applyServerOverwrite(.empty, at: op.path)
        case .cancel:
            break
        }
        try removeOnDisconnect(id)
    }
}
