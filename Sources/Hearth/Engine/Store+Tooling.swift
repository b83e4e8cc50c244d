import HearthLog

// Small public entry points for tools (`hearth apply`, `hearth verify`).

extension Store {
    /// Returns once every commit up to `lsn` is durable (synced), syncing now if needed.
    /// Lets a caller that commits under `.batched` or `.buffered` learn when its commits
    /// survive a power loss.
    public func waitUntilDurable(_ lsn: LSN) throws(StoreError) {
        do { try log.waitUntilDurable(lsn) } catch { throw .log(error) }
    }

    /// Reads a checkpoint's trailer and directory and decodes every cache chunk, verifying
    /// every checksum and the structure; returns the number of chunks. Reads only.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` naming the damage.
    @_spi(HearthInternals) public static func verifyCheckpoint(_ checkpoint: Checkpoint) throws(StoreError) -> Int {
        try verifyCheckpoint(checkpoint, progress: nil)
    }

    /// ``verifyCheckpoint(_:)``, calling `progress` with (chunks done, chunks) after each chunk.
    package static func verifyCheckpoint(
        _ checkpoint: Checkpoint,
        progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws(StoreError) -> Int {
        try readingCheckpoint { () throws(CheckpointError) in
            let reader = try CheckpointReader(checkpoint)
            try reader.verifyAllChunks(progress: progress)
            return reader.directory.chunks.count
        }
    }
}
