@_spi(HearthInternals) import HearthLog
import HearthModel

/// The engine's checkpoint body, format 1 (FORMAT.md §"Checkpoint body").
///
/// ```
/// body     := chunk* directory trailer
/// chunk    := one cache piece, NodeCodec-encoded, raw-DEFLATEd when that is smaller
/// directory:= the directory fields, raw-DEFLATEd when that is smaller
/// trailer  := 40 bytes: magic "HEARTHCP" | u32 version | u64 directory offset |
///             u32 directory stored length | u32 directory raw length | u8 directory compressed |
///             3 zero bytes | u32 masked CRC32C of the stored directory | u32 masked CRC32C of
///             the trailer's first 36 bytes
/// ```
///
/// The directory holds everything but the server cache (ids, auth, offset, pending writes,
/// tracked queries, pins, transactions, onDisconnect, untracked entries) and the cache's
/// index: every chunk's place in the tree, byte range, sizes and CRC, plus the priorities of
/// nodes that were split across chunks. Opening a store reads the trailer and the directory
/// only; cache chunks are decoded when a read needs them or by the background load.
enum CheckpointFormat {
    static let magic: [UInt8] = Array("HEARTHCP".utf8)
    static let version: UInt32 = 1
    static let trailerSize = 40
    /// Target raw size of one cache chunk.
    static let chunkTarget = 64 * 1024
    /// Chunks and the directory are compressed only when that saves at least this fraction.
    static let compressionWorthwhile = 0.95

    /// One piece of the server cache in the checkpoint.
    struct Chunk: Sendable, Hashable {
        enum Kind: Sendable, Hashable {
            /// The whole node at `path` (with its priority).
            case whole
            /// The children of the node at `path` with keys in `first...last`.
            case range(first: ChildKey, last: ChildKey)
        }

        let path: Path
        let kind: Kind
        let offset: UInt64
        let storedLength: Int
        let rawLength: Int
        let compressed: Bool
        /// Masked CRC32C of the stored bytes.
        let crc: UInt32

        /// Whether this chunk holds data needed to read `target`.
        func isRelevant(to target: Path) -> Bool {
            if let rel = path.relativePath(to: target) {
                switch kind {
                case .whole:
                    return true
                case let .range(first, last):
                    guard let key = rel.front else { return true }
                    return ChildKey.compare(first, key) <= 0 && ChildKey.compare(key, last) <= 0
                }
            }
            return target.contains(path)
        }

        /// Whether this chunk holds data needed to read the children `keys` of `parent`:
        /// the same as ``isRelevant(to:)`` for some `parent/key`, in one pass.
        func isRelevant(toChildren keys: Set<ChildKey>, of parent: Path) -> Bool {
            if path == parent {
                switch kind {
                case .whole:
                    return true
                case let .range(first, last):
                    return keys.contains { ChildKey.compare(first, $0) <= 0 && ChildKey.compare($0, last) <= 0 }
                }
            }
            if parent.contains(path) {
                // Below the parent: needed when under one of the children.
                return keys.contains(path.keys[parent.depth])
            }
            // On the way to the parent (or elsewhere): as for the parent itself.
            return isRelevant(to: parent)
        }
    }

    /// Everything in the directory.
    struct Directory: Sendable {
        var state: StoreState  // with an empty server cache
        var priorities: [(path: Path, priority: Priority)]
        var chunks: [Chunk]
    }

    /// The result of reading a checkpoint's trailer and directory.
    struct Opened: Sendable {
        let directory: Directory
        let directoryBytes: Int
    }
}

/// Why a checkpoint body could not be read.
struct CheckpointFormatError: Error, CustomStringConvertible {
    let offset: UInt64
    let reason: String
    var description: String { "checkpoint body offset \(offset): \(reason)" }
}
