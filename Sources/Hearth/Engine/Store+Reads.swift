// Reads: server data, local data (pending writes overlaid), query windows, and the parts of the
// state as of the last commit.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// The server's data at `path`, without pending writes.
    ///
    /// While the whole cache is not resident (after open, between maintenance passes) this
    /// decodes only the checkpoint chunks on the way to `path`.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a needed chunk is damaged.
    public func serverValue(at path: Path) throws(StoreError) -> Node {
        try core.withLock { $0.persisted }.serverValue(at: path)
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
        let (persisted, overlay) = try core.withLock { (core: inout Core) throws(StoreError) in
            try core.views.restoreRegion(path)
            return (core.persisted, core.views.tree.visibleWrites)
        }
        let base = try persisted.serverValue(at: path)
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
    public func query(_ query: QuerySpec, at path: Path, includePending: Bool = true) throws(StoreError) -> QueryResult
    {
        try StoreBatch.validate(path)
        if includePending {
            let (window, complete) = try core.withLock { (core: inout Core) throws(StoreError) in
                try core.views.window(query, at: path, core.persisted)
            }
            return QueryResult(window: window, complete: complete)
        }
        let persisted = core.withLock { $0.persisted }
        let server = try persisted.serverValue(at: path)
        return QueryResult(
            window: query.window(of: server),
            complete: persisted.loading.state.isServerCacheComplete(path: path, query: query))
    }

    /// The whole state (loads the whole server cache if it is not resident: the server cache is
    /// part of it; ``state(at:)`` reads one location's).
    /// - Throws: the error that stopped the load of the checkpoint cache, if any.
    @_spi(HearthInternals) public func state() throws(StoreError) -> StoreState {
        try fullyLoadedCore().loading.state
    }

    /// The state with only the server data at `path` in its server cache (at `path`; nothing
    /// beside it): while the cache is not resident, only the checkpoint chunks on the way to
    /// `path` are decoded, as ``serverValue(at:)`` decodes them. Every other part is the whole
    /// state's, every pending write decoded.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a chunk it reads, or a
    ///   pending write's, is damaged.
    @_spi(HearthInternals) public func state(at path: Path) throws(StoreError) -> StoreState {
        try decodeCheckpointWrites()
        let persisted = core.withLock { $0.persisted }
        var state = persisted.loading.state
        state.serverCache = Node.empty.updating(path, with: try persisted.serverValue(at: path))
        return state
    }

    /// Pending writes in write-id order.
    ///
    /// Decodes the writes of the checkpoint the store was opened from that are still encoded
    /// (once). Writes in a damaged chunk of that checkpoint are missing here; ``stats()`` throws
    /// the damage.
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
    package func writerWatermarks() -> [String: WriterWatermark] { core.withLock { $0.loading.state.writerWatermarks } }

    /// The writer id of this store's newest writes (the last incarnation of a sync client
    /// that wrote, ``StoreBatch/saveWrite(_:at:writer:)``), if any.
    package func writerID() -> String? { core.withLock { $0.loading.state.writerID } }

    /// The writer id each pending write was created under (``WriterIdentities``).
    package func writerIdentities() -> WriterIdentities { core.withLock { $0.loading.state.writerIdentities } }

    /// The LSN of the last commit.
    public var lastLSN: LSN { core.withLock { $0.lastLSN } }
}
