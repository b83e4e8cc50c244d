import Dispatch
@_spi(HearthInternals) import HearthLog
import HearthModel

/// Writes a ``StoreState`` as a checkpoint body (``CheckpointFormat``), streaming chunk by
/// chunk so that memory stays bounded by one chunk plus the directory.
struct CheckpointEncoder {
    /// zlib level of the cache chunks.
    let compressionLevel: Int32
    /// zlib level of the pending-write chunks (``Store/Options/pendingWriteCompressionLevel``).
    let writeCompressionLevel: Int32
    /// The body format written: ``CheckpointFormat/version``, or 1 (tests: stores written by
    /// earlier builds).
    var bodyVersion: UInt32 = CheckpointFormat.version
    /// The chunks of the previous checkpoint whose stored bytes may be copied for the nodes
    /// that are still the very ones decoded from them (ChunkOrigins.swift); nil encodes all.
    var reuse: ChunkOrigins?
    /// Whether a reused chunk is referenced where it is — in the previous checkpoint or a file
    /// it references — rather than copied (body format 6; FORMAT.md §7.1). The body then keeps
    /// those files live (``Summary/liveBytes``).
    var referenceReused = false
    /// Files whose reused chunks are copied even so: their dead bytes are being reclaimed
    /// (Store+Maintenance.swift), so the new checkpoint must not keep them.
    var compactFiles: Set<UInt64> = []
    /// The previous checkpoint's pending-write chunks and their writes: a chunk whose writes
    /// are all still pending, unchanged, is copied (CheckpointEncoder+Writes.swift).
    var previousWrites: WriteChunkMemo?
    /// Pending-write chunks prepared since the previous checkpoint, with their stored bytes,
    /// in id order (PreparedWriteChunks.swift): each whose writes are all still pending,
    /// unchanged, is written as prepared instead of being encoded and deflated here.
    var preparedWrites: [WriteChunkMemo.Run] = []
    /// Whether the cache holds stand-ins for chunks of ``reuse`` (CheckpointReader+Skeleton.swift):
    /// a reused chunk is then referenced without reading it (its node is no value to encode
    /// instead), and one whose file is compacted but cannot be read back is referenced all the
    /// same (its file stays, as any file a chunk is read from does).
    var standIns = false
    /// Order indexes copied as they are, by location and ordering (``CopiedRun``): for a cache
    /// with ``standIns``, the indexes of the locations no event since the previous checkpoint
    /// reached, whose children are not decoded.
    var copiedOrderIndexes: [CheckpointFormat.OrderIndex.Target: [CopiedRun]] = [:]
    /// Whether to record what each cache chunk encodes (``Summary/origins``): for a cache that
    /// stays resident after this checkpoint, whose next checkpoint can then copy every chunk
    /// whose nodes are unchanged (ChunkOrigins.swift).
    var recordOrigins = false
    /// How many cache chunks may be compressed on a second thread ahead of the one being
    /// written (DeflateAhead.swift); 0 compresses each on the encoding thread. The bytes
    /// written are the same either way.
    var deflateAhead = 4
    /// The serial queue ``deflateAhead`` compresses on (tests); a new one per encoding when nil.
    var deflateWorker: DispatchQueue?

    /// A cache chunk encoded or copied, waiting in ``DeflateAhead`` for its stored bytes to be
    /// written: its directory entry but for the stored bytes' offset, length, compression and
    /// CRC, and what it encodes (``recordOrigins``).
    struct Pending {
        let path: Path
        let kind: CheckpointFormat.Chunk.Kind
        let rawLength: Int
        /// Copied from the previous checkpoint (else encoded anew).
        let copied: Bool
        let origin: ChunkOrigins.Origin?
        /// Referenced where it is: its entry, the file named (no bytes are written).
        var reference: CheckpointFormat.Chunk? = nil
    }

    /// How a chunk of the previous checkpoint is reused: referenced where it is, or copied
    /// (its stored bytes, verified).
    enum Reuse {
        case reference(CheckpointFormat.Chunk)
        case copy([UInt8])
    }

