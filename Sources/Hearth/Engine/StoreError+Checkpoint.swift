// The engine's edge for the checkpoint layer's errors: a ``CheckpointError`` becomes the
// ``StoreError`` a caller of the store sees, here and nowhere else.

@_spi(HearthInternals) import HearthLog

extension StoreError {
    /// The store's error for a checkpoint failure: damage keeps its file, offset and reason
    /// (``StoreError/corruptCheckpoint(file:offset:reason:)``), a failed read its log error.
    init(_ error: CheckpointError) {
        switch error {
        case let .corrupt(file, offset, reason): self = .corruptCheckpoint(file: file, offset: offset, reason: reason)
        case .log(let e): self = .log(e)
        }
    }
}

/// Runs `body`, a read of the checkpoint layer, and reports its failure as a ``StoreError``:
/// the one place the engine maps ``CheckpointError``.
func readingCheckpoint<T>(_ body: () throws(CheckpointError) -> T) throws(StoreError) -> T {
    do { return try body() } catch { throw StoreError(error) }
}
