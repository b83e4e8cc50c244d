import HearthModel

// Writer identities and writer watermarks: what exactly-once delivery of writes needs on each
// side. A client store keeps the random writer id each of its writes was created under; a
// server store keeps, per writer, the highest write id it applied, committed in the same batch
// as the write so that a crash keeps both or neither (FORMAT.md §11.7).

extension StoreBatch {
    static func validateWriter(_ writer: String) throws(StoreError) {
        guard !writer.isEmpty, writer.utf8.count <= EventCodec.maxWriterLength else {
            throw .invalidWriter(
                "writer id of \(writer.utf8.count) UTF-8 bytes (allowed 1…\(EventCodec.maxWriterLength))")
        }
    }

    /// Records that `writer`'s writes up to `id` are applied (the watermark never goes back:
    /// a lower id changes nothing but the time). Time is the batch's ``now``.
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long writer id or a
    ///   negative write id.
    package mutating func recordWriterWatermark(_ writer: String, id: Int64) throws(StoreError) {
        events.append(try StoreBatch.writerWatermark(writer, id: id, now: now))
    }

    /// The event of ``recordWriterWatermark(_:id:)``, its writer and id checked.
    static func writerWatermark(_ writer: String, id: Int64, now: Int64) throws(StoreError) -> StoreEvent {
        try validateWriter(writer)
        guard id >= 0 else { throw .invalidWriter("write id \(id) is negative") }
        return .writerWatermark(writer: writer, id: id, at: now)
    }

    /// The event of ``removeWriterWatermarks(_:)``, its writers checked; nil for none.
    static func writerWatermarksRemoved(_ writers: [String]) throws(StoreError) -> StoreEvent? {
        for w in writers { try validateWriter(w) }
        return writers.isEmpty ? nil : .writerWatermarksRemoved(writers: writers)
    }

    /// Forgets the watermarks of `writers` (evicted to bound the table); unknown writers
    /// change nothing. An empty list records nothing.
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long writer id.
    package mutating func removeWriterWatermarks(_ writers: [String]) throws(StoreError) {
        if let removed = try StoreBatch.writerWatermarksRemoved(writers) { events.append(removed) }
    }

    /// Saves a user write created under `writer` (``saveWrite(_:at:)`` otherwise): a client's
    /// writer id for exactly-once writes, fresh each time it opens its store
    /// (``WriterIdentities``). When the store's newest writes are not `writer`'s, the batch
    /// first records that the writes from this one on are (one event per incarnation, in the
    /// same commit as its first write); writes saved earlier keep their writer ids.
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long writer id, and what
    ///   ``saveWrite(_:at:)`` throws.
    @discardableResult
    package mutating func saveWrite(
        _ operation: PendingWrite.Operation, at path: Path, writer: String
    ) throws(StoreError) -> Int64 {
        try StoreBatch.validateWriter(writer)
        try StoreBatch.validateWrite(operation, at: path)
        if newWritesWriter != writer {
            events.append(.writerIdentity(writer: writer, firstWriteID: nextWriteID))
            newWritesWriter = writer
        }
        return saveValidatedWrite(operation, at: path)
    }

    /// Saves a set under `writer` (as ``saveWrite(_:at:writer:)``) that stays hidden in this
    /// run: the views hold it as a pending write but raise no events for it and no local read
    /// shows it, until it leaves (acknowledged or reverted) — Firebase's transaction run with
    /// `withLocalEvents: false`, whose listeners see only the server's committed data. The
    /// log records it as any write (it is sent again after a restart, visible then).
    /// - Throws: what ``saveWrite(_:at:writer:)`` throws.
    @discardableResult
    package mutating func saveHiddenWrite(_ node: Node, at path: Path, writer: String) throws(StoreError) -> Int64 {
        let id = try saveWrite(.set(node), at: path, writer: writer)
        viewOperations.append(.hideWrite(id))
        return id
    }
}