    /// An encoder writing cache chunks at zlib level `compressionLevel` and pending-write
    /// chunks at `writeCompressionLevel` (the same when nil).
    init(compressionLevel: Int32, writeCompressionLevel: Int32? = nil) {
        self.compressionLevel = compressionLevel
        self.writeCompressionLevel = writeCompressionLevel ?? compressionLevel
    }

    /// Encodes `state` and passes the body's bytes to `write` in order: the cache chunks, the
    /// pending-write chunks (format 2), the order index runs (format 5), the directory, the
    /// trailer.
    /// - Throws: only what `write` throws (encoding itself cannot fail).
    func encode<E: Error>(_ state: StoreState, write: ([UInt8]) throws(E) -> Void) throws(E) -> Summary {
        var summary = Summary()
        var offset: UInt64 = 0
        var written: UInt64 = 0
        func put(_ bytes: [UInt8]) throws(E) {
            try write(bytes)
            written += UInt64(bytes.count)
        }
        let (chunks, priorities) = try writeCache(state.serverCache, offset: &offset, summary: &summary, write: put)
        if recordOrigins { summary.chunks = chunks }
        let writeChunks =
            bodyVersion >= 2
            ? try writePendingWrites(state.pendingWrites, offset: &offset, summary: &summary, write: put) : []
        let orderIndexes =
            bodyVersion >= 5
            ? try writeOrderIndexes(state, chunks: chunks, offset: &offset, summary: &summary, write: put) : []
        summary.orderIndexBytes = orderIndexes.reduce(0) { $0 + $1.runs.reduce(0) { $0 + $1.storedLength } }
        assert(offset == written, "the directory starts where the chunks end")

        let directoryRaw = encodeDirectory(
            state, priorities: priorities, chunks: chunks, writeChunks: writeChunks, orderIndexes: orderIndexes)
        let (directoryStored, directoryCompressed) = store(directoryRaw)
        try put(directoryStored)

        try put(
            trailer(
                directoryAt: offset, stored: directoryStored, rawCount: directoryRaw.count,
                compressed: directoryCompressed))

        summary.chunkCount = chunks.count
        summary.bodyBytes = offset + UInt64(directoryStored.count) + UInt64(CheckpointFormat.trailerSize)
        assert(summary.bodyBytes == written, "the summary's body size is the bytes written")
        return summary
    }

