import Dispatch
import HearthLog
import HearthModel

/// A Hearth store: all the local state of a realtime-database client, persisted as one
/// append-only log of events with periodic checkpoints, under a size cap.
///
/// Every method is safe to call from any thread. Mutations are atomic commits
/// (``commit(durability:_:)``, or the one-operation conveniences) that return once durable
/// under their tier; reads see every commit that has returned.
///
/// ```swift
/// let store = try Store.open(directory: "/path/to/store")
/// let id = try store.saveWrite(.set(.string("hi")), at: "messages/m1")
/// try store.commit { batch in          // ack + the server's data: one atomic commit
///     try batch.ackWrite(id)
///     try batch.applyServerOverwrite(.string("hi"), at: "messages/m1")
/// }
/// print(try store.value(at: "messages"))
/// ```
///
/// (`Tests/HearthToolTests/DocExampleTests.swift` compiles and runs exactly this.)
public final class Store: Sendable {
    /// The store directory.
    public let directory: String
    /// The options the store was opened with.
    public let options: Options
    /// What recovery did on open.
    public let recovery: RecoveryReport

    let log: Log
    let core: Locked<Core>
    /// Loads and drops of the whole server cache (Store+ResidentCache.swift).
    let resident = ResidentCache()
    let maintenanceQueue = DispatchQueue(label: "hearth.store.maintenance")
    /// Listener handlers run here, one at a time, in commit order.
    let eventQueue = DispatchQueue(label: "hearth.store.events")
    /// Views of tracked queries and pins are rebuilt here after open.
    let viewQueue = DispatchQueue(label: "hearth.store.views")

    /// The mutable part, guarded by `core`.
    struct Core: Sendable {
        var loading: LoadingState
        /// Reads chunks of the checkpoint while the cache is not resident.
        var reader: CheckpointReader?
        var lastLSN: LSN
        var poisoned: String?
        var closed = false
        var checkpointLSN: LSN
        var checkpointBodyBytes: UInt64
        /// Raw payload bytes appended since the checkpoint LSN.
        var logBytesSinceCheckpoint = 0
        var bytesSinceSizeCheck = 0
        var maintenancePending = false
        /// Set when open replayed a long log tail: the next maintenance pass checkpoints, so
        /// the next open does not replay it again.
        var checkpointRequested = false
        /// The last checkpoint attempt failed (a full disk, typically): the next one does not
        /// roll the log's segment first (Store+Maintenance.swift, writeCheckpoint).
        var lastCheckpointFailed = false
        /// Stored/raw size of the last checkpoint's cache chunks, for estimates.
        var compressionRatio = 0.35
        /// Set when pinned, active and pending data alone exceed the cap.
        var capExceededByUnprunable = false
        /// Set when a load of the whole checkpoint cache failed.
        var loadError: StoreError?
        /// Whether a maintenance pass is bringing the footprint back under the cap, and the
        /// bytes committed since it began (writers wait for it past a quarter of the cap).
        var enforcingCap = false
        var bytesDuringEnforcement = 0
        var prunedRounds = 0
        var checkpointsWritten = 0
        var lastCheckpointPause: Duration = .zero
        /// The views (a reference: guarded by this lock too, see ViewHost).
        let views = ViewHost()
    }

    private init(directory: String, options: Options, log: Log, recovery: RecoveryReport, core: Core) {
        self.directory = directory
        self.options = options
        self.log = log
        self.recovery = recovery
        self.core = Locked(core)
        maintenanceQueue.setSpecific(key: Store.onMaintenanceQueue, value: true)
    }

    /// Marks the maintenance queue, so that its own commits never wait for it.
    static let onMaintenanceQueue = DispatchSpecificKey<Bool>()

    // MARK: - Open and close

