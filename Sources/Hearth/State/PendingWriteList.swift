@_spi(HearthInternals) import HearthLog
import HearthModel
import Synchronization

/// A run of a checkpoint's pending writes, decoded on first use and then kept (body format 2,
/// FORMAT.md §7.1). Shared by every copy of the state that holds it; decoding is serialized.
final class LazyWriteChunk: Sendable {
    /// What the checkpoint's directory says of the run.
    let entry: CheckpointFormat.WriteChunk
    /// The run's number in the directory (for error messages).
    let number: Int
    private let checkpoint: Checkpoint
    private let decoded = Mutex<[PendingWrite]?>(nil)

    init(_ entry: CheckpointFormat.WriteChunk, number: Int, checkpoint: Checkpoint) {
        self.entry = entry
        self.number = number
        self.checkpoint = checkpoint
    }

    /// Whether the writes are decoded (no file access left to do).
    var isDecoded: Bool { decoded.withLock { $0 != nil } }

    /// The run's writes in id order, read, verified and decoded on the first call.
    /// - Throws: ``CheckpointError/corrupt(file:offset:reason:)`` when the stored bytes
    ///   fail their checksum or do not decode to what the directory says.
    func writes() throws(CheckpointError) -> [PendingWrite] {
        try decoded.withLock { (memo: inout [PendingWrite]?) throws(CheckpointError) -> [PendingWrite] in
            if let memo { return memo }
            let writes = try decode()
            memo = writes
            return writes
        }
    }

    private func decode() throws(CheckpointError) -> [PendingWrite] {
        let c = entry
        func corrupt(_ reason: String) -> CheckpointError {
            .corrupt(file: checkpoint.fileName, offset: c.offset, reason: "pending-write chunk \(number): \(reason)")
        }
        let raw = try CheckpointChunkBytes.read(
            checkpoint, offset: c.offset, storedLength: c.storedLength, rawLength: c.rawLength,
            compressed: c.compressed, crc: c.crc,
            corrupt: corrupt)
        let events: [StoreEvent]
        do { events = try EventCodec.decode(raw) } catch { throw corrupt("\(error)") }
        guard events.count == c.count else {
            throw corrupt("\(events.count) writes where the directory says \(c.count)")
        }
        var writes: [PendingWrite] = []
        writes.reserveCapacity(events.count)
        for event in events {
            guard case .writeSaved(let w) = event else { throw corrupt("an event other than a pending write") }
            if let last = writes.last, last.id >= w.id { throw corrupt("write ids not increasing at \(w.id)") }
            guard w.id >= c.firstID, w.id <= c.lastID else {
                throw corrupt("write \(w.id) outside \(c.firstID)…\(c.lastID)")
            }
            // The directory's summary must hold every write, or reads would miss it.
            var ancestor = w.path
            var covered = c.mayHoldWrite(at: w.path)
            while covered && !ancestor.isRoot {
                covered = c.mayHoldWrites(atOrBelow: ancestor)
                ancestor = ancestor.parent ?? .root
            }
            guard covered else {
                throw corrupt("write \(w.id) at \(w.path) is outside the chunk's path range or filter")
            }
            writes.append(w)
        }
        guard writes.first?.id == c.firstID, writes.last?.id == c.lastID else {
            throw corrupt("first or last write id differs from the directory")
        }
        return writes
    }
}

/// The pending writes of a ``StoreState``, in id order: those of the checkpoint the store was
/// opened from (body format 2) still in their ``LazyWriteChunk``s, decoded when first needed,
/// and the rest decoded.
///
/// Opening a store with 100,000 pending writes so costs O(chunks), not O(writes): a read
/// decodes only the chunks that may hold writes on its path (``UnrestoredWrites``), and what
/// needs the whole list (a checkpoint, pruning, ``Store/state()``) decodes every chunk once.
///
/// Invariants: chunks have increasing, disjoint id ranges; `loose` is sorted by strictly
/// increasing id (``SegmentedWrites``, so that a commit's change copies a segment, not every
/// write); a chunk's write whose id is in `hidden` is not pending (removed, or replaced
/// by the write with that id in `loose`); `loosePaths` counts exactly the paths the writes in
/// `loose` touch.
struct PendingWriteList: Sendable {
    private(set) var chunks: [LazyWriteChunk] = []
    private(set) var hidden: Set<Int64> = []
    private(set) var loose = SegmentedWrites()
    /// How many of the writes in `loose` touch each path (``PendingWrite/touchedPaths``, each
    /// occurrence counted; no entry holds 0), kept with every insert and removal: the pending
    /// writes' share of the paths pruning must keep (``Pruner/Pass``), so that a pruning pass
    /// copies it in O(1) instead of walking every pending write — a client draining N offline
    /// writes runs a pass every few hundred acks.
    private(set) var loosePaths = PathTrie<Int>()

    init() {}

    init(chunks: [LazyWriteChunk]) {
        // The directory's decoder refuses any other chunks; the binary search relies on it.
        assert(
            zip(chunks, chunks.dropFirst()).allSatisfy { $0.entry.lastID < $1.entry.firstID },
            "write chunks hold increasing, disjoint id ranges")
        self.chunks = chunks
    }

