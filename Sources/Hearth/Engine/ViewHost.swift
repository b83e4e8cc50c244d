import HearthModel

/// The store's views: the ``SyncTree`` kept in step with every committed event, the
/// registrations that materialize a view for every keepSynced pin, and the client's listeners.
///
/// Views exist only where someone listens, as in Firebase's SyncTree: a listener's query and a
/// pin (a keepSynced registration). A tracked query no one listens to has no view — a server
/// write costs nothing for it (``StoreBatch/recordTrackedKeyChanges()`` says what happens to its
/// keys) — and a listener added later builds its view from the persisted cache.
///
/// Invariant: every member is read and written only while the store's `core` lock is held
/// (which is also what orders the tree's operations exactly as the log orders the events);
/// hence `@unchecked Sendable`. Listener handlers are never called under that lock: events
/// are handed to the store's delivery queue in commit order.
final class ViewHost: @unchecked Sendable {
    /// A client's listener.
    struct Listener {
        let location: QueryLocation
        let query: QuerySpec
        let handler: @Sendable (ViewEvent) -> Void
    }

    /// The sync tree. The pending writes as of open reach it region by region: whoever reads
    /// or changes a location through it first calls ``restoreRegion(_:)`` for that location.
    let tree: SyncTree
    private var nextRegistration = 1
    /// Client listeners by registration.
    private(set) var listeners: [RegistrationID: Listener] = [:]
    /// The registration materializing each pin's view.
    private var materialized: [QueryLocation: RegistrationID] = [:]
    /// Pins whose views are still to be built after open.
    private(set) var pendingRebuild: [QueryLocation] = []
    /// Views built from their windows' chunks, whose server caches are completed before
    /// anything changes them (ViewHost+Windows.swift).
    var windowed = Set<QueryLocation>()

    init() {
        tree = SyncTree()
    }

    /// Pending writes as of open that the tree has not been given yet (see `restore`), and
    /// what resolving their server values needs: the persisted data and clock as of open.
    private var unrestored = UnrestoredWrites()
    private var restoreContext: (cache: PersistedCacheReader, serverNow: Double)?

    /// Gives the tree every pending write as of open that a read, view or write at `path`
    /// needs (``UnrestoredWrites/takeRegion(of:)``), decoding only the checkpoint chunks that
    /// may hold one. Call it before the tree reads or changes anything at `path`.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` when a chunk that may
    ///   hold such a write is damaged.
    func restoreRegion(_ path: Path) throws(StoreError) {
        guard let context = restoreContext else { return }
        let writes = try unrestored.takeRegion(of: path)
        for write in writes {
            let events = give(write, serverNow: context.serverNow, context.cache)
            // No view overlaps a write not yet restored (UnrestoredWrites' invariant).
            assert(events.isEmpty, "a restored write raised view events")
        }
        if unrestored.isEmpty { restoreContext = nil }
        assert(
            restoreContext == nil || !unrestored.isEmpty, "a restore context is kept only while writes are unrestored")
    }

    /// Restores what committing `events` will need (before the commit is logged, so that a
    /// damaged chunk fails the commit rather than leaving the views behind the log): the
    /// regions of the writes saved and of the views the commit creates.
    func prepare(for events: [StoreEvent]) throws(StoreError) {
        guard restoreContext != nil else { return }
        for event in events {
            switch event {
            case .writeSaved(let write): try restoreRegion(write.path)
            case .pinChanged(let location, on: true): try restoreRegion(location.path)
            default: break
            }
        }
    }

    /// Hands a pending write to the tree with its server values resolved — once, as Firebase
    /// does when a write reaches its sync tree (`repoSetWithPriority`, `repoUpdate`, and the
    /// restore of persisted writes at start): a timestamp becomes `serverNow` (the local clock
    /// plus the server time offset, floored), an increment the local number at its location
    /// plus the delta (the delta when there is no number). The log keeps the unresolved write,
    /// which is what goes to the server. Every read of local data — listeners, queries,
    /// ``Store/value(at:)`` — sees these estimates through the tree's one overlay.
    ///
    /// `plain`: the caller found, before taking the store's lock, that the write holds no
    /// server value, so the walk looking for one is skipped here, under it.
    private func give(
        _ write: PendingWrite, serverNow: Double, _ cache: PersistedCacheReader, plain: Bool = false,
        visible: Bool = true
    ) -> [ViewEvent] {
        assert(!plain || !write.containsServerValue, "a write given as plain holds no server value")
        let local = { (path: Path) -> Node in
            // A damaged chunk reads as no data here; the reads that meet it report it.
            let server = (try? cache.serverValue(at: path)) ?? .empty
            return self.tree.localValue(at: path, serverValue: server)
        }
        let operation =
            plain
            ? write.operation
            : write.operation.resolvingServerValues(
                at: write.path, serverNow: serverNow, existing: local)
        switch operation {
        case .set(let node): return tree.applyUserOverwrite(node, at: write.path, writeID: write.id, visible: visible)
        case .update(let children):
            assert(visible, "only a set is hidden")
            return tree.applyUserMerge(children, at: write.path, writeID: write.id)
        }
    }

