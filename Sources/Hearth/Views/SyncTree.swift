import HearthModel

/// Where a new view gets its initial server cache when no in-memory complete cache covers it.
/// (The persistent store implements this: the server cache it holds, and whether that is
/// complete for the query, per Firebase's persistence rules.)
package protocol ServerCacheSource {
    /// The server data known for `query` at `path`, and whether it is complete for that query.
    /// Return `nil` for "nothing known" (empty, incomplete).
    func serverCache(at path: Path, query: QuerySpec) -> (node: Node, complete: Bool)?
    /// Whether the complete cache it gives for `query` at `path` holds only the query's own
    /// children (Firebase's persistence: a complete filtered query's tracked keys, which
    /// Android's `serverCache(query)` marks `filtered`): the children outside it are not known
    /// to be absent, so the view must not complete them from data meant for other listeners.
    func serverCacheIsFiltered(at path: Path, query: QuerySpec) -> Bool
}

extension ServerCacheSource {
    /// A source whose caches are whole locations.
    package func serverCacheIsFiltered(at path: Path, query: QuerySpec) -> Bool { false }
}

/// The view engine: every listened query's view, the pending user writes, and the events each
/// change raises — Firebase's `SyncTree`, with its semantics (see the Firebase JavaScript SDK's
/// `syncPointSpec.json`, which the conformance tests run).
///
/// - Server data (``applyServerOverwrite(_:at:)``, ``applyServerMerge(_:at:)``) goes to every
///   view at, above and below its path; tagged server data
///   (``applyTaggedServerOverwrite(_:at:tag:)``) only to the tagged query's view.
/// - User writes (``applyUserOverwrite(_:at:writeID:visible:)``,
///   ``applyUserMerge(_:at:writeID:)``) are layered over the server data in the event caches;
///   ``ackUserWrite(_:revert:)`` removes one and re-applies the server data under it.
/// - Every call returns the events it raised, in Firebase's order: views at deeper locations
///   before views above them (siblings in UTF-16 key-string order), views at one location in
///   creation order; per view removed, added, moved, changed, value.
///
/// Tags: every query that does not load all data gets a tag (1, 2, …) when its view is created;
/// the tag is released when the view goes away.
///
/// Not thread-safe: the owner serializes calls (the store calls it under its lock).
package final class SyncTree {
    private var syncPoints = PathTrie<SyncPoint>()
    private let writeTree = WriteTree()
    private let source: (any ServerCacheSource)?
    private var nextTag = 1
    private var tagToQuery: [Int: QueryKey] = [:]
    private var queryToTag: [QueryKey: Int] = [:]

    /// A query at a location: the key tags are kept under.
    private struct QueryKey: Hashable {
        let path: Path
        let identifier: String
    }

    /// Creates an empty engine; `source` supplies initial server caches for new views (the
    /// persistent store), when given.
    package init(source: (any ServerCacheSource)? = nil) {
        self.source = source
    }

    // MARK: - Listeners

    /// Registers a listener for `query` at `path` and returns its initial events (`child_added`
    /// for every child known, then `value` when the view is complete).
    ///
    /// The new view's server cache is, in this order: a complete server cache from a view at
    /// or above `path`; the ``ServerCacheSource``'s complete cache; otherwise an incomplete
    /// cache made of the complete caches of views below `path` and whatever the source knows.
    /// The source is `cache` when given (the persistent store hands its persisted data with each
    /// call), else the one the engine was created with.
    @discardableResult
    package func addListener(
        at path: Path, query: QuerySpec, registration: RegistrationID, kinds: ViewEventKinds = .all,
        cache: (any ServerCacheSource)? = nil
    ) -> [ViewEvent] {
        let source = cache ?? self.source
        var serverCache: Node?
        syncPoints.forEachAncestorValue(of: path) { at, syncPoint in
            guard serverCache == nil, let relative = at.relativePath(to: path) else { return }
            serverCache = syncPoint.completeServerCache(at: relative)
        }
        let syncPoint: SyncPoint
        if let existing = syncPoints.value(at: path) {
            syncPoint = existing
            if serverCache == nil { serverCache = existing.completeServerCache(at: .root) }
        } else {
            syncPoint = SyncPoint(path: path)
            // In place: a copying `setting` would copy every level's children, O(siblings) —
            // O(n) per listener beside n others (a tracked query per acknowledged write).
            syncPoints.set(path, syncPoint)
        }
        let serverCacheComplete: Bool
        var serverCacheFiltered = false
        let initialServerCache: Node
        if let serverCache {
            initialServerCache = serverCache
            serverCacheComplete = true
        } else {
            // The source is only asked for a view about to be created.
            let stored =
                syncPoint.view(identifier: query.identifier) == nil ? source?.serverCache(at: path, query: query) : nil
            if let stored, stored.complete {
                initialServerCache = stored.node
                serverCacheComplete = true
                serverCacheFiltered = source?.serverCacheIsFiltered(at: path, query: query) ?? false
            } else {
                var node = Node.empty
                syncPoints.subtree(path).forEachChildValue { key, child in
                    if let complete = child.completeServerCache(at: .root) { node = node.updatingChild(key, complete) }
                }
                if let stored, !stored.node.isLeaf {
                    for (key, child) in stored.node.children where !node.hasChild(key) {
                        node = node.updatingChild(key, child)
                    }
                }
                initialServerCache = node
                serverCacheComplete = false
            }
        }
        let key = QueryKey(path: path, identifier: query.identifier)
        if syncPoint.viewForQuery(query) == nil && !query.loadsAllData {
            assert(queryToTag[key] == nil, "a view that does not exist has no tag")
            let tag = nextTag
            nextTag += 1
            queryToTag[key] = tag
            tagToQuery[tag] = key
        }
        return syncPoint.addRegistration(
            ViewRegistration(id: registration, kinds: kinds), query: query, writes: writes(at: path),
            serverCache: initialServerCache, serverCacheComplete: serverCacheComplete,
            serverCacheFiltered: serverCacheFiltered)
    }

    /// Removes a registration (every registration of the query when `registration` is nil).
    ///
    /// Removing with the default query removes the registration from every view at `path`, as
    /// Firebase's `off()` on a location does. A view without registrations goes away, and with
    /// it its tag. Returns no events (Firebase raises none on removal; cancel events belong to
    /// listen failures).
    @discardableResult
    package func removeListener(at path: Path, query: QuerySpec, registration: RegistrationID?) -> [ViewEvent] {
        guard let syncPoint = syncPoints.value(at: path) else { return [] }
        guard query.isDefault || syncPoint.viewForQuery(query) != nil else { return [] }
        let removed = syncPoint.removeRegistration(registration, query: query)
        if syncPoint.isEmpty { syncPoints.set(path, nil) }
        for query in removed where !query.loadsAllData {
            let key = QueryKey(path: path, identifier: query.identifier)
            if let tag = queryToTag.removeValue(forKey: key) { tagToQuery[tag] = nil }
        }
        return []
    }

    // MARK: - Server data

    /// The server's data at `path` changed to `node`.
    package func applyServerOverwrite(_ node: Node, at path: Path) -> [ViewEvent] {
        guard hasSyncPoint(reachedFrom: path) else { return [] }
        return applyToSyncPoints(.overwrite(.server, path: path, node: node))
    }

    /// The server's data changed at each child path below `path`.
    package func applyServerMerge(_ children: [ChildUpdate], at path: Path) -> [ViewEvent] {
        // The merge's tree is built only for views it can reach: a cache fill with no view
        // at or around its paths spent a tenth of each commit building it.
        guard hasSyncPoint(reachedFrom: path) else { return [] }
        return applyToSyncPoints(.merge(.server, path: path, children: Self.mergeTree(children)))
    }

    /// Whether a sync point sits at `path`, above it or below it: the only ones an operation at
    /// `path` reaches (``apply(_:tree:serverCache:writes:)`` walks down `path` and then the
    /// subtree under it, never a sibling), so without one it raises nothing.
    private func hasSyncPoint(reachedFrom path: Path) -> Bool {
        syncPoints.nearestAtOrAbove(path) != nil || !syncPoints.subtree(path).isEmpty
    }

    /// The tag of the filtered query's view at `path`, if it has one.
    package func tag(for path: Path, query: QuerySpec) -> Int? {
        queryToTag[QueryKey(path: path, identifier: query.identifier)]
    }

    /// Server data for the query tagged `tag` only: `node` is the data at `path` (the query's
    /// location or below it). Unknown tags are ignored.
    package func applyTaggedServerOverwrite(_ node: Node, at path: Path, tag: Int) -> [ViewEvent] {
        guard let key = tagToQuery[tag], let relative = key.path.relativePath(to: path) else { return [] }
        return applyTagged(.overwrite(.taggedServer(key.identifier), path: relative, node: node), at: key.path)
    }

    /// A server merge for the query tagged `tag` only. Unknown tags are ignored.
    package func applyTaggedServerMerge(_ children: [ChildUpdate], at path: Path, tag: Int) -> [ViewEvent] {
        guard let key = tagToQuery[tag], let relative = key.path.relativePath(to: path) else { return [] }
        return applyTagged(
            .merge(.taggedServer(key.identifier), path: relative, children: Self.mergeTree(children)), at: key.path)
    }

    /// The server said the listen for `query` at `path` is complete (even if it sent no data:
    /// an absent location is complete and empty). Tagged queries complete only their view.
    package func applyListenComplete(at path: Path, query: QuerySpec) -> [ViewEvent] {
        if !query.loadsAllData, let tag = queryToTag[QueryKey(path: path, identifier: query.identifier)],
            let key = tagToQuery[tag]
        {
            return applyTagged(.listenComplete(.taggedServer(key.identifier), path: .root), at: key.path)
        }
        return applyToSyncPoints(.listenComplete(.server, path: path))
    }

    // MARK: - User writes

    /// A user set at `path`. Ids must increase across writes. A hidden write (`visible: false`)
    /// raises no events and does not show in event caches.
    package func applyUserOverwrite(_ node: Node, at path: Path, writeID: Int64, visible: Bool = true) -> [ViewEvent] {
        writeTree.addOverwrite(path, node, writeID: writeID, visible: visible)
        guard visible else { return [] }
        return applyToSyncPoints(.overwrite(.user, path: path, node: node))
    }

    /// A user update at `path`. Ids must increase across writes.
    package func applyUserMerge(_ children: [ChildUpdate], at path: Path, writeID: Int64) -> [ViewEvent] {
        writeTree.addMerge(path, children, writeID: writeID)
        return applyToSyncPoints(.merge(.user, path: path, children: Self.mergeTree(children)))
    }

    /// Removes a pending write — acknowledged (`revert: false`) or rejected (`revert: true`) —
    /// and re-applies the server data it covered, raising the compensating events. Unknown ids
    /// raise nothing.
    package func ackUserWrite(_ writeID: Int64, revert: Bool) -> [ViewEvent] {
        guard let write = writeTree.write(writeID), writeTree.removeWrite(writeID) else { return [] }
        var affected = PathTrie<Bool>()
        switch write.operation {
        case .set:
            affected = affected.setting(.root, true)
        case .update(let children):
            for child in children { affected = affected.setting(child.path, true) }
        }
        return applyToSyncPoints(.ackUserWrite(path: write.path, affected: affected, revert: revert))
    }

    // MARK: - Inspection

    /// The overlay of the visible pending writes (a value: a snapshot to read outside the
    /// store's lock with ``CompoundWrite/completeEventCache(at:completeServerCache:)``).
    var visibleWrites: CompoundWrite { writeTree.visibleWrites }

    /// The local value at `path` over `serverValue` (the server data there): what a listener
    /// at `path` would see.
    func localValue(at path: Path, serverValue: Node) -> Node {
        writeTree.calcCompleteEventCache(path, completeServerCache: serverValue) ?? serverValue
    }

    /// The tag of the view for a query that does not load all data, while the view exists.
    package func tag(at path: Path, query: QuerySpec) -> Int? {
        queryToTag[QueryKey(path: path, identifier: query.identifier)]
    }

    /// The current event cache of the view for exactly `query` at `path` — its children in
    /// query order and its node — and whether it is complete; nil when there is no such view.
    /// The server cache of the view for `query` at `path`, if there is one: what the server's
    /// data is as far as this view knows (Firebase hashes it for the view's listen), and
    /// whether it is complete.
    package func serverCache(at path: Path, query: QuerySpec) -> (node: Node, complete: Bool)? {
        guard let view = syncPoints.value(at: path)?.view(identifier: query.identifier) else { return nil }
        let cache = view.viewCache.serverCache
        return (cache.node, cache.fullyInitialized)
    }

    package func eventCache(at path: Path, query: QuerySpec) -> (window: QueryWindow, complete: Bool)? {
        guard let view = syncPoints.value(at: path)?.view(identifier: query.identifier) else { return nil }
        let cache = view.viewCache.eventCache
        var entries: [(key: ChildKey, value: Node)] = []
        if !cache.node.isLeaf {
            entries.reserveCapacity(cache.node.childCount)
            let it = cache.indexed.allChildren(reverse: false)
            while let c = it.next() { entries.append(c) }
        }
        return (QueryWindow(orderedEntries: entries, node: cache.node), cache.fullyInitialized)
    }

    /// Gives the view for `query` at `path`, if there is one and its server cache is filtered,
    /// the whole server node there, as `node` reads it (``View/completeFilteredServerCache(with:)``);
    /// returns whether it did.
    package func completeFilteredServerCache<E: Error>(
        at path: Path, query: QuerySpec, with node: () throws(E) -> Node
    ) throws(E) -> Bool {
        guard let view = syncPoints.value(at: path)?.view(identifier: query.identifier),
            view.viewCache.serverCache.filtered
        else { return false }
        view.completeFilteredServerCache(with: try node())
        return true
    }

    /// The number of views.
    package var viewCount: Int {
        syncPoints.fold { _, syncPoint, children in
            (syncPoint?.views.count ?? 0) + children.reduce(0) { $0 + $1.1 }
        }
    }

    /// Restarts tag numbering at 1 (tests; call before creating views).
    package func resetTags() {
        nextTag = 1
    }

    // MARK: - Applying operations

    private func writes(at path: Path) -> WriteTreeRef {
        WriteTreeRef(treePath: path, writeTree: writeTree)
    }

    private static func mergeTree(_ children: [ChildUpdate]) -> PathTrie<Node> {
        var tree = PathTrie<Node>()
        for child in children { tree = tree.setting(child.path, child.node) }
        return tree
    }

    private func applyTagged(_ operation: ViewOperation, at queryPath: Path) -> [ViewEvent] {
        guard let syncPoint = syncPoints.value(at: queryPath) else { return [] }
        return syncPoint.apply(operation, writes: writes(at: queryPath), completeServerCache: nil)
    }

    /// Applies an untagged operation to every sync point it concerns: those below its path
    /// (deepest first), then those on the way from its path up to the root (deepest first).
    private func applyToSyncPoints(_ operation: ViewOperation) -> [ViewEvent] {
        Self.apply(operation, tree: syncPoints, serverCache: nil, writes: writes(at: .root))
    }

    private static func apply(
        _ operation: ViewOperation, tree: PathTrie<SyncPoint>, serverCache: Node?, writes: WriteTreeRef
    ) -> [ViewEvent] {
        guard let childKey = operation.path.front else {
            return applyToDescendants(operation, tree: tree, serverCache: serverCache, writes: writes)
        }
        let syncPoint = tree.value
        var serverCache = serverCache
        if serverCache == nil, let syncPoint { serverCache = syncPoint.completeServerCache(at: .root) }
        var events: [ViewEvent] = []
        if let childTree = tree.children[childKey], let childOperation = operation.forChild(childKey) {
            events += apply(
                childOperation, tree: childTree, serverCache: serverCache?.child(childKey),
                writes: writes.child(childKey))
        }
        if let syncPoint {
            events += syncPoint.apply(operation, writes: writes, completeServerCache: serverCache)
        }
        return events
    }

    private static func applyToDescendants(
        _ operation: ViewOperation, tree: PathTrie<SyncPoint>, serverCache: Node?, writes: WriteTreeRef
    ) -> [ViewEvent] {
        let syncPoint = tree.value
        var serverCache = serverCache
        if serverCache == nil, let syncPoint { serverCache = syncPoint.completeServerCache(at: .root) }
        var events: [ViewEvent] = []
        for (key, childTree) in tree.sortedChildren {
            if let childOperation = operation.forChild(key) {
                events += applyToDescendants(
                    childOperation, tree: childTree, serverCache: serverCache?.child(key), writes: writes.child(key))
            }
        }
        if let syncPoint {
            events += syncPoint.apply(operation, writes: writes, completeServerCache: serverCache)
        }
        return events
    }
}

extension SyncTree {
    /// Checks every view's caches (order index against node); returns the first violation.
    /// For tests.
    func checkInvariants() -> String? {
        var problem: String?
        syncPoints.forEach { path, syncPoint in
            for view in syncPoint.views where problem == nil {
                if let e = view.viewCache.eventCache.indexed.checkInvariants() {
                    problem = "\(path) \(view.query) event cache: \(e)"
                }
                if let e = view.viewCache.serverCache.indexed.checkInvariants() {
                    problem = "\(path) \(view.query) server cache: \(e)"
                }
            }
        }
        return problem
    }
}
