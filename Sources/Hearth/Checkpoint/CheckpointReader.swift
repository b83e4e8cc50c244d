@_spi(HearthInternals) import HearthLog
import HearthModel
import Synchronization

/// Reads a checkpoint body written by ``CheckpointEncoder``: the trailer and directory at
/// once, cache chunks on demand (memoized under a byte budget, least recently used evicted
/// first: ChunkMemo; all kept while the views are rebuilt at open, ``keepingDecoded(_:)``), so
/// the first read of a small location after open decodes only the chunks on its path, and
/// reading everywhere does not keep the whole cache decoded.
final class CheckpointReader: Sendable {
    let checkpoint: Checkpoint
    let directory: CheckpointFormat.Directory
    private let decoded: Mutex<ChunkMemo>
    /// The directory's chunks by location.
    let chunkIndex: ChunkPathIndex
    /// Chunks asked for whole (``chunk(_:)``), decoded or found decoded (tests: what a
    /// checkpoint from chunks reads).
    private let chunkCalls = Atomic<Int>(0)

    /// Raw chunk bytes a reader keeps decoded by default: 2 MiB, ~14 MiB of nodes — room for
    /// the chunks the views of a store at the default cap read at open (~1.3 MB raw).
    static let defaultDecodedBudget = 2 << 20

    /// Reads and verifies the trailer and directory; keeps at most `decodedBudget` raw bytes
    /// of chunks decoded.
    init(_ checkpoint: Checkpoint, decodedBudget: Int = CheckpointReader.defaultDecodedBudget) throws(CheckpointError) {
        self.checkpoint = checkpoint
        decoded = Mutex(ChunkMemo(budget: decodedBudget))
        let file = checkpoint.fileName
        func corrupt(_ offset: UInt64, _ reason: String) -> CheckpointError {
            .corrupt(file: file, offset: offset, reason: reason)
        }
        let size = checkpoint.bodySize
        guard size >= UInt64(CheckpointFormat.trailerSize) else {
            throw corrupt(0, "body of \(size) bytes has no trailer")
        }
        let trailerAt = size - UInt64(CheckpointFormat.trailerSize)
        let t: [UInt8]
        do { t = try checkpoint.read(offset: trailerAt, count: CheckpointFormat.trailerSize) } catch {
            throw .log(error)
        }
        guard Array(t[0..<8]) == CheckpointFormat.magic else { throw corrupt(trailerAt, "bad trailer magic") }
        var r = ByteReader(t, from: 8)
        do {
            let version = try r.u32()
            guard CheckpointFormat.readableVersions.contains(version) else {
                throw corrupt(
                    trailerAt + 8,
                    "unknown checkpoint body format version \(version) (this build reads \(CheckpointFormat.readableVersions.lowerBound)–\(CheckpointFormat.readableVersions.upperBound))"
                )
            }
            let dirOffset = try r.u64()
            let dirStored = Int(try r.u32())
            let dirRaw = Int(try r.u32())
            let dirCompressed = try r.u8() == 1
            _ = try r.raw(3)
            let dirCRC = try r.u32()
            let trailerCRC = try r.u32()
            guard CRC32C.mask(CRC32C.checksum(Array(t[0..<36]))) == trailerCRC else {
                throw corrupt(trailerAt, "trailer checksum mismatch")
            }
            guard dirOffset <= trailerAt, UInt64(dirStored) == trailerAt - dirOffset else {
                throw corrupt(trailerAt, "directory range \(dirOffset)+\(dirStored) does not end at the trailer")
            }
            guard dirRaw <= 256 << 20 else { throw corrupt(trailerAt, "directory raw size \(dirRaw) too large") }
            let stored: [UInt8]
            do { stored = try checkpoint.read(offset: dirOffset, count: dirStored) } catch {
                throw CheckpointError.log(error)
            }
            guard CRC32C.mask(CRC32C.checksum(stored)) == dirCRC else {
                throw corrupt(dirOffset, "directory checksum mismatch")
            }
            let raw: [UInt8]
            if dirCompressed {
                guard let inflated = RawDeflate.decompress(stored, rawCount: dirRaw) else {
                    throw corrupt(dirOffset, "directory does not inflate")
                }
                raw = inflated
            } else {
                raw = stored
            }
            do {
                directory = try CheckpointReader.decodeDirectory(
                    raw, bodyEnd: dirOffset, bodyVersion: version, checkpoint: checkpoint)
                chunkIndex = ChunkPathIndex(directory.chunks)
            } catch {
                throw corrupt(dirOffset, "directory: \(error)")
            }
        } catch let e as CheckpointError {
            throw e
        } catch {
            throw corrupt(trailerAt, "\(error)")
        }
    }

