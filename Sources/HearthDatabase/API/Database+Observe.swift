import Dispatch
import Hearth
import HearthModel

extension Database {
    /// Registers an observer: the store raises its events (local writes at once, cached data
    /// offline), the core listens to the server for it.
    func observe(
        _ query: DatabaseQuery, _ kind: DataEventType, queue: DispatchQueue?,
        handler: @escaping @Sendable (DataSnapshot, String?) -> Void, cancel: (@Sendable (DatabaseError) -> Void)?
    ) -> DatabaseHandle {
        let handles = observe(
            query, [kind], queue: queue, handler: { _, snap, previous in handler(snap, previous) }, cancel: cancel)
        assert(handles.count == 1, "one event type, one observer")
        return handles[0]
    }

    /// Registers one observer for several event types at once, as one listener of the store:
    /// the events of each change — the initial ones too — reach `handler` in Firebase's order
    /// (`child_removed`, `child_added`, `child_moved`, `child_changed`, `value`) whatever the
    /// order of `kinds`. Observing the types one by one cannot promise that: the data may
    /// arrive from the server between two registrations, or already be complete, so a `value`
    /// observer registered first raises `value` before a later one raises `child_added`.
    ///
    /// Returns the handles to remove: one, or for `.info` one per type.
    package func observe(
        _ query: DatabaseQuery, _ kinds: [DataEventType], queue: DispatchQueue?,
        handler: @escaping @Sendable (DataEventType, DataSnapshot, String?) -> Void,
        cancel: (@Sendable (DatabaseError) -> Void)?
    ) -> [DatabaseHandle] {
        let q = queue ?? callbacks
        func fail(_ error: DatabaseError) -> [DatabaseHandle] {
            if let cancel { q.async { cancel(error) } }
            return [state.withLock { $0.newHandle() }]
        }
        if let invalid = query.invalid { return fail(invalid) }
        if state.withLock({ $0.closed }) { return fail(.closed) }
        if query.ref.path.keys.first == Database.infoKey {
            return DataEventType.raiseOrder.filter(kinds.contains).map { kind in
                observeInfo(query.ref, kind, queue: q) { snap, previous in handler(kind, snap, previous) }
            }
        }
        // The store's view is the query's own, in the query's order (its child_moved and
        // previous keys follow that order); the server listen is the location's, where a
        // query that loads all data is the default query.
        let location = QueryLocation(path: query.ref.path, query: query.spec)
        let ref = query.ref
        let index = query.spec.index
        let viewKinds = kinds.reduce(into: ViewEventKinds()) { $0.formUnion($1.viewKind) }
        let token: ListenerToken
        do {
            token = try store.addListener(at: location.path, query: query.spec, kinds: viewKinds) { event in
                let snapRef =
                    event.childKey.map { DatabaseReference(database: ref.database, path: ref.path.child($0)) } ?? ref
                let snap = DataSnapshot(ref: snapRef, node: event.node, index: index)
                let previous = event.previousChildKey?.string
                let kind = DataEventType(event.kind)
                q.async { handler(kind, snap, previous) }
            }
        } catch {
            return fail(DatabaseError(error))
        }
        let handle = state.withLock { s in
            let h = s.newHandle()
            s.registrations[h] = Registration(
                token: token, location: location, spec: query.spec, cancel: cancel, queue: q)
            return h
        }
        work.sync { step { (core, now) in core.listen(location, now: now) } }
        return [handle]
    }

    /// Removes one observer (of data or of `.info`); the last one on a query unlistens.
    func removeObserver(_ handle: DatabaseHandle) {
        infoBoard.withLock { $0.remove(handle) }
        let registration = state.withLock { $0.registrations.removeValue(forKey: handle) }
        guard let registration else { return }
        try? store.removeListener(registration.token)
        work.sync { step { (core, now) in core.unlisten(registration.location, now: now) } }
    }

    /// Removes every observer at `location`'s path (all queries there, as Firebase's
    /// `removeAllObservers` on a reference does) or of exactly `location` (on a query).
    func removeAllObservers(at path: Path, query: QuerySpec?) {
        var handles: [DatabaseHandle] = state.withLock { s in
            s.registrations.filter { $0.value.location.path == path && (query == nil || $0.value.spec == query) }
                .map(\.key)
        }
        handles += infoBoard.withLock { $0.handles(at: path) }
        for h in handles { removeObserver(h) }
    }

    /// keepSynced: a persisted pin (it listens again after a restart) that listens without
    /// observers and keeps the data out of pruning.
    func keepSynced(_ query: DatabaseQuery, _ on: Bool) throws(DatabaseError) {
        if let invalid = query.invalid { throw invalid }
        if query.ref.path.keys.first == Database.infoKey { throw .invalidPath("keepSynced on .info") }
        let location = QueryLocation(path: query.ref.path, query: query.spec)
        let change = state.withLock { s in on ? s.pinned.insert(location).inserted : s.pinned.remove(location) != nil }
        guard change else { return }
        // A pin is also a tracked query in use (Firebase's keepSynced adds a registration), so
        // the listen's completion marks its data complete for offline reads.
        let observed = state.withLock { s in s.registrations.values.contains { $0.location == location } }
        let lsn = try commitWithoutSync { (b: inout StoreBatch) throws(StoreError) in
            try b.keepSynced(location, on)
            if on { try b.setQueryActive(location) } else if !observed { try b.setQueryInactive(location) }
        }
        // A pin that is not durable listens all the same: it changes only what the next run
        // listens to (the failed sync is logged, and later writes are refused).
        let listen: @Sendable () -> Void = { [self] in
            step { (core, now) in on ? core.listen(location, now: now) : core.unlisten(location, now: now) }
        }
        handOff(after: lsn, listen) { _ in listen() }
    }

    /// Firebase's `getData`: the server's current data when connected (and cached for later);
    /// offline, the complete cached data; otherwise ``DatabaseError/offline`` after a short wait
    /// for a connection.
    func getData(_ query: DatabaseQuery) async throws(DatabaseError) -> DataSnapshot {
        if let invalid = query.invalid { throw invalid }
        if query.ref.path.keys.first == Database.infoKey {
            let node = infoBoard.withLock { $0.info.node.child(at: Path(keys: Array(query.ref.path.keys.dropFirst()))) }
            return DataSnapshot(ref: query.ref, node: node, index: query.spec.index)
        }
        let location = QueryLocation(path: query.ref.path, query: query.spec)
        let store = self.store
        let result: Result<Node, DatabaseError> = await withCheckedContinuation { continuation in
            let registered: Bool = state.withLock { s in
                guard !s.closed else { return false }
                let id = s.nextGet
                s.nextGet += 1
                s.getWaiters[id] = { continuation.resume(returning: $0) }
                let now = options.clock()
                work.async { [weak self] in self?.step { (core, _) in core.get(id, at: location, now: now) } }
                return true
            }
            if !registered { continuation.resume(returning: .failure(.closed)) }
        }
        switch result {
        case .success(let node):
            return DataSnapshot(ref: query.ref, node: node, index: query.spec.index)
        case .failure(let error):
            // Offline: the cache answers when it holds the whole answer (pending writes shown).
            if error == .offline || error == .closed,
                let cached = try? store.query(location.query, at: location.path, includePending: true), cached.complete
            {
                return DataSnapshot(ref: query.ref, node: cached.window.node, index: query.spec.index)
            }
            throw error
        }
    }
}
