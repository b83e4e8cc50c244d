import HearthModel

/// Everything a realtime-database client keeps locally, as one immutable value: the fold of
/// `apply(_:)` over the log's events.
///
/// Copies are cheap (the server cache is a persistent tree; the other collections are
/// copy-on-write), which is how the engine snapshots the state for a checkpoint while writers
/// go on.
///
/// Invariants (``checkInvariants()`` verifies them in tests):
/// - pending writes are sorted by strictly increasing id, and every id is ≤ `lastWriteID`;
/// - the pending writes' path counts (`PendingWriteList.loosePaths`) count exactly the paths
///   the decoded pending writes touch;
/// - `trackedByLocation` is exactly the inverse of `trackedQueries`;
/// - `keyWatchers` holds exactly the tracked queries that `watchesKeys(_:)` selects, at their paths;
/// - an untracked cache entry is never at or below another untracked entry, nor at or below
///   a tracked query's path (tracked data is accounted to its query).
@_spi(HearthInternals) public struct StoreState: Sendable, Equatable {
    /// The server's data as last received, at every location the client has seen.
    public internal(set) var serverCache: Node = .empty
    /// Pending user writes in write-id order.
    ///
    /// A store opened from a checkpoint keeps that checkpoint's writes encoded until they are
    /// needed; this decodes them (once). In a state from ``Store/state()`` every write is
    /// decoded and verified; otherwise writes in a damaged checkpoint chunk are left out here
    /// (``Store/state()`` and ``Store/stats()`` report the damage).
    public var pendingWrites: [PendingWrite] { writes.allReadable() }
    /// The pending writes, some possibly still encoded in the checkpoint.
    var writes = PendingWriteList()
    /// Tracked queries by id.
    public internal(set) var trackedQueries: [Int64: TrackedQuery] = [:]
    /// Tracked query ids by location.
    public internal(set) var trackedByLocation: [QueryLocation: Int64] = [:]
    /// keepSynced pins: never pruned.
    public internal(set) var pins: Set<QueryLocation> = []
    /// The auth credential, or `nil` when signed out.
    public internal(set) var auth: AuthToken?
    /// Queued transactions by id.
    public internal(set) var transactions: [Int64: QueuedTransaction] = [:]
    /// onDisconnect operations by id.
    public internal(set) var onDisconnect: [Int64: OnDisconnectOperation] = [:]
    /// The last known server time offset, in ms (server clock ≈ local clock + offset).
    public internal(set) var serverTimeOffsetMs: Double = 0
    /// Cached server data no tracked query covers, by path, with when it was last written:
    /// each counts as an inactive default query for LRU pruning.
    var untracked = PathTrie<Int64>()
    /// Tracked-query paths with how many tracked queries sit at each.
    var trackedPathCounts: [Path: Int] = [:]
    /// The ids of the filtered tracked queries a server write must look at, by path
    /// (``watchesKeys(_:)``): an inactive incomplete query is in none, so a write costs nothing
    /// for it however many sit at its location.
    var keyWatchers = PathTrie<Set<Int64>>()
    /// Per writer, the highest write id applied (a server's deduplication table).
    package internal(set) var writerWatermarks: [String: WriterWatermark] = [:]
    /// The writer id each pending write was created under (a client store's; exactly-once
    /// writes).
    package internal(set) var writerIdentities = WriterIdentities()
    /// The writer id of the store's newest writes (the last incarnation that wrote), if any.
    package var writerID: String? { writerIdentities.current }

    /// The highest ids ever assigned (ids are never reused, even after removal).
    public internal(set) var lastWriteID: Int64 = 0
    /// See ``lastWriteID``.
    public internal(set) var lastQueryID: Int64 = 0
    /// See ``lastWriteID``.
    public internal(set) var lastTransactionID: Int64 = 0
    /// See ``lastWriteID``.
    public internal(set) var lastOnDisconnectID: Int64 = 0

    /// The empty state of a new store.
    public init() {}