    /// Decodes a directory of body format `bodyVersion` (the trailer's). Format 2's pending
    /// writes stay in their chunks, read from `checkpoint` when first needed.
    static func decodeDirectory(
        _ raw: [UInt8], bodyEnd: UInt64, bodyVersion: UInt32 = CheckpointFormat.version, checkpoint: Checkpoint? = nil
    ) throws(DecodeError) -> CheckpointFormat.Directory {
        var r = ByteReader(raw)
        let version = try r.varint()
        guard version == UInt64(bodyVersion) else {
            throw r.fail("directory version \(version) in a body of format \(bodyVersion)")
        }
        func id() throws(DecodeError) -> Int64 { try EventCodec.id(&r) }
        let lastWrite = try id(), lastQuery = try id(), lastTx = try id(), lastOD = try id()
        let batchLength = try r.count(limit: r.remaining)
        let batch = Array(try r.raw(batchLength))
        var state = StoreState()
        var previousRun: Int64?
        for event in try EventCodec.decode(batch) {
            switch event {
            case .writeSaved where bodyVersion == 1:
                // Format 1 kept the pending writes here.
                state.apply(event)
            case .serverTimeOffset, .authSaved, .trackedQuerySaved, .pinChanged, .transactionSaved, .onDisconnectSaved:
                state.apply(event)
            case .writerIdentity(let writer, nil) where bodyVersion == 3:
                // Format 3's one writer id, for every write.
                state.writerIdentities.begin(writer, from: 0)
            case .writerIdentity(let writer, let first?) where bodyVersion >= 4:
                // Format 4's runs, in increasing order. Applied as they are, not through the
                // reducer: the pending writes the runs are for are not attached yet.
                if let previous = previousRun, previous >= first {
                    throw r.fail("writer identity runs not in increasing order at write id \(first)")
                }
                previousRun = first
                state.writerIdentities.begin(writer, from: first)
            case .writerWatermark where bodyVersion >= 3:
                // Format 3 added the writer watermarks.
                state.apply(event)
            default:
                throw r.fail("unexpected event in checkpoint directory")
            }
        }
        var writeChunks: [CheckpointFormat.WriteChunk] = []
        if bodyVersion >= 2 {
            let n = try r.count(limit: r.remaining)
            for _ in 0..<n {
                let first = try id(), last = try id()
                let count = try r.count(limit: Int(Int32.max))
                let minPath = try EventCodec.path(&r), maxPath = try EventCodec.path(&r)
                let filterLength = try r.count(limit: r.remaining)
                let filter = CheckpointFormat.PathFilter(bits: Array(try r.raw(filterLength)))
                let offset = try r.varint()
                let stored = try r.count(limit: Int(Int32.max))
                let rawLength = try r.count(limit: 256 << 20)
                let compressed = try r.bool()
                let crc = try r.u32()
                guard first <= last, count >= 1, UInt64(count) <= UInt64(last - first) + 1 else {
                    throw r.fail("write chunk ids \(first)…\(last) cannot hold \(count) writes")
                }
                if let previous = writeChunks.last, previous.lastID >= first {
                    throw r.fail("write chunk ids \(first)…\(last) not above the previous chunk's")
                }
                guard CheckpointFormat.pathOrder(minPath, maxPath) <= 0 else {
                    throw r.fail("write chunk path range \(minPath)…\(maxPath) is empty")
                }
                guard offset <= bodyEnd, UInt64(stored) <= bodyEnd - offset else {
                    throw r.fail("write chunk range \(offset)+\(stored) beyond the chunk area (\(bodyEnd) bytes)")
                }
                writeChunks.append(
                    CheckpointFormat.WriteChunk(
                        firstID: first, lastID: last, count: count, minPath: minPath, maxPath: maxPath, filter: filter,
                        offset: offset, storedLength: stored, rawLength: rawLength, compressed: compressed, crc: crc))
            }
            if !writeChunks.isEmpty {
                guard let checkpoint else {
                    throw r.fail("pending-write chunks without a checkpoint to read them from")
                }
                state.writes = PendingWriteList(
                    chunks: writeChunks.enumerated().map { LazyWriteChunk($1, number: $0, checkpoint: checkpoint) })
                state.lastWriteID = max(state.lastWriteID, writeChunks[writeChunks.count - 1].lastID)
            }
        }
        state.lastWriteID = max(state.lastWriteID, lastWrite)
        state.lastQueryID = max(state.lastQueryID, lastQuery)
        state.lastTransactionID = max(state.lastTransactionID, lastTx)
        state.lastOnDisconnectID = max(state.lastOnDisconnectID, lastOD)

        let untrackedCount = try r.count(limit: r.remaining)
        for _ in 0..<untrackedCount {
            let path = try EventCodec.path(&r)
            let time = try r.zigzag()
            // The entries are an antichain of locations no tracked query covers (FORMAT.md
            // §11.6; StoreState's invariants, which the reducer and pruning rely on): none at
            // or below another, no path twice, none at or below a tracked query's path (the
            // tracked queries were restored above).
            if state.untracked.nearestAtOrAbove(path) != nil || state.untracked.hasEntries(below: path) {
                throw r.fail("untracked entry \(path) lies at, above or below another")
            }
            if state.isCoveredByTrackedQuery(path) {
                throw r.fail("untracked entry \(path) lies at or below a tracked query")
            }
            state.untracked.set(path, time)
        }

        var priorities: [(path: Path, priority: Priority)] = []
        let priorityCount = try r.count(limit: r.remaining)
        for _ in 0..<priorityCount {
            let path = try EventCodec.path(&r)
            let node = try NodeCodec.decode(from: &r)
            switch node.leafValue {
            case .number(let n)?: priorities.append((path, .number(n)))
            case .string(let s)?: priorities.append((path, .string(s)))
            default: throw r.fail("invalid skeleton priority")
            }
        }

        var chunks: [CheckpointFormat.Chunk] = []
        let chunkCount = try r.count(limit: r.remaining)
        for _ in 0..<chunkCount {
            let path = try EventCodec.path(&r)
            let kind: CheckpointFormat.Chunk.Kind
            switch try r.u8() {
            case 0: kind = .whole
            case 1: kind = .range(first: ChildKey(try r.string()), last: ChildKey(try r.string()))
            case let b: throw r.fail("unknown chunk kind \(b)")
            }
            let offset = try r.varint()
            let stored = try r.count(limit: Int(Int32.max))
            let rawLength = try r.count(limit: 256 << 20)
            let compressed = try r.bool()
            let crc = try r.u32()
            // A chunk in an earlier file is checked against that file's body when it is read.
            let file = bodyVersion >= CheckpointFormat.referencesVersion ? try r.varint() : 0
            guard file != 0 || (offset <= bodyEnd && UInt64(stored) <= bodyEnd - offset) else {
                throw r.fail("chunk range \(offset)+\(stored) beyond the chunk area (\(bodyEnd) bytes)")
            }
            if let checkpoint, file != 0, file >= checkpoint.id {
                throw r.fail("chunk in checkpoint file \(file), not an earlier one")
            }
            chunks.append(
                CheckpointFormat.Chunk(
                    path: path, kind: kind, offset: offset, storedLength: stored, rawLength: rawLength,
                    compressed: compressed, crc: crc, file: file))
        }
        let orderIndexes = bodyVersion >= 5 ? try decodeOrderIndexes(&r, bodyEnd: bodyEnd) : []
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes in directory") }
        return CheckpointFormat.Directory(
            state: state, priorities: priorities, chunks: chunks, writeChunks: writeChunks, orderIndexes: orderIndexes)
    }