    /// Opens (or creates) the store in `directory`.
    ///
    /// Reads the newest checkpoint's directory (tracked queries, pins, auth, transactions,
    /// onDisconnect, the indexes of the cache and of the pending writes) and replays the log
    /// after it. With ``Options/lazyCacheLoad`` the server cache is not decoded whole: a read
    /// decodes just the chunks it needs, and only what needs the whole cache (pruning, a
    /// checkpoint, ``state()``) loads it, until the next maintenance pass — and the checkpoint's
    /// pending writes are decoded when a read, view or write first touches a location they
    /// may be at (or when the whole list is needed), so open costs the same with 1,000 or
    /// 100,000 of them. Queries left active by the previous session become inactive.
    ///
    /// - Throws: ``StoreError/log(_:)`` when the store is locked by another process or
    ///   damaged (file and offset named), ``StoreError/invalidOption(_:)``, or a corrupt
    ///   checkpoint or record error.
    public static func open(directory: String, options: Options = Options()) throws(StoreError) -> Store {
        try options.validate()
        guard options.readOnly else { return try openOnce(directory: directory, options: options) }
        // Read-only, perhaps under a live writer: a checkpoint of that writer may replace the
        // MANIFEST and delete a segment between the scan and the replay. Not damage: read again.
        var attempt = 0
        while true {
            attempt += 1
            let before = Log.manifestGeneration(directory, options.fileSystem)
            do {
                return try openOnce(directory: directory, options: options)
            } catch {
                if attempt < Log.verifyAttempts, Log.manifestGeneration(directory, options.fileSystem) != before { continue }
                throw error
            }
        }
    }

    private static func openOnce(directory: String, options: Options) throws(StoreError) -> Store {
        var logOptions = Log.Options()
        logOptions.readOnly = options.readOnly
        logOptions.segmentSize = options.effectiveSegmentSize
        logOptions.durability = options.durability
        logOptions.salvage = options.salvage
        logOptions.createIfMissing = options.createIfMissing
        var earlier: RecoveryReport?
        while true {
            let log: Log
            do { log = try Log.open(directory: directory, fileSystem: options.fileSystem, options: logOptions) } catch { throw .log(error) }
            var recovery = log.recovery
            if let first = earlier?.salvaged {
                // Salvage ran twice: report the first damage and every file moved aside.
                recovery.salvaged = (first.damage, first.movedAside + (recovery.salvaged?.movedAside ?? []))
            }
            var unreplayable: Log.SalvageCut?
            do {
                return try open(directory: directory, options: options, log: log, recovery: recovery, unreplayable: &unreplayable)
            } catch {
                // Salvage: a record that passed its checksum but cannot be replayed is cut off
                // with everything after it, as a damaged record is (once).
                guard options.salvage, logOptions.salvageCut == nil, let cut = unreplayable else { throw error }
                try? log.close()
                logOptions.salvageCut = cut
                earlier = recovery
            }
        }
    }