    /// The chunk whose id range holds `id`.
    private func chunk(holding id: Int64) -> LazyWriteChunk? {
        var lo = 0, hi = chunks.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if chunks[mid].entry.lastID < id { lo = mid + 1 } else { hi = mid }
        }
        return lo < chunks.count && chunks[lo].entry.firstID <= id ? chunks[lo] : nil
    }

    /// Adds a write (replacing one with the same id). O(1) for a write newer than all.
    mutating func insert(_ write: PendingWrite) {
        if chunk(holding: write.id) != nil { hidden.insert(write.id) }
        // Only a crafted log replaces a write: the store assigns ids in increasing order.
        if let last = loose.last, last.id >= write.id, let old = loose.write(write.id) {
            Self.count(old, by: -1, in: &loosePaths)
        }
        loose.insert(write)
        Self.count(write, by: 1, in: &loosePaths)
    }

    /// Removes the write with `id`, if pending. Never decodes.
    mutating func remove(_ id: Int64) {
        if chunk(holding: id) != nil { hidden.insert(id) }
        if let old = loose.write(id) {
            loose.remove(id)
            Self.count(old, by: -1, in: &loosePaths)
        }
    }

    /// Adds `delta` to the count of each path `write` touches, dropping counts that reach 0.
    static func count(_ write: PendingWrite, by delta: Int, in trie: inout PathTrie<Int>) {
        for path in write.touchedPaths { count(path, by: delta, in: &trie) }
    }

    /// Adds `delta` to the count at `path`, dropping it when it reaches 0.
    static func count(_ path: Path, by delta: Int, in trie: inout PathTrie<Int>) {
        trie.updateValue(at: path) { n in
            let total = (n ?? 0) + delta
            n = total > 0 ? total : nil
        }
    }

    /// The paths the pending writes kept in checkpoint chunks touch (each occurrence; the
    /// writes in `loose` are counted in ``loosePaths`` instead). Decodes every chunk; one that
    /// cannot be decoded contributes nothing.
    func chunkTouchedPaths() -> [Path] {
        var out: [Path] = []
        for chunk in chunks {
            for w in (try? chunk.writes()) ?? [] where !hidden.contains(w.id) { out += w.touchedPaths }
        }
        return out
    }

    /// The pending write with `id`; decodes at most the one chunk that may hold it.
    func write(_ id: Int64) throws(CheckpointError) -> PendingWrite? {
        if let w = loose.write(id) { return w }
        guard !hidden.contains(id), let chunk = chunk(holding: id) else { return nil }
        let writes = try chunk.writes()
        var lo = 0, hi = writes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if writes[mid].id < id { lo = mid + 1 } else { hi = mid }
        }
        return lo < writes.count && writes[lo].id == id ? writes[lo] : nil
    }

    /// Decodes every chunk (once; later reads of the list touch no file).
    func decodeAll() throws(CheckpointError) {
        for chunk in chunks { _ = try chunk.writes() }
    }

    /// Whether every chunk is decoded.
    var isDecoded: Bool { chunks.allSatisfy(\.isDecoded) }

    /// Every pending write in id order (decoding every chunk).
    func all() throws(CheckpointError) -> [PendingWrite] {
        try merged { (chunk: LazyWriteChunk) throws(CheckpointError) in try chunk.writes() }
    }

    /// Every pending write in id order that can be read: a chunk that cannot be decoded
    /// (damage, which ``all()`` reports) contributes nothing.
    func allReadable() -> [PendingWrite] {
        merged { (chunk: LazyWriteChunk) in (try? chunk.writes()) ?? [] }
    }

    private func merged<E: Error>(_ read: (LazyWriteChunk) throws(E) -> [PendingWrite]) throws(E) -> [PendingWrite] {
        if chunks.isEmpty { return loose.all }
        var out: [PendingWrite] = []
        var rest = loose.makeIterator()
        var next = rest.next()
        for chunk in chunks {
            for w in try read(chunk) where !hidden.contains(w.id) {
                while let l = next, l.id < w.id {
                    out.append(l)
                    next = rest.next()
                }
                out.append(w)
            }
        }
        while let l = next {
            out.append(l)
            next = rest.next()
        }
        return out
    }

    /// The oldest pending write's id (`nil`: none is pending). Decodes the chunks from the
    /// first until one holds a pending write; a chunk that cannot be decoded counts as holding
    /// its first id, so what is decided from it errs on the side of keeping.
    func oldestID() -> Int64? {
        let oldestLoose = loose.first?.id
        for chunk in chunks {
            if let l = oldestLoose, chunk.entry.firstID >= l { break }
            guard let writes = try? chunk.writes() else { return chunk.entry.firstID }
            if let w = writes.first(where: { !hidden.contains($0.id) }) { return min(w.id, oldestLoose ?? w.id) }
        }
        return oldestLoose
    }

    /// The pending writes with ids above `id`, in id order (decoding only chunks reaching
    /// above it; a chunk that cannot be decoded contributes nothing).
    func writes(above id: Int64) -> [PendingWrite] {
        var out: [PendingWrite] = []
        for chunk in chunks where chunk.entry.lastID > id {
            for w in (try? chunk.writes()) ?? [] where w.id > id && !hidden.contains(w.id) { out.append(w) }
        }
        out.append(contentsOf: loose.writes(above: id))
        if !chunks.isEmpty { out.sort { $0.id < $1.id } }
        return out
    }
}

extension PendingWriteList: Equatable {
    static func == (a: PendingWriteList, b: PendingWriteList) -> Bool {
        if a.chunks.count == b.chunks.count, zip(a.chunks, b.chunks).allSatisfy({ $0 === $1 }), a.hidden == b.hidden,
            a.loose == b.loose
        {
            return true
        }
        return a.allReadable() == b.allReadable()
    }
}
