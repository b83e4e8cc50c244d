extension CheckpointEncoder {
    /// The key of ``Summary/liveBytes`` for the body being written (its id is not known yet).
    static let ownFile: UInt64 = 0

    /// Totals of one encoding, for stats and the pruning estimate.
    struct Summary: Sendable {
        var bodyBytes: UInt64 = 0
        var rawCacheBytes: Int = 0
        var storedCacheBytes: Int = 0
        var chunkCount: Int = 0
        /// Cache chunks copied as stored bytes from the previous checkpoint (``reuse``), and
        /// encoded anew.
        var copiedChunks = 0
        /// See ``copiedChunks``.
        var encodedChunks = 0
        /// Copies refused because the old chunk's bytes did not match their CRC (or could not
        /// be read): those nodes were encoded instead.
        var rejectedCopies = 0
        /// Pending-write chunks copied from the previous checkpoint (``previousWrites``).
        var copiedWriteChunks = 0
        /// Pending-write chunks taken as prepared in memory (``preparedWrites``).
        var preparedWriteChunks = 0
        /// The write chunks written, with their writes: what the next checkpoint may copy.
        var writeRuns: [WriteChunkMemo.Run] = []
        /// Cache chunks referenced where they are, in an earlier checkpoint file
        /// (``CheckpointEncoder/referenceReused``; counted in ``copiedChunks`` too).
        var referencedChunks = 0
        /// Stored bytes of the cache chunks this checkpoint reads, by the id of the file holding
        /// them (this body's own under ``ownFile``): what keeps each file live, and the rest of
        /// each file is dead bytes (Store+Maintenance.swift).
        var liveBytes: [UInt64: Int] = [:]
        /// Raw bytes of the cache chunks copied, and encoded anew (``copiedChunks``).
        var copiedRawBytes = 0
        /// See ``copiedRawBytes``.
        var encodedRawBytes = 0
        /// Stored bytes of the order index runs (format 5): part of what the cache costs on
        /// disk, for the next checkpoint's estimate.
        var orderIndexBytes = 0
        /// With ``CheckpointEncoder/recordOrigins``: the cache chunks written, and what each
        /// encodes (by chunk index), for the next checkpoint to copy the unchanged ones.
        var chunks: [CheckpointFormat.Chunk] = []
        /// See ``chunks``.
        var origins: [ChunkOrigins.Origin?] = []
        /// With ``CheckpointEncoder/standIns``: stand-ins the encoder met where it encodes, not
        /// at a chunk it references — never, as CheckpointReader+Skeleton.swift argues; the
        /// store gives up a checkpoint that has any (Store+ChunkCheckpoint.swift).
        var standInsEncoded = 0
    }
}