    /// Reads the state of the log just opened: the checkpoint, then the records after it.
    /// `unreplayable` is set when a record after the checkpoint cannot be replayed.
    private static func open(directory: String, options: Options, log: Log, recovery: RecoveryReport,
                             unreplayable: inout Log.SalvageCut?) throws(StoreError) -> Store {

        var loading = LoadingState(state: StoreState(), cacheLoaded: true)
        var reader: CheckpointReader?
        var checkpointLSN: LSN = 0
        var checkpointBytes: UInt64 = 0
        if let checkpoint = log.checkpoint {
            let r = try CheckpointReader(checkpoint)
            // Eager: the pending writes too (lazy: as reads, views and writes need them).
            if !options.lazyCacheLoad { try r.directory.state.writes.decodeAll() }
            loading = LoadingState(state: r.directory.state, cacheLoaded: false)
            checkpointLSN = checkpoint.lsn
            checkpointBytes = checkpoint.bodySize
            if r.directory.chunks.isEmpty {
                loading.finishLoading(cache: .empty, base: options.lazyCacheLoad ? r : nil)
            } else if !options.lazyCacheLoad {
                loading.finishLoading(cache: try r.fullCache())
            } else {
                reader = r
            }
        }

        var replayedBytes = 0
        var lastLSN = checkpointLSN
        do {
            try log.replay(after: checkpointLSN, knownTypes: [EventCodec.recordType]) { record in
                let events: [StoreEvent]
                do {
                    events = try EventCodec.decode(record.payload)
                } catch {
                    throw StoreError.corruptRecord(file: record.file, offset: record.offset, lsn: record.lsn, reason: "\(error)")
                }
                for e in events {
                    if case .cachePruned = e, !loading.cacheLoaded, let r = reader {
                        // A prune in the tail (a crash between a prune and its checkpoint)
                        // changes the cache, which must be loaded first.
                        loading.finishLoading(cache: try r.fullCache())
                        reader = nil
                    }
                    loading.apply(e)
                }
                replayedBytes += record.payload.count
                lastLSN = record.lsn
            }
        } catch let e as StoreError {
            if case let .corruptRecord(file, offset, _, reason) = e {
                unreplayable = Log.SalvageCut(file: file, offset: offset, reason: "undecodable events: \(reason)")
            }
            throw e
        } catch let e as LogError {
            if let file = e.file, let offset = e.offset {
                unreplayable = Log.SalvageCut(file: file, offset: offset, reason: e.description)
            }
            throw .log(e)
        } catch {
            throw .log(.invalidArgument("replay: \(error)"))
        }

        var core = Core(
            loading: loading, reader: reader, lastLSN: max(lastLSN, log.lastLSN), checkpointLSN: checkpointLSN,
            checkpointBodyBytes: checkpointBytes, logBytesSinceCheckpoint: replayedBytes)
        // Replaying the tail is what open costs beyond the directory (about 2 µs per small
        // pending write): past `openReplayCheckpointBytes` the background maintenance writes a
        // checkpoint now rather than at the usual threshold, and the next open reads it instead.
        core.checkpointRequested = replayedBytes >= Store.openReplayCheckpointBytes
        core.views.restore(loading, reader: reader, now: options.clock())
        let store = Store(directory: directory, options: options, log: log, recovery: recovery, core: core)

        store.viewQueue.async { store.rebuildViews() }
        // Read-only: the state as the log has it (no sessionStarted, no maintenance).
        if options.readOnly { return store }
        // Queries active in the previous session are not active now.
        if loading.state.trackedQueries.values.contains(where: \.active) {
            do {
                try store.commit(durability: .buffered) { $0.append(.sessionStarted(at: $0.now)) }
            } catch {
                // (E.g. the background load already failed and poisoned the store.) Open
                // fails, so close now: the background work ends and the lock is released
                // before the caller sees the error — not whenever the store is deallocated.
                try? store.close()
                throw error
            }
        }
        store.scheduleMaintenance(force: true)
        return store
    }

    /// Log bytes replayed at open past which open's maintenance pass checkpoints.
    static let openReplayCheckpointBytes = 64 << 10

    /// Loads the checkpoint's whole server cache now, if it is not resident (it stays until
    /// the next maintenance pass drops it again).
    /// - Throws: the error that stopped the load, if any.
    public func waitUntilLoaded() throws(StoreError) {
        _ = try fullyLoadedCore()
    }

    /// Waits for background maintenance, checkpoints when the log since the last checkpoint
    /// is long enough that the next open would replay it for a noticeable time (64 KiB), then
    /// flushes and closes the log and releases the lock. Further calls throw
    /// ``StoreError/closed``.
    ///
    /// That checkpoint is one the next open would write anyway (in the background, after
    /// replaying the same log); written here, the next open reads it instead of the log. It is
    /// best effort: when it fails (a full disk), close goes on, and the next open replays the
    /// log as before.
    public func close() throws(StoreError) {
        maintenanceQueue.sync { checkpointBeforeClose() }
        viewQueue.sync {}
        eventQueue.sync {}
        let wasClosed = core.withLock { core -> Bool in
            defer { core.closed = true }
            return core.closed
        }
        if wasClosed { return }
        do { try log.close() } catch { throw .log(error) }
    }

    deinit {
        try? log.close()
    }

    // MARK: - Commits

