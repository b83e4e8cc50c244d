// The checkpoint layer's own failure: a damaged checkpoint body, or the log's I/O failing under
// a read. The engine maps it to ``StoreError`` at its edge (`Engine/StoreError+Checkpoint.swift`).

@_spi(HearthInternals) import HearthLog

/// What can go wrong reading a checkpoint body (``CheckpointReader``, ``CheckpointChunkBytes``,
/// a pending-write chunk): damage found at a byte offset of a file, or a failed read.
enum CheckpointError: Error, Sendable, Equatable {
    /// The body of checkpoint `file` is damaged at byte `offset`, for `reason`.
    case corrupt(file: String, offset: UInt64, reason: String)
    /// Reading the checkpoint failed in the log layer (I/O).
    case log(LogError)
}
