@_spi(HearthInternals) import HearthLog
import HearthModel

/// The engine's checkpoint body, format 6 (FORMAT.md §7.1; formats 1 to 5 are still read).
///
/// ```
/// body     := chunk* write-chunk* order-index-run* directory trailer
/// chunk    := one cache piece, NodeCodec-encoded, raw-DEFLATEd when that is smaller
/// directory:= the directory fields, raw-DEFLATEd when that is smaller
/// trailer  := 40 bytes: magic "HEARTHCP" | u32 version | u64 directory offset |
///             u32 directory stored length | u32 directory raw length | u8 directory compressed |
///             3 zero bytes | u32 masked CRC32C of the stored directory | u32 masked CRC32C of
///             the trailer's first 36 bytes
/// ```
///
/// The directory holds everything but the server cache and the pending writes (ids, auth,
/// offset, tracked queries, pins, transactions, onDisconnect, untracked entries), the index of
/// the pending writes' chunks (id range, path range and path filter of each) and the cache's
/// index: every chunk's place in the tree, byte range, sizes and CRC, plus the priorities of
/// nodes that were split across chunks. Opening a store reads the trailer and the directory
/// only; cache chunks are decoded when a read needs them or by a load of the whole cache, write
/// chunks when a read, view or write touches a location they may hold writes for (or when the
/// whole list is needed: a checkpoint, pruning, ``Store/state()``). Format 1 kept the pending
/// writes in the directory itself, decoded at open; format 3 adds the writer id and the writer
/// watermarks to the directory's event batch; format 4 replaces that one writer id by the runs
/// of write ids and the writer id each run was created under; format 5 adds order indexes
/// (CheckpointFormat+OrderIndex.swift): a large location's children sorted by an ordering a
/// tracked window uses, so that such a window reads a few runs rather than every child; format
/// 6 lets a cache chunk's entry name an earlier checkpoint file that holds its bytes (the chunk
/// is referenced where it is rather than copied).
enum CheckpointFormat {
    static let magic: [UInt8] = Array("HEARTHCP".utf8)
    /// The body format this build writes.
    static let version: UInt32 = 6
    /// The body formats this build reads.
    static let readableVersions: ClosedRange<UInt32> = 1...6
    /// The first body format whose cache chunks may lie in an earlier checkpoint file.
    static let referencesVersion: UInt32 = 6
    /// Target raw size of one chunk of pending writes (small: the first read after open decodes
    /// the chunks that may hold writes on its path).
    static let writeChunkTarget = 16 * 1024
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
        /// The checkpoint file holding the stored bytes (format 6): 0 for this body, else the id
        /// of an earlier checkpoint file this one references (`offset` is then in its body).
        var file: UInt64 = 0

        /// The id of the file holding the stored bytes, for a chunk of checkpoint `own`.
        func fileID(own: UInt64) -> UInt64 { file == 0 ? own : file }

        /// The same chunk, its bytes at `offset` of file `file` (0: the body it is listed in).
        func at(offset: UInt64, file: UInt64) -> Chunk {
            Chunk(
                path: path, kind: kind, offset: offset, storedLength: storedLength, rawLength: rawLength,
                compressed: compressed, crc: crc, file: file)
        }

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

    /// One run of pending writes in the checkpoint (body format 2): consecutive writes in id
    /// order, stored as an event batch of `writeSaved` events, and what the directory says of
    /// them so that a reader can tell, without decoding, whether they may touch a location.
    struct WriteChunk: Sendable, Hashable {
        let firstID: Int64
        let lastID: Int64
        let count: Int
        /// The least and greatest path written (a write's path; for an update, its location),
        /// in ``pathOrder(_:_:)``.
        let minPath: Path
        let maxPath: Path
        /// Every written path and every ancestor of one (below the root).
        let filter: PathFilter
        let offset: UInt64
        let storedLength: Int
        let rawLength: Int
        let compressed: Bool
        /// Masked CRC32C of the stored bytes.
        let crc: UInt32

        /// The same chunk stored at `offset`.
        func at(offset: UInt64) -> WriteChunk {
            WriteChunk(
                firstID: firstID, lastID: lastID, count: count, minPath: minPath, maxPath: maxPath, filter: filter,
                offset: offset, storedLength: storedLength, rawLength: rawLength, compressed: compressed, crc: crc)
        }

        /// Whether a write of this chunk may be at exactly `path` (false is certain).
        func mayHoldWrite(at path: Path) -> Bool {
            CheckpointFormat.pathOrder(minPath, path) <= 0 && CheckpointFormat.pathOrder(path, maxPath) <= 0
                && filter.mayContain(.exact, path)
        }