    /// What a commit did.
    public struct CommitResult: Sendable {
        /// The commit's LSN (the previous LSN when the batch was empty).
        public let lsn: LSN
        /// The events committed.
        public let events: [StoreEvent]
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
        let tier = durability ?? options.durability
        let now = options.clock()
        let (pending, events, maintain, backpressure) = try core.withLock { (core: inout Core) throws(StoreError) -> (Log.PendingAppend?, [StoreEvent], Bool, Bool) in
            if core.closed { throw .closed }
            if let why = core.poisoned { throw .poisoned(why) }
            // The batch shares the state's storage; it must be gone before the events are
            // applied below, or every commit copies the state's dictionaries (O(state) per
            // commit: quadratic for a long run of commits).
            let (events, viewOperations) = try Store.collectEvents(core.loading, reader: core.reader, now: now, build)
            if events.contains(where: { if case .cachePruned = $0 { true } else { false } }) { try loadCacheUnderLock(&core) }
            if events.isEmpty {
                // Nothing to persist; a listen's completion may still concern its view.
                let deliveries = core.views.apply([], viewOperations, core.loading, reader: core.reader, prior: ViewHost.Prior([], core.loading.state), now: now)
                if !deliveries.isEmpty { eventQueue.async { for (e, handler) in deliveries { handler(e) } } }
                return (nil, [], false, false)
            }
            // The pending writes as of open that the views will need for these events reach
            // them now, so that a damaged checkpoint chunk fails the commit before it is logged.
            try core.views.prepare(for: events)
            let payload = EventCodec.encode(events)
            // The record is queued here, which fixes its LSN — the order states are applied
            // in — and written and synced after the lock is released, so that concurrent
            // committers share one write and one fsync (group commit).
            let pending: Log.PendingAppend
            do throws(LogError) {
                pending = try log.submit(payload, type: EventCodec.recordType, durability: tier)
            } catch {
                core.poisoned = error.description
                throw .log(error)
            }
            let lsn = pending.lsn
            let prior = ViewHost.Prior(events, core.loading.state)
            for e in events { core.loading.apply(e) }
            // The views follow the state in the same order; their events are queued while the
            // lock is held, so handlers see commits in LSN order.
            let deliveries = core.views.apply(events, viewOperations, core.loading, reader: core.reader, prior: prior, now: now)
            if !deliveries.isEmpty { eventQueue.async { for (e, handler) in deliveries { handler(e) } } }
            core.lastLSN = lsn
            core.logBytesSinceCheckpoint += payload.count
            core.bytesSinceSizeCheck += payload.count
            let maintain = !core.maintenancePending
                && (core.bytesSinceSizeCheck >= options.effectiveSizeCheckInterval
                    || core.logBytesSinceCheckpoint >= checkpointThreshold(core))
            // Backpressure (the disk bound's log term, Store+Maintenance.swift): writers wait
            // for maintenance once the log since the checkpoint has passed the threshold by a
            // sixteenth of the cap, or has grown by that much while the cap is enforced — so a
            // sustained burst cannot outrun checkpoints and pruning.
            var backpressure = false
            if !options.authoritative {
                if core.enforcingCap { core.bytesDuringEnforcement += payload.count }
                let slack = options.cacheSizeBytes / 16
                backpressure = core.bytesDuringEnforcement > slack
                    || core.logBytesSinceCheckpoint > checkpointThreshold(core) + slack
            }
            return (pending, events, maintain, backpressure)
        }
        // Acknowledged only when the tier holds. A failure here leaves the state ahead of the
        // log (the events were applied when queued), so the store refuses writes until it is
        // reopened — which recovers exactly what reached the disk.
        guard let pending else { return CommitResult(lsn: lastLSN, events: []) }
        do throws(LogError) { try log.wait(pending) } catch {
            core.withLock { $0.poisoned = error.description }
            throw .log(error)
        }
        let lsn = pending.lsn
        if maintain { scheduleMaintenance(force: false) }
        if backpressure && DispatchQueue.getSpecific(key: Store.onMaintenanceQueue) != true {
            maintenanceQueue.sync {}
        }
        return CommitResult(lsn: lsn, events: events)
    }

