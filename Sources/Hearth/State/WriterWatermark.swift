// The value of the state's writer-watermark table: the highest write id applied for one writer.

/// The highest write id a server applied for one writer, and when it last advanced.
public struct WriterWatermark: Sendable, Hashable {
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
