import Dispatch
import HearthModel

/// A listener registered with ``Store/addListener(at:query:kinds:_:)``; pass it to
/// ``Store/removeListener(_:)``.
public struct ListenerToken: Hashable, Sendable {
    let registration: RegistrationID
}

extension Store {
    /// Listens to a query: `handler` receives the initial events (child_added for every
    /// child in the window, then value if the local data is complete), and then the events of
    /// every later commit that changes the view — child_removed, child_added, child_moved,
    /// child_changed, value, in Firebase's order. Local writes raise events at once; acks and
    /// reverts raise compensating events.
    ///
    /// Handlers run on the store's event queue, one at a time, in commit order, never under
    /// the store's lock (so a handler may call the store). Listening marks the query tracked
    /// and active (used now), as Firebase's persistence layer does; removing its last
    /// listener marks it inactive.
    ///
    /// - Throws: ``StoreError/invalidPath(_:)``, or a log error from persisting the tracked query.
    @discardableResult
    public func addListener(
        at path: Path, query: QuerySpec = .default, kinds: ViewEventKinds = .all,
        _ handler: @escaping @Sendable (ViewEvent) -> Void
    ) throws(StoreError) -> ListenerToken {
        try StoreBatch.validate(path)
        let location = QueryLocation(path: path, query: query)
        try commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
            try b.trackQuery(at: location, active: true)
        }
        return try core.withLock { (core: inout Core) throws(StoreError) in
            let listener = ViewHost.Listener(location: location, query: query, handler: handler)
            let (id, events) = try core.views.addListener(listener, kinds: kinds, core.persisted)
            if !events.isEmpty { eventQueue.async { for e in events { handler(e) } } }
            return ListenerToken(registration: id)
        }
    }

    /// Removes a listener. When it was the last one on its query, the tracked query becomes
    /// inactive (its data stays cached, prunable by recency).
    public func removeListener(_ token: ListenerToken) throws(StoreError) {
        let removed = core.withLock { $0.views.removeListener(token.registration) }
        guard let (location, stillListened) = removed, !stillListened else { return }
        try commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
            if b.trackedQuery(at: location) != nil { try b.trackQuery(at: location, active: false) }
        }
    }

    /// The events of a query as an asynchronous sequence; ending the iteration (or dropping
    /// the sequence) removes the listener.
    public func events(
        at path: Path, query: QuerySpec = .default, kinds: ViewEventKinds = .all
    ) throws(StoreError) -> AsyncStream<ViewEvent> {
        let (stream, continuation) = AsyncStream<ViewEvent>.makeStream()
        let token = try addListener(at: path, query: query, kinds: kinds) { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in try? self?.removeListener(token) }
        return stream
    }

    /// Blocks until every event raised so far has been delivered to its handler.
    public func waitForEventDelivery() {
        eventQueue.sync {}
    }

    /// Builds the views of pins not yet built since open, one at a time (each under the lock
    /// briefly, so listeners and writers interleave); a view a listener asked for meanwhile is
    /// built on demand and skipped here. Tracked queries get no view until someone listens.
    ///
    /// A damaged chunk of pending writes met on the way stops the rebuild and poisons the store,
    /// as a damaged cache chunk met by a load of the whole cache does.
    ///
    /// The checkpoint chunks decoded meanwhile stay decoded until the rebuild ends
    /// (``CheckpointReader/keepingDecoded(_:)``): views of nearby locations read the same
    /// chunks, and a load of the whole cache running alongside (the first checkpoint or prune
    /// after open) takes the chunks the views decoded instead of decoding second copies.
    func rebuildViews() {
        func rebuild() {
            while core.withLock({ core -> Bool in
                do throws(StoreError) {
                    return try core.views.rebuildNext(core.persisted)
                } catch {
                    if core.loadError == nil { core.loadError = error }
                    core.poisoned = core.poisoned ?? "checkpoint load failed: \(error)"
                    return false
                }
            }) {}
        }
        if let reader = core.withLock({ $0.reader }) { reader.keepingDecoded(rebuild) } else { rebuild() }
    }

    /// Blocks until every pin's view has been rebuilt after open.
    public func waitUntilViewsRebuilt() {
        viewQueue.sync {}
    }

    /// The number of views the store maintains: one per listened query and pin.
    public var viewCount: Int { core.withLock { $0.views.tree.viewCount } }
}