    /// The node a chunk holds: the whole node at its path, or a children node of its range.
    func chunk(_ index: Int) throws(CheckpointError) -> Node {
        chunkCalls.add(1, ordering: .relaxed)
        let kept = decoded.withLock { $0.get(index) }
        if case .node(let node)? = kept { return node }
        let c = directory.chunks[index]
        let raw: [UInt8]
        if case .located(let children)? = kept { raw = children.bytes } else { raw = try rawChunk(index) }
        let node: Node
        do { node = try NodeCodec.decode(raw) } catch { throw corrupt(index, "\(error)") }
        if case .range = c.kind, node.isLeaf || node.priority != nil {
            throw corrupt(index, "range chunk is not a plain children node")
        }
        decoded.withLock { $0.put(index, .node(node), bytes: c.rawLength) }
        return node
    }

    /// The children `keys` that range chunk `index` holds (the others are not built: a chunk
    /// decoded already is looked up; else its raw bytes are scanned once and kept with their
    /// children located, ``EncodedChildren``).
    func chunkChildren(
        _ index: Int, keeping keys: Set<ChildKey>
    ) throws(CheckpointError) -> [(key: ChildKey, value: Node)] {
        let children: EncodedChildren
        switch decoded.withLock({ $0.get(index) }) {
        case .node(let node)?:
            return keys.compactMap { key in
                let child = node.child(key)
                return child.isEmpty ? nil : (key, child)
            }
        case .located(let located)?:
            children = located
        case nil:
            let raw = try rawChunk(index)
            do { children = try EncodedChildren(raw) } catch { throw corrupt(index, "range chunk: \(error)") }
            decoded.withLock { $0.put(index, .located(children), bytes: children.footprint) }
        }
        do { return try children.children(keeping: keys) } catch {
            throw corrupt(index, "range chunk: \(error)")
        }
    }

