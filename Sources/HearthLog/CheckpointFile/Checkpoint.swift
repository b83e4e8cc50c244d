// A checkpoint's file, as a handle. Opening a store verifies only the 64-byte header; the body is read
// on demand, either whole with its checksum verified or by random access without verification (the
// engine lays the body out as independently checksummed chunks).

/// The checkpoint a store was opened with (or that was just installed).
public final class Checkpoint: Sendable {
    /// Every record with LSN ≤ this is included in the checkpoint's state.
    public let lsn: LSN
    /// Body length in bytes.
    public let bodySize: UInt64
    /// File name inside the store directory.
    public let fileName: String
    /// Checkpoint id (the hex number in the file name).
    public let id: UInt64
    /// CRC32C of the body, masked as stored.
    let bodyCRC: UInt32
    let file: any StoreFile
    /// The earlier checkpoint files this one reads chunks from (FORMAT.md §6), ascending by id;
    /// each a handle of its own, header verified.
    public let referenced: [Checkpoint]

    init(header: CheckpointHeader, file: any StoreFile, referenced: [Checkpoint] = []) {
        lsn = header.lsn
        bodySize = header.bodyLength
        fileName = Layout.checkpointName(header.id)
        id = header.id
        bodyCRC = header.bodyCRC
        self.file = file
        self.referenced = referenced
    }

    /// The checkpoint file with id `id`: this one, or one it references; nil for any other.
    public func file(id: UInt64) -> Checkpoint? {
        id == self.id ? self : referenced.first { $0.id == id }
    }

    deinit { try? file.close() }

    /// Reads `count` bytes of the body starting at body offset `offset`, without verifying the
    /// body checksum. Throws `invalidArgument` if the range exceeds the body.
    public func read(offset: UInt64, count: Int) throws(LogError) -> [UInt8] {
        guard count >= 0, offset <= bodySize, UInt64(count) <= bodySize - offset else {
            throw .invalidArgument("checkpoint read \(offset)+\(count) beyond body of \(bodySize) bytes")
        }
        let at = UInt64(Layout.checkpointHeaderSize) + offset
        let b = try logIO { try file.read(at: at, count: count) }
        guard b.count == count else {
            throw .corruption(file: fileName, offset: at, reason: "checkpoint file is shorter than its header says")
        }
        return b
    }

    /// Reads the whole body and verifies its CRC32C. Throws `corruption` on a mismatch.
    public func readBody() throws(LogError) -> [UInt8] {
        guard bodySize <= UInt64(Int.max) else { throw .invalidArgument("checkpoint body too large to read whole") }
        let body = try read(offset: 0, count: Int(bodySize))
        guard CRC32C.mask(CRC32C.checksum(body)) == bodyCRC else {
            throw .corruption(
                file: fileName, offset: UInt64(Layout.checkpointHeaderSize), reason: "checkpoint body checksum mismatch"
            )
        }
        return body
    }
}

/// Streams a checkpoint body to its file. Handed to the closure of ``Log/installCheckpoint(lsn:writer:)``.
public final class CheckpointWriter {
    let file: any StoreFile
    /// Bytes written so far.
    public private(set) var bytesWritten: UInt64 = 0
    var crc: UInt32 = 0
    /// The live checkpoint files the body reads chunks from (``keep(_:)``).
    public private(set) var kept: Set<UInt64> = []

    init(file: any StoreFile) { self.file = file }

    /// Marks checkpoint file `id` — the current checkpoint's or one it references — as read by
    /// this body: the new MANIFEST references it (FORMAT.md §6), so it stays live. Any other id
    /// fails the install (`invalidArgument`) before anything durable changes.
    public func keep(_ id: UInt64) { kept.insert(id) }

    /// Appends bytes to the body.
    public func write(_ bytes: [UInt8]) throws(LogError) {
        try logIO { try file.write(bytes, at: UInt64(Layout.checkpointHeaderSize) + bytesWritten) }
        crc = CRC32C.extend(crc, bytes)
        bytesWritten += UInt64(bytes.count)
    }
}