    /// ``commit(durability:_:)`` for a closure written without a thrown type (`{ batch in … }`),
    /// which Swift infers as throwing `any Error`: the store's own failures are still
    /// ``StoreError``s, and an error of another type thrown by `build` aborts the batch and is
    /// rethrown as it is. Nothing is committed when anything is thrown.
    @discardableResult
    public func commit(durability: Durability? = nil, _ build: (inout StoreBatch) throws -> Void) throws -> CommitResult {
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
        _ loading: LoadingState, reader: CheckpointReader?, now: Int64, _ build: (inout StoreBatch) throws(StoreError) -> Void
    ) throws(StoreError) -> ([StoreEvent], [StoreBatch.ViewOperation]) {
        var batch = StoreBatch(base: loading.state, now: now) { path in
            (try? Store.serverValue(loading, reader, at: path)) ?? .empty
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
        if options.authoritative { return usual }
        return max(4096, min(usual, Int(Double(options.cacheSizeBytes) * Store.logShare)))
    }

    // MARK: - One-operation conveniences

    /// Replaces the server's data at `path`.
    @discardableResult
    public func applyServerOverwrite(_ node: Node, at path: Path, durability: Durability? = nil) throws(StoreError) -> LSN {
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in try b.applyServerOverwrite(node, at: path) }.lsn
    }