    /// The untracked cache entries (path, last written), in path order.
    public var untrackedEntries: [(path: Path, lastWrite: Int64)] {
        untracked.entries.map { ($0.path, $0.value) }
    }

    // MARK: - The reducer

    /// Applies one event. Total and deterministic: an event that refers to something absent
    /// (acking an unknown write, say) changes nothing, so replaying a log always succeeds.
    public mutating func apply(_ event: StoreEvent) {
        switch event {
        case let .serverOverwrite(path, node, at):
            // In place where the cache's tree is not shared with a snapshot (Node+InPlace.swift).
            serverCache.update(path, with: node)
            noteServerWrite(at: path, time: at)
        case let .serverMerge(path, children, at):
            // Each child written at path + its path, in order; the path above is walked once.
            serverCache.merge(children.map { ($0.path, $0.node) }, at: path)
            noteServerWrite(at: path, time: at)
        case .writeSaved(let write):
            lastWriteID = max(lastWriteID, write.id)
            // In id order from the store; one out of order (only a crafted log holds one)
            // replaces a write with its id or is inserted in order.
            writes.insert(write)
            assert(lastWriteID >= write.id, "lastWriteID bounds every pending write's id")
        case .writeAcked(let id), .writeReverted(let id):
            // An id no write has (a crafted log, or an ack replayed after its write was already
            // removed) is tolerated: the reducer is total, so replay always succeeds.
            writes.remove(id)
        case .trackedQuerySaved(let query):
            saveTrackedQuery(query)
        case let .trackedQueryKeysChanged(id, added, removed):
            // Only filtered queries have keys (`keys` is nil for the others).
            guard var q = trackedQueries[id], var keys = q.keys else { break }
            keys.subtract(removed)
            keys.formUnion(added)
            q.keys = keys
            trackedQueries[id] = q
        case .trackedQueryRemoved(let id):
            removeTrackedQuery(id, keepDataAsUntracked: true)
        case let .pinChanged(location, on):
            if on { pins.insert(location) } else { pins.remove(location) }
        case .authSaved(let token):
            auth = token
        case .authCleared:
            auth = nil
        case .transactionSaved(let tx):
            lastTransactionID = max(lastTransactionID, tx.id)
            transactions[tx.id] = tx
        case .transactionRemoved(let id):
            transactions[id] = nil
        case .onDisconnectSaved(let op):
            lastOnDisconnectID = max(lastOnDisconnectID, op.id)
            onDisconnect[op.id] = op
        case .onDisconnectAcked(let id):
            guard var op = onDisconnect[id] else { break }
            if case .cancel = op.action {
                // The server cancelled everything registered earlier at and below the path.
                for (otherID, other) in onDisconnect where otherID <= id && op.path.contains(other.path) {
                    onDisconnect[otherID] = nil
                }
            } else {
                op.acknowledged = true
                onDisconnect[id] = op
            }
        case .onDisconnectRemoved(let id):
            onDisconnect[id] = nil
        case .serverTimeOffset(let ms):
            serverTimeOffsetMs = ms
        case .sessionStarted(let at):
            for (id, var q) in trackedQueries where q.active {
                q.active = false
                q.lastUse = max(q.lastUse, at)
                trackedQueries[id] = q
                if !StoreState.watchesKeys(q) { watchKeys(of: q, false) }
            }
        case .cachePruned(let result):
            applyPrune(result)
        case .writerWatermark, .writerWatermarksRemoved:
            WriterWatermark.apply(event, to: &writerWatermarks)
        case let .writerIdentity(writer, first):
            // Format 3's form names the store's only writer: every write's.
            writerIdentities.begin(writer, from: first ?? 0)
            // Runs left with no pending write are forgotten, so the table holds at most one
            // run per incarnation that wrote since the oldest pending write.
            writerIdentities.forgetRuns(below: writes.oldestID())
        }
    }

