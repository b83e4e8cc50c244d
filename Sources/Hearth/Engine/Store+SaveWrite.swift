import HearthLog
import HearthModel

// A user write's own commit path: the write validated, encoded and deflated before the store's
// lock, only its id added under it. The same record, state, views and errors as a batch of that
// one `saveWrite` call (StoreBatch+Writers.swift), at a fraction of the time under the lock —
// the time every other committer waits.

extension Store {
    /// Saves a user write; returns its id.
    @discardableResult
    public func saveWrite(
        _ operation: PendingWrite.Operation, at path: Path, durability: Durability? = nil
    ) throws(StoreError) -> Int64 {
        try saveWrite(operation, at: path, writer: nil, durability: durability).id
    }

    /// Saves a user write created under `writer` — ``StoreBatch/saveWrite(_:at:writer:)`` in a
    /// commit of its own — and returns its id and its record's LSN (what
    /// ``waitUntilDurable(_:)`` takes when `durability` leaves the sync to the caller). The
    /// client's path for every write an app makes.
    ///
    /// The first write under a writer other than the store's newest records the writer in the
    /// same commit, through a batch: once per opening of a client's store.
    package func saveWrite(
        _ operation: PendingWrite.Operation, at path: Path, writer: String?, durability: Durability? = nil
    ) throws(StoreError) -> (id: Int64, lsn: LSN) {
        if let writer { try StoreBatch.validateWriter(writer) }
        // Checked before the lock: validation reads no state, and under the lock it made every
        // other committer wait for it.
        try StoreBatch.validateWritePaths(operation, at: path)
        // Encoded before the lock too: under it, only the id is added to these bytes. The same
        // walk checks the data's depth and says whether it holds server values (the views
        // resolve them under the lock): `StoreBatch.validateWrite`'s depth check, without a
        // walk of its own.
        let (body, serverValue, tooDeep) = EventCodec.inspectedWriteBody(operation, at: path)
        if let tooDeep { throw .invalidData(.tooDeep(path: tooDeep.description)) }
        let plain = !serverValue
        if options.readOnly { throw .log(.readOnly(path: directory)) }
        // And deflated before it, if at all: under the lock the id's few bytes are stored ahead
        // of this stream (SplitPayload), where deflating the whole record made every committer
        // wait. A write under `rawRecordLimit` is stored raw (the log's pool returns nil).
        let deflatedBody = log.deflateTail(body.bytes)
        let tier = durability ?? options.durability
        let now = options.clock()
        let queued = try core.withLock { (core: inout Core) throws(StoreError) -> (id: Int64, queued: Queued)? in
            // A new writer's first write carries the writer's event: the batch path below.
            if let writer, core.loading.state.writerID != writer { return nil }
            return try queueWrite(
                operation, at: path, body: body, deflatedBody: deflatedBody, plain: plain, tier: tier, now: now, &core)
        }
        guard let queued else {
            guard let writer else { preconditionFailure("only a new writer's first write takes the batch path") }
            var id: Int64 = 0
            let result = try commit(durability: durability) { (b: inout StoreBatch) throws(StoreError) in
                id = try b.saveWrite(operation, at: path, writer: writer)
            }
            return (id, result.lsn)
        }
        try awaitTier(queued.queued)
        return (queued.id, queued.queued.pending.lsn)
    }
}