    /// Chunk `index`'s raw bytes, read from the file holding them, checked and inflated.
    func rawChunk(_ index: Int) throws(CheckpointError) -> [UInt8] {
        let c = directory.chunks[index]
        guard let file = checkpoint.file(id: c.fileID(own: checkpoint.id)) else {
            throw corrupt(index, "its checkpoint file \(c.file) is not one the MANIFEST keeps")
        }
        guard c.offset <= file.bodySize, UInt64(c.storedLength) <= file.bodySize - c.offset else {
            throw corrupt(index, "range \(c.offset)+\(c.storedLength) beyond the body of \(file.fileName)")
        }
        return try CheckpointChunkBytes.read(
            file, offset: c.offset, storedLength: c.storedLength, rawLength: c.rawLength,
            compressed: c.compressed, crc: c.crc, corrupt: { corrupt(index, $0) })
    }

    /// Damage in chunk `index`, named by the file that holds its bytes.
    func corrupt(_ index: Int, _ reason: String) -> CheckpointError {
        let c = directory.chunks[index]
        let file = checkpoint.file(id: c.fileID(own: checkpoint.id))?.fileName ?? "checkpoint file \(c.file)"
        return .corrupt(file: file, offset: c.offset, reason: "chunk \(index) at \(c.path): \(reason)")
    }

    /// Verifies every chunk's and order index run's checksum and decoding (for `hearth verify`).
    func verifyAllChunks(progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws(CheckpointError) {
        for i in directory.chunks.indices {
            _ = try chunk(i)
            progress?(i + 1, directory.chunks.count)
        }
        try verifyOrderIndexes()
        try directory.state.writes.decodeAll()
    }

    /// How many times a chunk was asked for whole since the reader was made.
    var chunksRead: Int { chunkCalls.load(ordering: .relaxed) }

    /// How many chunks are decoded and memoized now (tests, tooling).
    var decodedChunkCount: Int { decoded.withLock { $0.count } }

    /// The raw bytes of the chunks decoded and memoized now (tests, tooling).
    var decodedChunkBytes: Int { decoded.withLock { $0.bytes } }

    /// Runs `body` with every chunk decoded meanwhile kept (``ChunkMemo/hold()``), then evicts
    /// down to the budget.
    func keepingDecoded<T>(_ body: () throws -> T) rethrows -> T {
        decoded.withLock { $0.hold() }
        defer { decoded.withLock { $0.release() } }
        return try body()
    }

    /// Forgets decoded chunks (after the full load has absorbed them).
    func dropDecoded() {
        decoded.withLock { $0.removeAll() }
    }
}
