import HearthLog
import HearthModel

/// The mutations of one atomic commit. Build it inside `Store.commit(durability:_:)`: the
/// events it collects are appended as one log record (all or nothing after a crash) and
/// applied in order. Each method validates against the state as it stands, including the
/// batch's own earlier mutations, and throws a ``StoreError`` for anything invalid; a batch
/// that throws commits nothing.
public struct StoreBatch {
    /// The events collected so far, in order.
    @_spi(HearthInternals) public internal(set) var events: [StoreEvent] = []
    /// The store's clock when the batch began (ms).
    public let now: Int64
    let base: StoreState
    /// The server data at a path as of the batch's start (the cache may still be loading).
    let serverValueAtBase: (Path) -> Node

    // The batch's own effects, so that later mutations in it see earlier ones.
    private(set) var nextWriteID: Int64
    /// The writer id of the writes saved from now on, as the batch sees it
    /// (``saveWrite(_:at:writer:)``).
    var newWritesWriter: String?
    private var nextQueryID: Int64
    var nextTransactionID: Int64
    var nextOnDisconnectID: Int64
    /// The writes this batch saved, by id, and the ids it acked or reverted: what
    /// ``pendingWrite(_:)`` answers from in O(1). A scan of ``events`` instead cost O(events)
    /// per look-up, and a client's commit of K acks looks up each one's write: O(K²).
    private(set) var writesAdded: [Int64: PendingWrite] = [:]
    private(set) var writesRemoved: Set<Int64> = []
    /// The server time offset this batch set last (``setServerTimeOffset(_:)``), if it set one.
    private(set) var serverTimeOffsetSet: Double?
    var queries: [QueryLocation: TrackedQuery?] = [:]
    /// Filtered queries whose keys this batch sets explicitly: the client says what its view
    /// holds, so ``recordTrackedKeyChanges()`` leaves them alone.
    var keysSetExplicitly: Set<QueryLocation> = []
    var transactions: [Int64: QueuedTransaction?] = [:]
    var onDisconnect: [Int64: OnDisconnectOperation?] = [:]
    /// Server data for single views, applied with the batch's events and not persisted
    /// (StoreBatch+Listens.swift).
    var viewOperations: [ViewOperation] = []
    /// Damage met by a read that cannot throw (``pendingWrite(_:)``): the commit fails with it.
    var damage: StoreError?

    init(base: StoreState, now: Int64, serverValue: @escaping (Path) -> Node = { _ in .empty }) {
        self.base = base
        self.now = now
        self.serverValueAtBase = serverValue
        nextWriteID = base.lastWriteID + 1
        newWritesWriter = base.writerID
        nextQueryID = base.lastQueryID + 1
        nextTransactionID = base.lastTransactionID + 1
        nextOnDisconnectID = base.lastOnDisconnectID + 1
    }

    // MARK: - Validation
    //
    // Everything committed must decode again at replay, so paths and nodes are checked here,
    // at the boundary, against the limits the decoders enforce (FORMAT.md §12.2–12.3).

    static func validate(_ path: Path) throws(StoreError) {
        do { try path.validate() } catch { throw .invalidPath(error) }
    }

    /// `path` is evaluated only for the error: a merge's children are many, and joining each
    /// one's path to the merge's cost more than checking its node.
    static func validate(_ node: Node, at path: @autoclosure () -> Path) throws(StoreError) {
        if node.nestingExceeds(NodeCodec.maxDepth) {
            throw .invalidData(.tooDeep(path: path().description))
        }
    }

    static func validate(_ children: [ChildUpdate], at path: Path) throws(StoreError) {
        for child in children {
            try validate(child.path)
            try validate(child.node, at: path.appending(child.path))
        }
    }

    // MARK: - Server cache

    /// Replaces the server's data at `path` (as received from the server).
    /// - Throws: ``StoreError/invalidPath(_:)`` or ``StoreError/invalidData(_:)``.
    public mutating func applyServerOverwrite(_ node: Node, at path: Path) throws(StoreError) {
        events.append(try StoreBatch.serverOverwrite(node, at: path, now: now))
    }

