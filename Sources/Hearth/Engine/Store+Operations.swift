// The one-operation conveniences: each a commit of one ``StoreBatch`` call.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// Replaces the server's data at `path`.
    @discardableResult
    public func applyServerOverwrite(
        _ node: Node, at path: Path, durability: Durability? = nil
    ) throws(StoreError) -> LSN {
        if options.readOnly { throw .log(.readOnly(path: directory)) }
        try StoreBatch.validate(path)
        return try commitServerEvent({ .serverOverwrite(path: path, node: node, at: $0) }, durability: durability)
    }

    /// Merges children into the server's data at `path`.
    @discardableResult
    public func applyServerMerge(
        _ children: [ChildUpdate], at path: Path, durability: Durability? = nil
    ) throws(StoreError) -> LSN {
        if options.readOnly { throw .log(.readOnly(path: directory)) }
        try StoreBatch.validate(path)
        for child in children { try StoreBatch.validate(child.path) }
        // An empty merge records nothing (``StoreBatch/applyServerMerge(_:at:)``).
        if children.isEmpty { return try commit(durability: durability) { _ in }.lsn }
        return try commitServerEvent({ .serverMerge(path: path, children: children, at: $0) }, durability: durability)
    }

    /// Commits the one server-data event `make` builds for the commit's time, its paths
    /// already validated: its data is checked for depth and encoded in one walk before the
    /// lock (``EventCodec/inspectedServerEvent(_:)``), where ``StoreBatch``'s methods check it
    /// in one walk and the commit encodes it in another, under the lock. The same record,
    /// state, views and errors as a batch of that one call, except which of two errors is
    /// reported when a merge has both a bad child path and a child nesting too deep (here the
    /// path, found first).
    private func commitServerEvent(
        _ make: (Int64) -> StoreEvent, durability: Durability?
    ) throws(StoreError) -> LSN {
        let now = options.clock()
        let event = make(now)
        let (encoded, tooDeep) = EventCodec.inspectedServerEvent(event)
        if let tooDeep { throw .invalidData(.tooDeep(path: tooDeep.description)) }
        return try commit(tier: durability ?? options.durability, now: now, firstEncoded: encoded, serverEvent: event) {
            (b: inout StoreBatch) throws(StoreError) in
            b.events.append(event)
        }.lsn
    }

    /// A log record whose payload is shorter than this is stored uncompressed, whatever
    /// ``Options/logCompressionLevel`` says (`Log.Options.rawPayloadLimit`; FORMAT.md §5.2 lets
    /// a writer store any record raw). Deflating a record costs zlib ~8–15 µs per stream (reset,
    /// Huffman trees) plus ~25 ns a byte, more CPU than the bytes cost to write, and saves them
    /// only until the next checkpoint, which compresses the same data again in its chunks.
    /// LevelDB's and SQLite's logs store every record raw.
    ///
    /// Raw records leave the disk bound as it was: checkpoints fall due, and the cap's log term
    /// is counted, in raw bytes (Store+Maintenance.swift). What the limit keeps compressed are
    /// large records: a 10 MiB leaf (Firebase's storage-engine tests write them) stored raw
    /// would count in full against a 10 MiB cap until the next checkpoint and get the cache it
    /// belongs to pruned; deflated, it costs what it will cost in the checkpoint. 64 KiB is
    /// 1/160 of the default cap: every record of a fill of chat-sized data (~330 bytes an
    /// operation) is raw, a megabyte leaf is not.
    /// Measured against deflating every record of 1 KiB or more: instructions per durable write
    /// from 16 writers −18% (callgrind), the 50 MiB cache fill's throughput +15–20%.
    static let rawRecordLimit = 64 << 10

    /// Removes a write the server acknowledged, in a commit of its own
    /// (``StoreBatch/ackWrite(_:)``: the server cache is left as it is).
    public func ackWrite(_ id: Int64, durability: Durability? = nil) throws(StoreError) {
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in try b.ackWrite(id) }
    }

    /// Removes a write the server rejected.
    public func revertWrite(_ id: Int64, durability: Durability? = nil) throws(StoreError) {
        try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in try b.revertWrite(id) }
    }

    /// Creates or updates a tracked query (see ``StoreBatch/trackQuery(at:complete:active:keys:)``).
    @discardableResult
    public func trackQuery(
        at location: QueryLocation, complete: Bool? = nil, active: Bool? = nil, keys: Set<ChildKey>? = nil
    ) throws(StoreError) -> TrackedQuery {
        var q: TrackedQuery?
        try commit { (b: inout StoreBatch) throws(StoreError) in
            q = try b.trackQuery(at: location, complete: complete, active: active, keys: keys)
        }
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
    public func enqueueTransaction(
        at path: Path, functionName: String, argument: Node, localResult: Node
    ) throws(StoreError) -> QueuedTransaction {
        var tx: QueuedTransaction?
        try commit { (b: inout StoreBatch) throws(StoreError) in
            tx = try b.enqueueTransaction(
                at: path, functionName: functionName, argument: argument, localResult: localResult)
        }
        return tx!
    }

    /// Updates a queued transaction.
    @discardableResult
    public func updateTransaction(
        _ id: Int64, localResult: Node? = nil, retryCount: Int? = nil, status: QueuedTransaction.Status? = nil
    ) throws(StoreError) -> QueuedTransaction {
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
    public func queueOnDisconnect(
        _ action: OnDisconnectOperation.Action, at path: Path
    ) throws(StoreError) -> OnDisconnectOperation {
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
}
