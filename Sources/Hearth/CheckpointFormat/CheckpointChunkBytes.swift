@_spi(HearthInternals) import HearthLog

/// Reads one chunk of a checkpoint body — node chunks and pending-write chunks alike — and
/// returns its raw bytes: the stored bytes are read, their masked CRC32C checked, and inflated
/// when the chunk is compressed (FORMAT.md §7). No length is trusted beyond the directory
/// entry that gave it, and a failure says which chunk through `corrupt`.
enum CheckpointChunkBytes {
    static func read(
        _ checkpoint: Checkpoint, offset: UInt64, storedLength: Int, rawLength: Int, compressed: Bool, crc: UInt32,
        corrupt: (String) -> CheckpointError
    ) throws(CheckpointError) -> [UInt8] {
        let stored: [UInt8]
        do { stored = try checkpoint.read(offset: offset, count: storedLength) } catch { throw .log(error) }
        guard CRC32C.mask(CRC32C.checksum(stored)) == crc else { throw corrupt("checksum mismatch") }
        guard compressed else { return stored }
        guard let inflated = RawDeflate.decompress(stored, rawCount: rawLength) else {
            throw corrupt("does not inflate")
        }
        return inflated
    }
}