    /// The event of a server overwrite, its path and data checked (``applyServerOverwrite(_:at:)``).
    static func serverOverwrite(_ node: Node, at path: Path, now: Int64) throws(StoreError) -> StoreEvent {
        try validate(path)
        try validate(node, at: path)
        return .serverOverwrite(path: path, node: node, at: now)
    }

    /// The event of a server merge, its paths and data checked; nil for an empty merge
    /// (``applyServerMerge(_:at:)``).
    static func serverMerge(_ children: [ChildUpdate], at path: Path, now: Int64) throws(StoreError) -> StoreEvent? {
        try validate(path)
        try validate(children, at: path)
        return children.isEmpty ? nil : .serverMerge(path: path, children: children, at: now)
    }

    /// Merges children into the server's data at `path` (an empty merge records nothing).
    /// - Throws: ``StoreError/invalidPath(_:)`` or ``StoreError/invalidData(_:)``.
    public mutating func applyServerMerge(_ children: [ChildUpdate], at path: Path) throws(StoreError) {
        if let merge = try StoreBatch.serverMerge(children, at: path, now: now) { events.append(merge) }
    }

    /// The server data at `path` as this batch sees it: the store's, with the batch's own
    /// server overwrites and merges applied.
    public func serverValue(at path: Path) -> Node {
        LoadingState.project(events, onto: serverValueAtBase(path), at: path)
    }

    // MARK: - Pending writes

    /// Saves a user write; returns its id (strictly greater than every earlier id).
    /// - Throws: ``StoreError/invalidPath(_:)`` for a path under `.info`.
    @discardableResult
    public mutating func saveWrite(_ operation: PendingWrite.Operation, at path: Path) throws(StoreError) -> Int64 {
        try StoreBatch.validateWrite(operation, at: path)
        return saveValidatedWrite(operation, at: path)
    }

    /// Checks a user write as ``saveWrite(_:at:)`` does: its paths
    /// (``validateWritePaths(_:at:)``) and its data's depth. Needs no state.
    /// ``Store/saveWrite(_:at:durability:)`` checks the depth instead while it encodes the data
    /// before taking the store's lock (``EventCodec/inspectedWriteBody(_:at:)``, which also
    /// says whether the data holds a server value; WriteInspectionTests compare the verdicts).
    static func validateWrite(_ operation: PendingWrite.Operation, at path: Path) throws(StoreError) {
        try validateWritePaths(operation, at: path)
        switch operation {
        case .set(let node): try validate(node, at: path)
        case .update(let children):
            for child in children { try validate(child.node, at: path.appending(child.path)) }
        }
    }

    /// The part of ``validateWrite(_:at:)`` that checks paths: the write's (valid and
    /// writable) and a merge's children's.
    static func validateWritePaths(_ operation: PendingWrite.Operation, at path: Path) throws(StoreError) {
        try StoreBatch.validate(path)
        do { try path.validateWritable() } catch { throw .invalidPath(error) }
        if case .update(let children) = operation {
            for child in children { try validate(child.path) }
        }
    }

    /// ``saveWrite(_:at:)`` for a write ``validateWrite(_:at:)`` accepted.
    mutating func saveValidatedWrite(_ operation: PendingWrite.Operation, at path: Path) -> Int64 {
        let id = nextWriteID
        assert(id > base.lastWriteID, "a new write's id is above every id the state has seen")
        nextWriteID += 1
        let write = PendingWrite(id: id, path: path, operation: operation)
        writesAdded[id] = write
        events.append(.writeSaved(write))
        return id
    }

    private func hasWrite(_ id: Int64) throws(StoreError) -> Bool {
        try storedPendingWrite(id) != nil
    }