        /// Whether a write of this chunk may be at or below `path` (false is certain).
        func mayHoldWrites(atOrBelow path: Path) -> Bool {
            if path.isRoot { return count > 0 }
            // The paths at or below `path` are one interval of the order: from `path` up to
            // (not including) the first path after it that does not extend it.
            guard CheckpointFormat.pathOrder(maxPath, path) >= 0 else { return false }
            if CheckpointFormat.pathOrder(minPath, path) > 0 && !path.contains(minPath) { return false }
            return filter.mayContain(.prefix, path)
        }
    }

    /// The order of paths the write chunks' path ranges use: key by key in Firebase key order,
    /// a path before every path that extends it. Every subtree is an interval of it.
    static func pathOrder(_ a: Path, _ b: Path) -> Int {
        let n = min(a.keys.count, b.keys.count)
        for i in 0..<n {
            let c = ChildKey.compare(a.keys[i], b.keys[i])
            if c != 0 { return c }
        }
        return a.keys.count < b.keys.count ? -1 : (a.keys.count > b.keys.count ? 1 : 0)
    }

    /// A Bloom filter of paths (FORMAT.md §7.1): no false negatives, about 1% false positives.
    struct PathFilter: Sendable, Hashable {
        enum Kind: UInt8 {
            /// A path written exactly.
            case exact = 0x45
            /// A path at or above a written path (below the root).
            case prefix = 0x50
        }

        /// Probes per entry.
        static let probes: UInt32 = 6
        /// Bits per distinct entry when built.
        static let bitsPerEntry = 10

        let bits: [UInt8]

        init(bits: [UInt8]) { self.bits = bits }

        /// A filter holding `entries`.
        init(_ entries: Set<Entry>) {
            var bits = [UInt8](repeating: 0, count: max(8, (entries.count * PathFilter.bitsPerEntry + 7) / 8))
            let m = UInt32(bits.count * 8)
            for e in entries {
                PathFilter.forEachBit(e.hash, m) { bits[Int($0 >> 3)] |= 1 << UInt8($0 & 7) }
            }
            self.bits = bits
        }

        /// One entry: a kind and a path, by its hash.
        struct Entry: Hashable {
            let hash: UInt64
            init(_ kind: Kind, _ path: Path) { hash = PathFilter.hash(kind, path) }
            init(hash: UInt64) { self.hash = hash }
        }

        func mayContain(_ kind: Kind, _ path: Path) -> Bool {
            guard !bits.isEmpty else { return false }
            let m = UInt32(bits.count * 8)
            var all = true
            PathFilter.forEachBit(PathFilter.hash(kind, path), m) { bit in
                if bits[Int(bit >> 3)] & (1 << UInt8(bit & 7)) == 0 { all = false }
            }
            return all
        }

        /// FNV-1a 64 of the kind byte, then each key's UTF-8 bytes followed by 0xFF.
        static func hash(_ kind: Kind, _ path: Path) -> UInt64 {
            var h = FNV(kind)
            for key in path.keys { h.add(key) }
            return h.value
        }

        /// The running FNV-1a 64 of ``hash(_:_:)``: after each key it is the hash of the path
        /// up to that key.
        private struct FNV {
            private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

            init(_ kind: Kind) { add(kind.rawValue) }

            mutating func add(_ key: ChildKey) {
                for b in key.string.utf8 { add(b) }
                add(0xFF)
            }

            private mutating func add(_ b: UInt8) {
                value ^= UInt64(b)
                value = value &* 0x0000_0100_0000_01b3
            }
        }

        /// Bit i (0 ≤ i < probes) is (h1 + i·h2) mod m in 32-bit arithmetic, where h1 is the low
        /// half of the hash and h2 the high half with its lowest bit set.
        static func forEachBit(_ hash: UInt64, _ m: UInt32, _ body: (UInt32) -> Void) {
            let h1 = UInt32(truncatingIfNeeded: hash)
            let h2 = UInt32(truncatingIfNeeded: hash >> 32) | 1
            for i in 0..<probes { body((h1 &+ i &* h2) % m) }
        }

        /// The entries for a write at `path`: the path exactly, and it and its ancestors below
        /// the root as prefixes.
        ///
        /// The prefixes' hashes come from one pass over the path: FNV-1a is sequential, so a
        /// prefix's hash is the running hash after its last key. (Hashing each prefix as a new
        /// path would cost O(depth²) bytes and an array per prefix: 12.5 M of the 53 M
        /// instructions that preparing `HearthBench writes16`'s write chunks took.)
        static func entries(forWriteAt path: Path, into set: inout Set<Entry>) {
            var exact = FNV(.exact)
            var prefix = FNV(.prefix)
            for key in path.keys {
                exact.add(key)
                prefix.add(key)
                set.insert(Entry(hash: prefix.value))
            }
            set.insert(Entry(hash: exact.value))
        }
    }
}

/// Why a checkpoint body could not be read.
struct CheckpointFormatError: Error, CustomStringConvertible {
    let offset: UInt64
    let reason: String
    var description: String { "checkpoint body offset \(offset): \(reason)" }
}