    /// Writes the server cache as chunks from `offset` on and returns their directory entries
    /// and the priorities of the nodes split across chunks.
    func writeCache<E: Error>(
        _ cache: Node, offset: inout UInt64, summary: inout Summary, write: ([UInt8]) throws(E) -> Void
    ) throws(E) -> (chunks: [CheckpointFormat.Chunk], priorities: [(path: Path, priority: Priority)]) {
        var chunks: [CheckpointFormat.Chunk] = []
        var priorities: [(path: Path, priority: Priority)] = []

        // Every chunk goes through `ahead` (DeflateAhead.swift): encoded ones are compressed
        // on its worker while the walk goes on, and all are written here, in walk order.
        var ahead = DeflateAhead<Pending>(depth: deflateAhead, level: compressionLevel, worker: deflateWorker)
        func finish(_ stored: StoredChunk, _ chunk: Pending) throws(E) {
            if let reference = chunk.reference {
                chunks.append(reference)
                summary.referencedChunks += 1
                summary.copiedChunks += 1
                summary.liveBytes[reference.file, default: 0] += reference.storedLength
                summary.rawCacheBytes += reference.rawLength
                summary.storedCacheBytes += reference.storedLength
                summary.copiedRawBytes += reference.rawLength
                if let origin = chunk.origin { summary.origins.append(origin) }
                return
            }
            summary.liveBytes[Self.ownFile, default: 0] += stored.bytes.count
            try write(stored.bytes)
            chunks.append(
                CheckpointFormat.Chunk(
                    path: chunk.path, kind: chunk.kind, offset: offset, storedLength: stored.bytes.count,
                    rawLength: chunk.rawLength, compressed: stored.compressed, crc: stored.crc))
            offset += UInt64(stored.bytes.count)
            summary.rawCacheBytes += chunk.rawLength
            summary.storedCacheBytes += stored.bytes.count
            if chunk.copied {
                summary.copiedChunks += 1
                summary.copiedRawBytes += chunk.rawLength
            } else {
                summary.encodedChunks += 1
                summary.encodedRawBytes += chunk.rawLength
            }
            if let origin = chunk.origin { summary.origins.append(origin) }
        }
        func queue(_ bytes: DeflateAhead<Pending>.Bytes, _ chunk: Pending) throws(E) {
            ahead.append(bytes, chunk)
            while let (stored, chunk) = ahead.next() { try finish(stored, chunk) }
        }

        func emit(
            _ path: Path, _ kind: CheckpointFormat.Chunk.Kind, _ raw: [UInt8],
            origin: @autoclosure () -> ChunkOrigins.Origin
        ) throws(E) {
            try queue(
                ahead.deflate(raw),
                Pending(
                    path: path, kind: kind, rawLength: raw.count, copied: false,
                    origin: recordOrigins ? origin() : nil))
        }

        /// How chunk `index` of the previous checkpoint is reused: referenced where it is, or
        /// (format before 6, or a file being compacted) copied. Either way its stored bytes are
        /// read and verified against its CRC first, so that a damaged chunk is never carried
        /// into the new checkpoint while its node is in memory; nil (counted) when they cannot
        /// be read or do not match: the caller encodes instead.
        func verified(_ index: Int, in reuse: ChunkOrigins) -> Reuse? {
            let file = reuse.fileID(index)
            let old = reuse.chunks[index]
            let referenced = referenceReused && bodyVersion >= CheckpointFormat.referencesVersion
            // A stand-in is referenced as the chunk it stands for: nothing else can be written.
            if standIns, referenced, !compactFiles.contains(file) {
                return .reference(old.at(offset: old.offset, file: file))
            }
            guard let stored = reuse.storedBytes(index) else {
                summary.rejectedCopies += 1
                return standIns ? .reference(old.at(offset: old.offset, file: file)) : nil
            }
            if referenced, !compactFiles.contains(file) { return .reference(old.at(offset: old.offset, file: file)) }
            return .copy(stored)
        }

        /// Queues chunk `index` of the previous checkpoint as a chunk of this one (after the
        /// chunks queued before it): its entry naming where it is, or its verified stored
        /// bytes to be written. `origin`: what the chunk encodes in this checkpoint's state (the
        /// nodes found the same as the old origin's, not the old origin: that would keep older
        /// trees alive).
        func copy(
            _ index: Int, _ reused: Reuse, from reuse: ChunkOrigins, origin: @autoclosure () -> ChunkOrigins.Origin
        ) throws(E) {
            let old = reuse.chunks[index]
            var pending = Pending(
                path: old.path, kind: old.kind, rawLength: old.rawLength, copied: true,
                origin: recordOrigins ? origin() : nil)
            switch reused {
            case .reference(let entry):
                pending.reference = entry
                try queue(.ready(StoredChunk(bytes: [], compressed: old.compressed, crc: old.crc)), pending)
            case .copy(let stored):
                try queue(.ready(StoredChunk(bytes: stored, compressed: old.compressed, crc: old.crc)), pending)
            }
        }

        /// Emits a run of consecutive children of the node at `path` as one range chunk: a
        /// children node (no priority) whose child encodings are already in `parts`.
        /// `parent`: the children of the node at `path` (the run's origin: its children within
        /// the run's keys).
        func emitRun(
            _ path: Path, _ parts: inout [(key: ChildKey, bytes: [UInt8])], _ parent: ChildMap, _ size: inout Int
        ) throws(E) {
            guard let first = parts.first, let last = parts.last else { return }
            var w = ByteWriter(capacity: size + 16)
            w.u8(0x07)
            w.varint(parts.count)
            for part in parts {
                w.string(part.key.string)
                w.raw(part.bytes)
            }
            try emit(path, .range(first: first.key, last: last.key), w.bytes, origin: .span(parent))
            parts.removeAll(keepingCapacity: true)
            size = 0
        }

        /// A leaf's encoding when it fits in a chunk, for its parent to embed; else emitted as a
        /// whole chunk at `path` (nil).
        func leaf(_ node: Node, at path: @autoclosure () -> Path) throws(E) -> [UInt8]? {
            let raw = NodeCodec.encode(node)
            if raw.count <= CheckpointFormat.chunkTarget { return raw }
            try emit(path(), .whole, raw, origin: .whole(node))
            return nil
        }

        // One pass over the cache, each node encoded once (FORMAT.md §7.1's splitting rule):
        // returns the node's encoding when it fits in one chunk, for its parent to embed; else
        // emits its children as runs of about `chunkTarget` bytes (recursing into any child
        // that does not fit) and returns nil. With `reuse`, a node (or a run of children) that
        // is still the one a chunk of the previous checkpoint decoded to is copied as that
        // chunk, and counts as split (FORMAT.md §7.1, "Reused chunks").
        //
        // `reuse`: the old chunks, when `path` leads to some (a chunk's path or an ancestor of
        // one). Only paths on the way to an old chunk can hold one, and none below a path that
        // does not lead to one (the set of such paths is closed upwards): so a node off those
        // ways passes nil to its children, and only the nodes on them are looked up — not
        // every node of the cache, whose path hashing would be a tenth of a checkpoint. A node on
        // them asks once which of its children lead on (`leading`), by key: building and hashing
        // each child's path instead would cost about a twelfth of the walk.
        //
        // `triedWhole`: the caller found the node's encoding longer than a chunk already.
        func process(
            _ node: Node, at path: Path, reuse: ChunkOrigins?, triedWhole: Bool = false
        ) throws(E) -> [UInt8]? {
            if let reuse, let index = reuse.wholeChunk(at: path, for: node), let stored = verified(index, in: reuse) {
                try copy(index, stored, from: reuse, origin: .whole(node))
                return nil
            }
            if standIns && CheckpointReader.isStandIn(node) { summary.standInsEncoded += 1 }
            if node.isLeaf { return try leaf(node, at: path) }
            // Off the old chunks' ways, a node whose whole encoding fits in a chunk is encoded
            // in one walk — the bytes the walk below gives it, since nothing under it can split
            // — where that walk encodes every node into an array of its own, for its parent to
            // copy (the cost of a checkpoint's new data). A node too large for it costs at most a
            // chunk's worth of encoding thrown away.
            if reuse == nil, !triedWhole, let whole = NodeCodec.encode(node, upTo: CheckpointFormat.chunkTarget) {
                return whole
            }
            let leading = reuse?.childrenLeadingToChunks(at: path) ?? []
            var parts: [(key: ChildKey, bytes: [UInt8])] = []
            var size = 0
            var split = false
            func add(_ key: ChildKey, _ child: Node) throws(E) {
                // A child off the old chunks' ways is encoded here, whole when it fits: its path
                // is made only if it needs chunks of its own.
                let encoded: [UInt8]?
                if let reuse, !leading.isEmpty, leading.contains(key) {
                    encoded = try process(child, at: path.child(key), reuse: reuse)
                } else if child.isLeaf {
                    encoded = try leaf(child, at: path.child(key))
                } else if let whole = NodeCodec.encode(child, upTo: CheckpointFormat.chunkTarget) {
                    if standIns && CheckpointReader.isStandIn(child) { summary.standInsEncoded += 1 }
                    encoded = whole
                } else {
                    encoded = try process(child, at: path.child(key), reuse: nil, triedWhole: true)
                }
                guard let bytes = encoded else {
                    // The child went to chunks of its own; the runs around it stay in key order.
                    split = true
                    try emitRun(path, &parts, node.children, &size)
                    return
                }
                parts.append((key, bytes))
                size += NodeCodec.stringSize(key.string) + bytes.count
                if size > CheckpointFormat.chunkTarget { split = true }
                if split && size >= CheckpointFormat.chunkTarget { try emitRun(path, &parts, node.children, &size) }
            }
            // The previous checkpoint's range chunks at this path: the children within a
            // range's keys are held back until the range is passed, then copied as its chunk
            // if they are exactly the ones it decoded to, else encoded as usual.
            let ranges = reuse?.rangeChunks(at: path) ?? []
            var r = 0
            var held: [(key: ChildKey, node: Node)] = []
            func closeRange() throws(E) {
                defer {
                    held.removeAll(keepingCapacity: true)
                    r += 1
                }
                // A span origin was compared already (`copyUnchangedRange`): only a decoded run
                // is compared here, child by child.
                if let reuse, !ranges[r].origin.isSpan,
                    ChunkOrigins.sameChildren(held, as: ranges[r].origin, first: ranges[r].first, last: ranges[r].last),
                    let stored = verified(ranges[r].index, in: reuse)
                {
                    // The run before the copy is emitted first: chunks stay in key order.
                    try emitRun(path, &parts, node.children, &size)
                    try copy(ranges[r].index, stored, from: reuse, origin: .span(node.children))
                    split = true
                    return
                }
                for (key, child) in held { try add(key, child) }
            }
            // A range whose children are still the very ones its chunk holds — the parent's
            // map shares the range's subtrees with the one recorded — is copied without walking
            // them: `hasSamePairs` skips shared subtrees whole (O(changes · log n), where holding
            // each child back and comparing it cost O(children) per range per checkpoint).
            func copyUnchangedRange() throws(E) -> Bool {
                guard let reuse, case .span(let recorded) = ranges[r].origin,
                    node.children.hasSamePairs(
                        as: recorded, from: ranges[r].first, through: ranges[r].last, same: ChunkOrigins.same),
                    let stored = verified(ranges[r].index, in: reuse)
                else { return false }
                try emitRun(path, &parts, node.children, &size)
                try copy(ranges[r].index, stored, from: reuse, origin: .span(node.children))
                split = true
                r += 1
                return true
            }
            var pairs = node.children.makeIterator()
            while let (key, child) = pairs.next() {
                while r < ranges.count, ChildKey.compare(ranges[r].last, key) < 0 { try closeRange() }
                if r < ranges.count, ChildKey.compare(ranges[r].first, key) <= 0 {
                    if held.isEmpty, try copyUnchangedRange() {
                        // Past the copied range's children (this one among them).
                        pairs = node.children.iterator(after: ranges[r - 1].last)
                        continue
                    }
                    held.append((key, child))
                    continue
                }
                try add(key, child)
            }
            while r < ranges.count { try closeRange() }
            if !split {
                var w = ByteWriter(capacity: size + 32)
                NodeCodec.encodeChildren(parts, priority: node.priority, into: &w)
                return w.bytes
            }
            try emitRun(path, &parts, node.children, &size)
            if let p = node.priority { priorities.append((path, p)) }
            return nil
        }

        let rootReuse = reuse.flatMap { $0.rootLeadsToChunks ? $0 : nil }
        if !cache.isEmpty, let whole = try process(cache, at: .root, reuse: rootReuse) {
            try emit(.root, .whole, whole, origin: .whole(cache))
        }
        while let (stored, chunk) = ahead.next(all: true) { try finish(stored, chunk) }
        return (chunks, priorities)
    }

    /// The bytes to store for `raw`: compressed when that saves enough, else raw.
    func store(_ raw: [UInt8]) -> ([UInt8], Bool) { Self.store(raw, level: compressionLevel) }

    /// The bytes to store for `raw` at zlib `level`: compressed when that saves enough, else raw.
    static func store(_ raw: [UInt8], level: Int32) -> ([UInt8], Bool) {
        if raw.count >= 64, let packed = RawDeflate.compress(raw, level: level),
            Double(packed.count) < Double(raw.count) * CheckpointFormat.compressionWorthwhile
        {
            return (packed, true)
        }
        return (raw, false)
    }
}