    /// Applies events in order.
    public mutating func apply(_ events: some Sequence<StoreEvent>) {
        for e in events { apply(e) }
    }

    /// Whether some tracked query filters its location (a range or a limit: not
    /// ``QuerySpec/loadsAllData``) whose tracked keys or completeness a server write may change
    /// (``watchesKeys(_:)``).
    var hasKeyWatcher: Bool { !keyWatchers.isEmpty }

    /// Whether a tracked query sits at `path` or above it.
    func isCoveredByTrackedQuery(_ path: Path) -> Bool {
        if trackedPathCounts.isEmpty { return false }
        var keys = path.keys
        while true {
            if trackedPathCounts[Path(keys: keys)] != nil { return true }
            if keys.isEmpty { return false }
            keys.removeLast()
        }
    }

    /// Records that server data was written at `path` at `time` for LRU purposes: data no
    /// tracked query covers becomes (or refreshes) an untracked entry. Entries stay an
    /// antichain — a write above existing entries absorbs them — so their number is bounded
    /// by the number of distinct disjoint locations written, not by the number of writes.
    mutating func noteServerWrite(at path: Path, time: Int64) {
        if isCoveredByTrackedQuery(path) { return }
        // One descent, hashing each key once: the entry at or above `path` (there is at most
        // one, the entries being an antichain) is refreshed; when there is none, the entries
        // below give way to one at `path` (its subtrie replaced).
        untracked.writeRootMost(path, fold: { last, _ in last = max(last, time) }, otherwise: { PathTrie(time) })
        assert(!untracked.hasEntries(below: path), "untracked entries stay an antichain: none below a written path")
    }

    mutating func saveTrackedQuery(_ query: TrackedQuery) {
        lastQueryID = max(lastQueryID, query.id)
        if let old = trackedQueries[query.id], old.location != query.location {
            removeTrackedQuery(query.id, keepDataAsUntracked: false)
        }
        if let other = trackedByLocation[query.location], other != query.id {
            removeTrackedQuery(other, keepDataAsUntracked: false)
        }
        if let old = trackedQueries[query.id], StoreState.watchesKeys(old) != StoreState.watchesKeys(query) {
            watchKeys(of: query, StoreState.watchesKeys(query))
        }
        if trackedQueries[query.id] == nil {
            if StoreState.watchesKeys(query) { watchKeys(of: query, true) }
            trackedPathCounts[query.path, default: 0] += 1
            // The query now covers the untracked data at and below its path.
            untracked.removeEntries(below: query.path)
            if untracked.value(at: query.path) != nil { untracked.set(query.path, nil) }
        }
        trackedQueries[query.id] = query
        trackedByLocation[query.location] = query.id
        assert(trackedByLocation.count == trackedQueries.count, "every tracked query is indexed by its location, once")
        assert(untracked.value(at: query.path) == nil, "no untracked entry sits at a tracked query's path")
    }

    mutating func removeTrackedQuery(_ id: Int64, keepDataAsUntracked: Bool) {
        guard let q = trackedQueries.removeValue(forKey: id) else { return }
        trackedByLocation[q.location] = nil
        if StoreState.watchesKeys(q) { watchKeys(of: q, false) }
        assert(trackedPathCounts[q.path] != nil, "a tracked query's path is counted in trackedPathCounts")
        if let n = trackedPathCounts[q.path] {
            trackedPathCounts[q.path] = n > 1 ? n - 1 : nil
        }
        // Its data stays cached; unless another query covers it, it is now untracked data
        // last used when the query was, so LRU pruning can still reach it. (Whether data is
        // cached there is deliberately not consulted: the decision must not depend on the
        // server cache, which may still be loading when the event is applied — see
        // LoadingState. An entry over empty data costs nothing and is pruned first.)
        if keepDataAsUntracked {
            noteServerWrite(at: q.path, time: q.lastUse)
        }
    }

