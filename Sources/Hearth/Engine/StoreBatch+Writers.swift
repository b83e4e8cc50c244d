import HearthModel

// Writer identity and writer watermarks: what exactly-once delivery of writes needs on each
// side. A client store keeps its own random writer id; a server store keeps, per writer, the
// highest write id it applied, committed in the same batch as the write so that a crash keeps
// both or neither (FORMAT.md §11.7).

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
    public mutating func recordWriterWatermark(_ writer: String, id: Int64) throws(StoreError) {
        try StoreBatch.validateWriter(writer)
        guard id >= 0 else { throw .invalidWriter("write id \(id) is negative") }
        events.append(.writerWatermark(writer: writer, id: id, at: now))
    }

    /// Forgets the watermarks of `writers` (evicted to bound the table); unknown writers
    /// change nothing. An empty list records nothing.
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long writer id.
    public mutating func removeWriterWatermarks(_ writers: [String]) throws(StoreError) {
        for w in writers { try StoreBatch.validateWriter(w) }
        guard !writers.isEmpty else { return }
        events.append(.writerWatermarksRemoved(writers: writers))
    }

    /// Sets this store's own writer id (a client does so once, with a random id).
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long id.
    public mutating func setWriterIdentity(_ id: String) throws(StoreError) {
        try StoreBatch.validateWriter(id)
        events.append(.writerIdentity(id))
    }

    /// This store's writer id as the batch sees it.
    public var writerID: String? {
        for case .writerIdentity(let id) in events.reversed() { return id }
        return base.writerID
    }
}
