import HearthModel

/// The cache chunks a ``CheckpointReader`` keeps, decoded or as their raw (encoded,
/// uncompressed, checksummed) bytes with their children located, least recently used evicted
/// first once their bytes pass a budget.
///
/// The reader serves every read of a store whose server cache is not resident (and the views'
/// rebuild at open): without a bound, reading every location once would keep the whole cache
/// decoded — the memory the lazy load exists to save. Decoded, a chunk costs about seven times
/// its raw bytes (Benchmarks/README.md, "Cold-open memory"); a range chunk kept located
/// (``EncodedChildren``) costs its raw bytes and its children's offsets, and serves reads of a
/// few of its children without inflating, checking and scanning it again.
struct ChunkMemo: Sendable {
    /// What is kept of a chunk.
    enum Content: Sendable {
        /// The decoded node.
        case node(Node)
        /// The raw bytes of a range chunk with its children located, not decoded.
        case located(EncodedChildren)
    }

    /// Raw chunk bytes kept decoded at most (one chunk larger than this is still kept, alone),
    /// except while held.
    let budget: Int
    private var entries: [Int: Entry] = [:]
    /// Raw bytes of the chunks kept.
    private(set) var bytes = 0
    private var tick: UInt64 = 0
    /// While positive, nothing is evicted (``hold()``).
    private(set) var holds = 0

    private struct Entry {
        let content: Content
        let bytes: Int
        var used: UInt64
    }

    init(budget: Int) { self.budget = budget }

    /// How many chunks are kept.
    var count: Int { entries.count }

    /// The chunk `index` if kept (and marks it used).
    mutating func get(_ index: Int) -> Content? {
        guard var entry = entries[index] else { return nil }
        tick += 1
        entry.used = tick
        entries[index] = entry
        return entry.content
    }

    /// Keeps chunk `index` (in place of what was kept of it), then, unless held, evicts the
    /// least recently used others while over the budget.
    mutating func put(_ index: Int, _ content: Content, bytes chunkBytes: Int) {
        tick += 1
        if let old = entries.updateValue(Entry(content: content, bytes: chunkBytes, used: tick), forKey: index) {
            bytes -= old.bytes
        }
        bytes += chunkBytes
        if holds == 0 { evict(sparing: index) }
    }

    /// Keeps every chunk put from now until the matching ``release()``, over the budget if need
    /// be: for a pass that reads many locations once each, whose chunks overlap from one
    /// location to the next and are mostly kept alive by what the pass builds anyway (the
    /// views' rebuild at open, Store.rebuildViews). Under the budget alone, such a pass evicted
    /// a chunk before its next reader, which decoded it again as a second copy.
    mutating func hold() { holds += 1 }

    /// Ends one ``hold()``; after the last, evicts down to the budget.
    mutating func release() {
        precondition(holds > 0, "release() without hold()")
        holds -= 1
        if holds == 0 { evict(sparing: nil) }
    }

    /// Evicts the least recently used chunks (never `sparing`) while over the budget, keeping
    /// at least one.
    private mutating func evict(sparing: Int?) {
        while bytes > budget, entries.count > 1 {
            // Few chunks (a 10 MiB cache has ~200): a scan is cheaper than an ordered index.
            var victim: (index: Int, used: UInt64)?
            for (i, e) in entries where i != sparing && e.used < (victim?.used ?? .max) { victim = (i, e.used) }
            guard let victim, let gone = entries.removeValue(forKey: victim.index) else { break }
            bytes -= gone.bytes
        }
    }

    /// Forgets every chunk.
    mutating func removeAll() {
        entries.removeAll()
        bytes = 0
    }
}