    /// Whether a server write must look at the tracked query `q`: a filtered query that is
    /// active (its keys follow the window its listener's view shows, as Firebase's
    /// `updateTrackedQueryKeys` follows the served view) or complete (offline it is served exactly
    /// its keys, so a write that may move its window must make it incomplete). A write moves
    /// the window of an inactive incomplete query without anyone looking: its keys still name
    /// whole children the server sent, which is all an incomplete query's keys promise.
    static func watchesKeys(_ q: TrackedQuery) -> Bool {
        !q.query.loadsAllData && (q.active || q.complete)
    }

    /// Adds `q`'s id to (or removes it from) ``keyWatchers`` at its path.
    private mutating func watchKeys(of q: TrackedQuery, _ on: Bool) {
        keyWatchers.updateValue(at: q.path) { ids in
            var set = ids ?? []
            ids = nil  // `set` is then the only reference: changed in place
            if on { set.insert(q.id) } else { set.remove(q.id) }
            if !set.isEmpty { ids = set }
        }
    }

    mutating func applyPrune(_ result: PruneResult) {
        serverCache = StoreState.pruning(serverCache, by: result)
        for path in result.prunedPaths where untracked.value(at: path) != nil { untracked.set(path, nil) }
        for id in result.removedQueryIDs {
            removeTrackedQuery(id, keepDataAsUntracked: false)
        }
    }

    /// `cache` with `result`'s pruned paths removed but for the kept paths below them.
    static func pruning(_ cache: Node, by result: PruneResult) -> Node {
        // The kept paths strictly below each pruned path, found in a trie: O(depth) per path
        // plus the kept paths found (a scan of every kept path per pruned path is quadratic).
        // Nested kept paths are idempotent here (the inner one's data is inside the outer
        // one's, read from the same cache), so only the topmost ones are copied.
        var cache = cache
        var keptTrie = PathTrie<Bool>()
        for keep in result.keptPaths { keptTrie.set(keep, true) }
        for path in result.prunedPaths {
            var kept = Node.empty
            for keep in keptTrie.entries(below: path, topmostOnly: true) {
                guard let rel = path.relativePath(to: keep) else {
                    assertionFailure("the trie's entries below \(path) lie below it")
                    continue
                }
                kept = kept.updating(rel, with: cache.child(at: keep))
            }
            cache = cache.updating(path, with: kept)
        }
        return cache
    }

    // MARK: - Invariants

    /// Verifies the documented invariants; returns the first violation.
    public func checkInvariants() -> String? {
        let pendingWrites = self.pendingWrites
        for i in pendingWrites.indices.dropFirst() where pendingWrites[i - 1].id >= pendingWrites[i].id {
            return "pending writes out of order at \(i)"
        }
        if let last = pendingWrites.last, last.id > lastWriteID { return "write id beyond lastWriteID" }
        var looseWritePaths = PathTrie<Int>()
        for w in writes.loose { PendingWriteList.count(w, by: 1, in: &looseWritePaths) }
        if looseWritePaths != writes.loosePaths { return "pending-write path counts wrong" }
        if trackedByLocation.count != trackedQueries.count { return "tracked index size mismatch" }
        for (loc, id) in trackedByLocation where trackedQueries[id]?.location != loc {
            return "tracked index wrong for \(loc)"
        }
        var counts: [Path: Int] = [:]
        for q in trackedQueries.values { counts[q.path, default: 0] += 1 }
        if counts != trackedPathCounts { return "tracked path counts wrong" }
        var watchers = PathTrie<Set<Int64>>()
        for q in trackedQueries.values where StoreState.watchesKeys(q) {
            watchers.updateValue(at: q.path) { ids in ids = (ids ?? []).union([q.id]) }
        }
        if watchers != keyWatchers { return "key watchers wrong" }
        for (path, _) in untracked.entries {
            if untracked.hasEntries(below: path) { return "untracked entries nested below \(path)" }
            if isCoveredByTrackedQuery(path) { return "untracked entry \(path) at or below a tracked query" }
        }
        return nil
    }
}