    /// Merges children into the server's data at `path`.
    @discardableResult
    public func applyServerMerge(_ children: [ChildUpdate], at path: Path, durability: Durability? = nil) throws(StoreError) -> LSN {
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in try b.applyServerMerge(children, at: path) }.lsn
    }

    /// Saves a user write; returns its id.
    @discardableResult
    public func saveWrite(_ operation: PendingWrite.Operation, at path: Path, durability: Durability? = nil) throws(StoreError) -> Int64 {
        var id: Int64 = 0
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in id = try b.saveWrite(operation, at: path) }
        return id
    }

    /// Removes a write the server acknowledged.
    public func ackWrite(_ id: Int64, durability: Durability? = nil) throws(StoreError) {
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in try b.ackWrite(id) }
    }

    /// Removes a write the server rejected.
    public func revertWrite(_ id: Int64, durability: Durability? = nil) throws(StoreError) {
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in try b.revertWrite(id) }
    }

    /// Creates or updates a tracked query (see ``StoreBatch/trackQuery(at:complete:active:keys:)``).
    @discardableResult
    public func trackQuery(at location: QueryLocation, complete: Bool? = nil, active: Bool? = nil, keys: Set<ChildKey>? = nil) throws(StoreError) -> TrackedQuery {
        var q: TrackedQuery?
        try commit { (b: inout StoreBatch) throws(StoreError) in q = try b.trackQuery(at: location, complete: complete, active: active, keys: keys) }
        return q!
    }

    /// Stops tracking a query.
    public func untrackQuery(at location: QueryLocation) throws(StoreError) {
        try commit { (b: inout StoreBatch) throws(StoreError) in try b.untrackQuery(at: location) }
    }

    /// Sets or clears a keepSynced pin.
    public func keepSynced(_ location: QueryLocation, _ on: Bool) throws(StoreError) {
        try commit { (b: inout StoreBatch) throws(StoreError) in try b.keepSynced(location, on) }
    }

    /// Saves the auth credential.
    public func saveAuth(_ token: AuthToken) throws(StoreError) {
        try commit { $0.saveAuth(token) }
    }

    /// Signs out.
    public func clearAuth() throws(StoreError) {
        try commit { $0.clearAuth() }
    }

    /// Records the server time offset.
    public func setServerTimeOffset(_ ms: Double) throws(StoreError) {
        try commit { (b: inout StoreBatch) throws(StoreError) in try b.setServerTimeOffset(ms) }
    }

    /// Queues a transaction.
    @discardableResult
    public func enqueueTransaction(at path: Path, functionName: String, argument: Node, localResult: Node) throws(StoreError) -> QueuedTransaction {
        var tx: QueuedTransaction?
        try commit { (b: inout StoreBatch) throws(StoreError) in
            tx = try b.enqueueTransaction(at: path, functionName: functionName, argument: argument, localResult: localResult)
        }
        return tx!
    }

    /// Updates a queued transaction.
    @discardableResult
    public func updateTransaction(_ id: Int64, localResult: Node? = nil, retryCount: Int? = nil, status: QueuedTransaction.Status? = nil) throws(StoreError) -> QueuedTransaction {
        var tx: QueuedTransaction?
        try commit { (b: inout StoreBatch) throws(StoreError) in
            tx = try b.updateTransaction(id, localResult: localResult, retryCount: retryCount, status: status)
        }
        return tx!
    }

    /// Removes a completed transaction.
    public func completeTransaction(_ id: Int64) throws(StoreError) {
        try commit { (b: inout StoreBatch) throws(StoreError) in try b.completeTransaction(id) }
    }

    /// Queues an onDisconnect operation.
    @discardableResult
    public func queueOnDisconnect(_ action: OnDisconnectOperation.Action, at path: Path) throws(StoreError) -> OnDisconnectOperation {
        var op: OnDisconnectOperation?
        try commit { (b: inout StoreBatch) throws(StoreError) in op = try b.queueOnDisconnect(action, at: path) }
        return op!
    }

    /// Records the server's acknowledgement of an onDisconnect operation.
    public func ackOnDisconnect(_ id: Int64) throws(StoreError) {
        try commit { (b: inout StoreBatch) throws(StoreError) in try b.ackOnDisconnect(id) }
    }

    /// Removes an onDisconnect operation.
    public func removeOnDisconnect(_ id: Int64) throws(StoreError) {
        try commit { (b: inout StoreBatch) throws(StoreError) in try b.removeOnDisconnect(id) }
    }

    // MARK: - Reads

    /// The server's data at `path`, without pending writes.
    ///
    /// Before the background load finishes this decodes only the checkpoint chunks on the
    /// way to `path`.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a needed chunk is damaged.
    public func serverValue(at path: Path) throws(StoreError) -> Node {
        let (loading, reader) = core.withLock { ($0.loading, $0.reader) }
        return try Store.serverValue(loading, reader, at: path)
    }

    static func serverValue(_ loading: LoadingState, _ reader: CheckpointReader?, at path: Path) throws(StoreError) -> Node {
        if loading.cacheLoaded { return loading.state.serverCache.child(at: path) }
        guard let reader else { return loading.serverValue(at: path, base: .empty) }
        let base = try reader.partialCache(for: path).child(at: path)
        return loading.serverValue(at: path, base: base)
    }

    /// The server's data at `path` restricted to the children `keys` (other children may be
    /// missing; `nil` keys: the whole value). Before the background load finishes this
    /// decodes only the checkpoint chunks holding those children.
    static func serverValue(_ loading: LoadingState, _ reader: CheckpointReader?, at path: Path,
                            children keys: Set<ChildKey>?) throws(StoreError) -> Node {
        guard let keys, !loading.cacheLoaded, let reader else { return try serverValue(loading, reader, at: path) }
        let base = try reader.partialCache(forChildren: keys, of: path).child(at: path)
        return loading.serverChildren(keys, at: path, base: base)
    }

    /// The data at `path` as the user sees it: server data with pending writes applied and
    /// their server values resolved as listeners see them (a timestamp estimated when the
    /// write was committed — or, for writes pending at open, when the store opened — as the
    /// local clock plus the server time offset; an increment on the local number then).
    ///
    /// The same overlay answers ``query(_:at:includePending:)`` and every listener, so the
    /// three always agree.
    public func value(at path: Path) throws(StoreError) -> Node {
        if let (owner, rest) = path.splitAtPriority {
            // A priority belongs to its (local) node; see StoreState.localValue(at:now:).
            return try value(at: owner).child(at: rest)
        }
        // A consistent snapshot of the server data and the overlay, read outside the lock
        // (the pending writes as of open that touch `path` reach the overlay first).
        let (loading, reader, overlay) = try core.withLock { (core: inout Core) throws(StoreError) in
            try core.views.restoreRegion(path)
            return (core.loading, core.reader, core.views.tree.visibleWrites)
        }
        let base = try Store.serverValue(loading, reader, at: path)
        return overlay.completeEventCache(at: path, completeServerCache: base) ?? base
    }

    /// The result of a query read.
    public struct QueryResult: Sendable {
        /// The selected children in query order, and the query's value.
        public let window: QueryWindow
        /// Whether the local data for the query is complete (a `value` event may fire).
        public let complete: Bool
    }

    /// Applies `query` at `path` to the local data, with pending writes (server values
    /// resolved) — computed by the same view code listeners get their events from — or, with
    /// `includePending` false, to the server cache alone.
    public func query(_ query: QuerySpec, at path: Path, includePending: Bool = true) throws(StoreError) -> QueryResult {
        try StoreBatch.validate(path)
        if includePending {
            let (window, complete) = try core.withLock { (core: inout Core) throws(StoreError) in
                try core.views.window(query, at: path, core.loading, reader: core.reader)
            }
            return QueryResult(window: window, complete: complete)
        }
        let (loading, reader) = core.withLock { ($0.loading, $0.reader) }
        let server = try Store.serverValue(loading, reader, at: path)
        return QueryResult(window: query.window(of: server), complete: loading.state.isServerCacheComplete(path: path, query: query))
    }

    /// The whole state (loads the whole server cache if it is not resident).
    /// - Throws: the error that stopped the load of the checkpoint cache, if any.
    public func state() throws(StoreError) -> StoreState {
        try fullyLoadedCore().loading.state
    }

    /// The core once the checkpoint cache is loaded and every pending write of the checkpoint
    /// decoded; throws if either failed (a damaged write chunk then poisons the store, as a
    /// damaged cache chunk does).
    func fullyLoadedCore() throws(StoreError) -> Core {
        let loadedCore = try cacheLoadedCore()
        let writes = loadedCore.loading.state.writes
        if writes.isDecoded { return loadedCore }
        // Decoded outside the lock; the chunks are shared with the store's state, which then
        // reads them from memory.
        do throws(StoreError) { try writes.decodeAll() } catch {
            core.withLock {
                if $0.loadError == nil { $0.loadError = error }
                $0.poisoned = $0.poisoned ?? "checkpoint load failed: \(error)"
            }
            throw error
        }
        return core.withLock { $0 }
    }

    /// The core once the checkpoint cache is loaded (pending writes may still be encoded);
    /// throws if loading failed.
    func cacheLoadedCore() throws(StoreError) -> Core {
        try ensureCacheLoaded()
        let core = core.withLock { $0 }
        if let e = core.loadError { throw e }
        return core
    }

    /// Pending writes in write-id order.
    ///
    /// Decodes the writes of the checkpoint the store was opened from that are still encoded
    /// (once). Writes in a damaged chunk of that checkpoint are missing here; ``state()`` and
    /// ``stats()`` throw the damage.
    public func pendingWrites() -> [PendingWrite] {
        let writes = core.withLock { $0.loading.state.writes }
        return writes.allReadable()
    }

    /// Tracked queries by id.
    public func trackedQueries() -> [TrackedQuery] {
        core.withLock { $0.loading.state.trackedQueries.values.sorted { $0.id < $1.id } }
    }

    /// keepSynced pins.
    public func pins() -> Set<QueryLocation> { core.withLock { $0.loading.state.pins } }

    /// The auth credential, or `nil` when signed out.
    public func auth() -> AuthToken? { core.withLock { $0.loading.state.auth } }

    /// Queued transactions in id order.
    public func transactions() -> [QueuedTransaction] {
        core.withLock { $0.loading.state.transactions.values.sorted { $0.id < $1.id } }
    }

    /// onDisconnect operations in id order.
    public func onDisconnectOperations() -> [OnDisconnectOperation] {
        core.withLock { $0.loading.state.onDisconnect.values.sorted { $0.id < $1.id } }
    }

    /// The last known server time offset in ms.
    public func serverTimeOffset() -> Double { core.withLock { $0.loading.state.serverTimeOffsetMs } }

    /// The writer watermarks: per writer, the highest write id applied (a server's
    /// deduplication table, ``StoreBatch/recordWriterWatermark(_:id:)``).
    public func writerWatermarks() -> [String: WriterWatermark] { core.withLock { $0.loading.state.writerWatermarks } }

    /// This store's own writer id, if one was set (``StoreBatch/setWriterIdentity(_:)``).
    public func writerID() -> String? { core.withLock { $0.loading.state.writerID } }

    /// The LSN of the last commit.
    public var lastLSN: LSN { core.withLock { $0.lastLSN } }
}