    /// Removes a write the server acknowledged (Firebase's `removeUserWrite`), leaving the
    /// server cache as it is: the server's data for that location arrives on its own, from a
    /// listen. ``applyAckedWrite(_:)``, which a sync client calls, also caches the write's value
    /// as the server's first, and then calls this.
    public mutating func ackWrite(_ id: Int64) throws(StoreError) {
        guard try hasWrite(id) else { throw .unknownWrite(id: id) }
        writesRemoved.insert(id)
        events.append(.writeAcked(id: id))
    }

    /// Removes a write the server rejected (or the client abandoned).
    public mutating func revertWrite(_ id: Int64) throws(StoreError) {
        guard try hasWrite(id) else { throw .unknownWrite(id: id) }
        writesRemoved.insert(id)
        events.append(.writeReverted(id: id))
    }

    // MARK: - Tracked queries

    /// The tracked query at a location, as this batch sees it.
    public func trackedQuery(at location: QueryLocation) -> TrackedQuery? {
        if let q = queries[location] { return q }
        return base.trackedQuery(at: location)
    }

    /// Creates or updates the tracked query at `location`; fields left `nil` keep their value
    /// (a new query starts incomplete, inactive, with no keys). Marks it used now.
    ///
    /// Marking a filtered query complete without `keys` records the keys of its window over
    /// the server data at that moment (including this batch's own server writes): offline, a
    /// complete filtered query is served exactly its tracked children.
    @discardableResult
    public mutating func trackQuery(
        at location: QueryLocation, complete: Bool? = nil, active: Bool? = nil, keys: Set<ChildKey>? = nil
    ) throws(StoreError) -> TrackedQuery {
        try StoreBatch.validate(location.path)
        var q: TrackedQuery
        if let existing = trackedQuery(at: location) {
            q = existing
        } else {
            q = TrackedQuery(id: nextQueryID, location: location, complete: false, active: false, lastUse: now)
            nextQueryID += 1
        }
        if let complete { q.complete = complete }
        if let active { q.active = active }
        if let keys, !location.query.loadsAllData {
            q.keys = keys
            keysSetExplicitly.insert(location)
        } else if complete == true, !location.query.loadsAllData {
            q.keys = Set(location.query.window(of: serverValue(at: location.path)).keys)
        } else if !location.query.loadsAllData, trackedQuery(at: location) == nil {
            // A new filtered query's view starts from what is known complete at its path
            // (Firebase sets the keys when the view is created): its window over that.
            let known = base.persistedServerCache(
                at: location.path, query: location.query, serverValue: serverValue(at: location.path))
            q.keys = Set(location.query.window(of: known?.node ?? .empty).keys)
        }
        q.lastUse = max(q.lastUse, now)
        queries[location] = q
        events.append(.trackedQuerySaved(q))
        return q
    }

    /// Stops tracking the query at `location` (its cached data stays, prunable by recency).
    public mutating func untrackQuery(at location: QueryLocation) throws(StoreError) {
        guard let q = trackedQuery(at: location) else { throw .unknownQuery(location) }
        queries[location] = .some(nil)
        events.append(.trackedQueryRemoved(id: q.id))
    }

    // MARK: - Pins, auth, time

    /// Sets or clears a keepSynced pin. Pinned data is never pruned.
    public mutating func keepSynced(_ location: QueryLocation, _ on: Bool) throws(StoreError) {
        try StoreBatch.validate(location.path)
        events.append(.pinChanged(location, on: on))
    }

    /// Saves the auth credential.
    public mutating func saveAuth(_ token: AuthToken) {
        events.append(.authSaved(token))
    }

    /// Signs out.
    public mutating func clearAuth() {
        events.append(.authCleared)
    }

    /// Records the server time offset (ms).
    /// - Throws: ``StoreError/invalidOption(_:)`` for a non-finite offset.
    public mutating func setServerTimeOffset(_ ms: Double) throws(StoreError) {
        guard ms.isFinite else { throw .invalidOption("server time offset must be finite") }
        serverTimeOffsetSet = ms
        events.append(.serverTimeOffset(ms: ms))
    }

    mutating func append(_ event: StoreEvent) { events.append(event) }
}
