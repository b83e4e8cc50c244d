// The value of the state's writer-watermark table: the highest write id applied for one writer.

/// The highest write id a server applied for one writer, and when it last advanced.
@_spi(HearthInternals) public struct WriterWatermark: Sendable, Hashable {
    /// The highest write id applied.
    public let id: Int64
    /// When it last advanced (store clock, ms): the eviction order.
    public let at: Int64

    /// Creates a watermark.
    public init(id: Int64, at: Int64) {
        self.id = id
        self.at = at
    }
}

extension WriterWatermark {
    /// Applies a watermark event to a table: a watermark never goes back (it is the max of every
    /// id and time recorded for it); a removal forgets it. Other events change nothing.
    static func apply(_ event: StoreEvent, to marks: inout [String: WriterWatermark]) {
        switch event {
        case let .writerWatermark(writer, id, at):
            let old = marks[writer]
            marks[writer] = WriterWatermark(id: max(old?.id ?? id, id), at: max(old?.at ?? at, at))
        case .writerWatermarksRemoved(let writers):
            for w in writers { marks[w] = nil }
        default:
            break
        }
    }
}
