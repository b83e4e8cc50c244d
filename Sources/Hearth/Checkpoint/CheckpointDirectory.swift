import HearthModel

// What reading a checkpoint's directory gives: the state it holds (with an empty server
// cache) and where its chunks are. Here, above State, rather than with the byte layout in
// CheckpointFormat/, because it holds a `StoreState`, and State reads CheckpointFormat's
// write-chunk entries.

extension CheckpointFormat {
    /// Everything in the directory.
    struct Directory: Sendable {
        var state: StoreState  // with an empty server cache (and, format 2, lazy pending writes)
        var priorities: [(path: Path, priority: Priority)]
        var chunks: [Chunk]
        var writeChunks: [WriteChunk] = []
        /// The order indexes (format 5), at most one per location and ordering.
        var orderIndexes: [OrderIndex] = []
    }

    /// The result of reading a checkpoint's trailer and directory.
    struct Opened: Sendable {
        let directory: Directory
        let directoryBytes: Int
    }
}