    func newRegistration() -> RegistrationID {
        defer { nextRegistration += 1 }
        return RegistrationID(nextRegistration)
    }

    /// Prepares the tree for a store just opened: the pending writes (so local data is
    /// overlaid) and the list of views to rebuild: the pins' (no listener exists yet).
    ///
    /// The writes reach the tree region by region (``restoreRegion(_:)``), when a read, view
    /// or write first touches a location, not here: opening a store with 100,000 pending
    /// writes costs what its first read needs, not 100,000 overlay updates.
    func restore(_ cache: PersistedCacheReader, now: Int64) {
        let loading = cache.loading
        unrestored = UnrestoredWrites(loading.state.writes)
        if !unrestored.isEmpty {
            restoreContext = (cache, Double(now) + loading.state.serverTimeOffsetMs)
        }
        pendingRebuild = loading.state.pins.sorted { $0.description < $1.description }
    }

    /// Builds the next not-yet-built view; returns false when all are built.
    /// - Throws: what restoring the pending writes at its location throws (the view is not built).
    func rebuildNext(_ cache: PersistedCacheReader) throws(StoreError) -> Bool {
        guard !pendingRebuild.isEmpty else { return false }
        let location = pendingRebuild.removeFirst()
        try restoreRegion(location.path)
        materialize(location, cache)
        return !pendingRebuild.isEmpty
    }

    /// Ensures a view exists for the pin at `location` (a registration that wants no events). The
    /// pending writes at `location` must be restored (``restoreRegion(_:)``, which
    /// ``prepare(for:)`` does for commits). A new view starts from `cache`.
    func materialize(_ location: QueryLocation, _ cache: PersistedCacheReader) {
        guard materialized[location] == nil else { return }
        // Already done by the callers; a no-op then. (Should it fail, the view still builds,
        // from the writes restored so far.)
        try? restoreRegion(location.path)
        let id = newRegistration()
        assert(listeners[id] == nil, "a materializing registration is no client listener's")
        materialized[location] = id
        _ = servingWindows(for: location, cache) {
            tree.addListener(at: location.path, query: location.query, registration: id, kinds: [], cache: $0)
        }
    }

    /// Drops the materializing registration of `location` (its view goes when no listener
    /// needs it).
    private func dematerialize(_ location: QueryLocation) {
        guard let id = materialized.removeValue(forKey: location) else { return }
        pendingRebuild.removeAll { $0 == location }
        _ = tree.removeListener(at: location.path, query: location.query, registration: id)
    }

    /// Adds a client listener; returns its registration and the initial events.
    /// - Throws: what restoring the pending writes at its location throws (nothing is added).
    func addListener(
        _ listener: Listener, kinds: ViewEventKinds, _ cache: PersistedCacheReader
    ) throws(StoreError) -> (RegistrationID, [ViewEvent]) {
        try restoreRegion(listener.location.path)
        let id = newRegistration()
        assert(listeners[id] == nil && !materialized.values.contains(id), "registration ids are never reused")
        listeners[id] = listener
        // A view asked for first is built first.
        pendingRebuild.removeAll { $0 == listener.location }
        let events = servingWindows(for: listener.location, cache) {
            tree.addListener(
                at: listener.location.path, query: listener.query, registration: id, kinds: kinds, cache: $0)
        }
        return (id, events)
    }

    /// The window and completeness of `query` at `path` as a view computes them: from the
    /// existing view, or from a view built for the occasion and dropped again.
    /// - Throws: what restoring the pending writes at `path` throws.
    func window(
        _ query: QuerySpec, at path: Path, _ cache: PersistedCacheReader
    ) throws(StoreError) -> (window: QueryWindow, complete: Bool) {
        try restoreRegion(path)
        if let cache = tree.eventCache(at: path, query: query) { return cache }
        let id = newRegistration()
        _ = tree.addListener(at: path, query: query, registration: id, kinds: [], cache: cache)
        defer { _ = tree.removeListener(at: path, query: query, registration: id) }
        return tree.eventCache(at: path, query: query) ?? (QueryWindow(orderedEntries: [], node: .empty), false)
    }

    /// Removes a client listener; returns whether another listener still uses its location.
    func removeListener(_ id: RegistrationID) -> (location: QueryLocation, stillListened: Bool)? {
        guard let listener = listeners.removeValue(forKey: id) else { return nil }
        _ = tree.removeListener(at: listener.location.path, query: listener.query, registration: id)
        let still = listeners.values.contains { $0.location == listener.location }
        return (listener.location, still)
    }

