// Commits: a batch built under the lock, its events logged (group commit), applied to the state
// and the views, and made durable under the asked tier.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    // MARK: - Commits

    /// What a commit did.
    public struct CommitResult: Sendable {
        /// The commit's LSN (the previous LSN when the batch was empty).
        public let lsn: LSN
        /// The events committed.
        @_spi(HearthInternals) public let events: [StoreEvent]
    }

    /// Commits the mutations `build` adds to the batch as one atomic unit: one log record,
    /// durable under `durability` (default: the store's) when this returns.
    ///
    /// `build` runs under the store's lock: it must not call back into the store.
    ///
    /// - Throws: what `build` throws (nothing is committed), or a log error — after which the
    ///   store is poisoned and refuses writes until reopened.
    @discardableResult
    public func commit(
        durability: Durability? = nil, _ build: (inout StoreBatch) throws(StoreError) -> Void
    ) throws(StoreError) -> CommitResult {
        if options.readOnly { throw .log(.readOnly(path: directory)) }
        return try commit(tier: durability ?? options.durability, now: options.clock(), firstEncoded: nil, build)
    }

    /// ``commit(durability:_:)`` at `now`. `firstEncoded`: the encoding of the first event
    /// `build` adds (``EventCodec/inspectedServerEvent(_:)``, made before the lock), which the
    /// record's payload then takes instead of encoding that event again under the lock.
    ///
    /// `serverEvent`: `build` adds exactly this server-data event and nothing else. Without a
    /// filtered tracked query — whose keys the batch would record (``StoreBatch/
    /// recordTrackedKeyChanges()``) — that is the whole batch, and no batch is made: making one
    /// copies the state and the loading state and allocates its cache reader, and destroying
    /// it releases them, a twentieth of the committing thread's time in a cache fill.
    func commit(
        tier: Durability, now: Int64, firstEncoded: [UInt8]?, serverEvent: StoreEvent? = nil,
        _ build: (inout StoreBatch) throws(StoreError) -> Void
    ) throws(StoreError) -> CommitResult {
        assert(serverEvent?.isServerData ?? true, "only a server-data event skips the batch")
        let (queued, events) = try core.withLock {
            (core: inout Core) throws(StoreError) -> (Queued?, [StoreEvent]) in
            if core.closed { throw .closed }
            if let why = core.poisoned { throw .poisoned(why) }
            // The batch shares the state's storage; it must be gone before the events are
            // applied below, or every commit copies the state's dictionaries (O(state) per
            // commit: quadratic for a long run of commits).
            let (events, viewOperations) =
                if let serverEvent, !core.loading.state.hasKeyWatcher {
                    ([serverEvent], [StoreBatch.ViewOperation]())
                } else {
                    try Store.collectEvents(core.loading, reader: core.reader, now: now, build)
                }
            if events.isEmpty {
                // Nothing to persist; a listen's completion may still concern its view.
                try core.views.completeWindows(for: [], viewOperations, core.persisted)
                let deliveries = core.views.apply([], viewOperations, core.persisted, now: now)
                if !deliveries.isEmpty { eventQueue.async { for (e, handler) in deliveries { handler(e) } } }
                return (nil, [])
            }
            // The pending writes as of open that the views will need for these events reach
            // them now, so that a damaged checkpoint chunk fails the commit before it is logged.
            try core.views.prepare(for: events)
            let payload = firstEncoded.map { EventCodec.encode(events, firstEncoded: $0) } ?? EventCodec.encode(events)
            assert(firstEncoded == nil || payload == EventCodec.encode(events), "the first event is the one encoded")
            let queued = try queue(events, viewOperations, payload: .whole(payload), tier: tier, now: now, &core)
            return (queued, events)
        }
        guard let queued else { return CommitResult(lsn: lastLSN, events: []) }
        try awaitTier(queued)
        return CommitResult(lsn: queued.pending.lsn, events: events)
    }

    /// ``commit(durability:_:)`` for a closure written without a thrown type (`{ batch in … }`),
    /// which Swift infers as throwing `any Error`: the store's own failures are still
    /// ``StoreError``s, and an error of another type thrown by `build` aborts the batch and is
    /// rethrown as it is. Nothing is committed when anything is thrown.
    @discardableResult
    public func commit(durability: Durability? = nil, _ build: (inout StoreBatch) throws -> Void) throws -> CommitResult
    {
        // The typed commit can only carry a StoreError out of `build`; any other error is
        // parked here, the batch aborted, and the parked error rethrown.
        var foreign: (any Error)?
        do {
            return try commit(durability: durability) { (batch: inout StoreBatch) throws(StoreError) in
                do {
                    try build(&batch)
                } catch let error as StoreError {
                    throw error
                } catch {
                    foreign = error
                    throw .invalidOption("aborted by the commit's closure")  // replaced below
                }
            }
        } catch {
            if let foreign { throw foreign }
            throw error
        }
    }

    /// Runs `build` on a fresh batch and returns its events (the batch dies here).
    /// Runs `build` on a batch over `loading` and returns its events. A function of its own so
    /// that the batch — and the copy of the state it holds — is gone before the events are
    /// applied: otherwise every commit would copy the state's storage.
    private static func collectEvents(
        _ loading: LoadingState, reader: CheckpointReader?, now: Int64,
        _ build: (inout StoreBatch) throws(StoreError) -> Void
    ) throws(StoreError) -> ([StoreEvent], [StoreBatch.ViewOperation]) {
        var batch = StoreBatch(base: loading.state, now: now) { path in
            (try? PersistedCacheReader(loading: loading, reader: reader).serverValue(at: path)) ?? .empty
        }
        try build(&batch)
        if let damage = batch.damage { throw damage }
        batch.recordTrackedKeyChanges()
        return (batch.events, batch.viewOperations)
    }

    /// Log bytes since the last checkpoint that trigger the next one: half the last
    /// checkpoint (so replay stays proportional to the state), at least
    /// `checkpointMinimumBytes` — and, under a cap, at most ``Store/logShare`` of it (the disk
    /// bound's log term).
    func checkpointThreshold(_ core: Core) -> Int {
        let usual = max(options.checkpointMinimumBytes, Int(core.checkpointBodyBytes / 2))
        return max(4096, min(usual, Int(Double(options.cacheSizeBytes) * Store.logShare)))
    }
}