    /// Feeds committed events to the tree (after they were applied to `cache`'s state); returns
    /// the listener events they raise, paired with their handlers, in order. Views the events
    /// create start from `cache`.
    /// `viewOperations` (a listen's tagged data and completion) go to their views after the
    /// events' server data and before their acks.
    func apply(
        _ events: [StoreEvent], _ viewOperations: [StoreBatch.ViewOperation] = [], _ cache: PersistedCacheReader,
        now: Int64, plainWrite: Int64? = nil
    ) -> [(ViewEvent, @Sendable (ViewEvent) -> Void)] {
        applyToTree(events, viewOperations, cache, now: now, plainWrite: plainWrite)
    }

    /// A listen's tagged data or completion, given to the query's view. Nothing to restore
    /// first: a tag exists only for a query with a view, and building that view restored every
    /// pending write as of open at its location and below (``restoreRegion(_:)``), which holds
    /// every write that can overlap `path`.
    private func applyViewOperation(_ operation: StoreBatch.ViewOperation) -> [ViewEvent] {
        switch operation {
        case let .taggedOverwrite(location, path, node):
            guard let tag = tree.tag(for: location.path, query: location.query) else { return [] }
            return tree.applyTaggedServerOverwrite(node, at: path, tag: tag)
        case let .taggedMerge(location, path, children):
            guard let tag = tree.tag(for: location.path, query: location.query) else { return [] }
            return tree.applyTaggedServerMerge(children, at: path, tag: tag)
        case .listenComplete(let location):
            return tree.applyListenComplete(at: location.path, query: location.query)
        case .hideWrite:
            return []  // applied as the write was given (applyToTree)
        }
    }

    private func applyToTree(
        _ events: [StoreEvent], _ viewOperations: [StoreBatch.ViewOperation], _ cache: PersistedCacheReader,
        now: Int64, plainWrite: Int64?
    ) -> [(ViewEvent, @Sendable (ViewEvent) -> Void)] {
        let loading = cache.loading
        let serverNow = Double(now) + loading.state.serverTimeOffsetMs
        var raised: [ViewEvent] = []
        // A commit is atomic, so its listeners see its net effect: acks and reverts go to the
        // views after the commit's server data. (Firebase's servers send a write's data
        // before its ack for the same reason: an ack first re-exposes the stale server cache
        // and the view flickers.) The state does not care: removing a pending write and
        // updating the server cache commute.
        let isAck: (StoreEvent) -> Bool = {
            switch $0 {
            case .writeAcked, .writeReverted: true
            default: false
            }
        }
        // Two passes over the events rather than two filtered copies of them: a copy would put
        // a commit's one server event into an array, and retain and release its payload, for
        // nothing.
        var hasAcks = false
        for event in events {
            if isAck(event) {
                hasAcks = true
                continue
            }
            switch event {
            case let .serverOverwrite(path, node, _):
                raised += tree.applyServerOverwrite(node, at: path)
            case let .serverMerge(path, children, _):
                raised += tree.applyServerMerge(children, at: path)
            case .writeSaved(let write):
                // Restored by prepare(for:) before the commit was logged: a no-op here.
                try? restoreRegion(write.path)
                raised += give(
                    write, serverNow: serverNow, cache, plain: write.id == plainWrite,
                    visible: !viewOperations.contains { if case .hideWrite(write.id) = $0 { true } else { false } })
            case .writeAcked, .writeReverted:
                break  // after the view operations, below
            case let .pinChanged(location, on):
                if on { materialize(location, cache) } else { dematerialize(location) }
            case .trackedQuerySaved, .trackedQueryRemoved, .cachePruned, .trackedQueryKeysChanged, .authSaved,
                .authCleared, .transactionSaved, .transactionRemoved,
                .onDisconnectSaved,
                .onDisconnectAcked, .onDisconnectRemoved, .serverTimeOffset, .sessionStarted, .writerWatermark,
                .writerWatermarksRemoved, .writerIdentity:
                break
            }
        }
        for operation in viewOperations { raised += applyViewOperation(operation) }
        for event in events where hasAcks && isAck(event) {
            switch event {
            case .writeAcked(let id):
                // A write the tree was never given leaves the unrestored ones (no view
                // overlaps it, so nothing is raised); one it holds leaves the tree.
                unrestored.remove(id)
                raised += tree.ackUserWrite(id, revert: false)
            case .writeReverted(let id):
                unrestored.remove(id)
                raised += tree.ackUserWrite(id, revert: true)
            default: break
            }
        }
        return raised.compactMap { e in listeners[e.registration].map { (e, $0.handler) } }
    }
}
