@_spi(HearthInternals) import HearthLog
import HearthModel

/// The nodes each chunk of one checkpoint encodes, so that the next checkpoint can copy the
/// stored bytes of every chunk nothing changed since (``CheckpointEncoder/reuse``) instead of
/// re-encoding and re-deflating it.
///
/// Soundness rests on the cache being persistent: a node a chunk encodes stays the very
/// same value (the same shared ``ChildMap`` storage) in the resident cache until a server event
/// or a prune replaces it, and every change above it makes new nodes along its path. So a node
/// at the chunk's path that is *identical* to the decoded one (``same(_:_:)``) is exactly what
/// the chunk's raw bytes encode — whatever happened elsewhere, and whichever checkpoint is
/// current: the copy is checked against the chunk's CRC as it is made, and a mismatch (or a
/// failed read) falls back to encoding the node, which is in memory.
///
/// Recorded by a whole load of the cache (the nodes each chunk decoded to), and by every
/// checkpoint's encoder (the nodes each chunk it wrote or copied encodes,
/// ``CheckpointEncoder/recordOrigins``): so a cache kept resident across checkpoints
/// (Store+ResidentCache.swift) copies its unchanged chunks at every checkpoint, not only at
/// the first after a load. Kept until the next checkpoint or drop of the cache: it holds the
/// nodes of one checkpoint's snapshot — shared with the resident cache but for what changed
/// since, so the ones a server event or a prune replaced stay alive until then (at most one
/// checkpoint interval of old versions), and the key–node pairs of its range chunks.
struct ChunkOrigins: Sendable {
    /// The checkpoint whose chunks these are (the copies read it, or a file it references).
    let checkpoint: Checkpoint
    /// Its directory's cache chunks.
    let chunks: [CheckpointFormat.Chunk]
    /// What a chunk encodes: the whole node, or the children of a range chunk — as the
    /// children of the parent node (its ``ChildMap``) within the chunk's keys, recorded by the
    /// encoder and by a load (`CheckpointReader.fullCacheWithOrigins()`): the map is the
    /// snapshot's, which shares all but the paths changed since with the resident cache, where
    /// pairs cost ~64–90 bytes a child (~45 MB for the fill's 700,000 children); or, for a
    /// loaded chunk its parent's map does not hold alone (overlapping chunks), as the pairs
    /// it decoded to (not the decoded children node: about half its memory, and the nodes
    /// are shared with the cache anyway).
    enum Origin: Sendable {
        case whole(Node)
        case run(ContiguousArray<(key: ChildKey, node: Node)>)
        case span(ChildMap)

        init(_ node: Node, kind: CheckpointFormat.Chunk.Kind) {
            switch kind {
            case .whole: self = .whole(node)
            case .range: self = .run(ContiguousArray(node.children.lazy.map { (key: $0.key, node: $0.value) }))
            }
        }

        /// Whether this is a parent's map as of the snapshot (compared by `ChildMap.hasSamePairs`).
        var isSpan: Bool {
            if case .span = self { return true }
            return false
        }
    }

    /// What each chunk decoded to, by directory index.
    let nodes: [Origin?]
    /// Chunk indices by path: the whole chunk first if there is one, then the range chunks in
    /// key order (overlapping ones, which no writer makes, left out).
    let byPath: [Path: [Int]]
    /// For each chunk's path and each of its ancestors but the root: its key, under its
    /// parent's path. So a path leads to chunks (is a chunk's or an ancestor of one) when it
    /// is the root of a non-empty ``byPath`` or its key is listed under its parent's — which
    /// the encoder asks once per node on the way to a chunk, for all its children, instead of
    /// building and hashing the path of each (``childrenLeadingToChunks(at:)``).
    let leadingChildren: [Path: Set<ChildKey>]

    /// The origins of a load through `reader`: `nodes` by chunk index.
    init(reader: CheckpointReader, nodes: [Int: Origin]) {
        var array = [Origin?](repeating: nil, count: reader.directory.chunks.count)
        for (i, node) in nodes where array.indices.contains(i) { array[i] = node }
        self.init(checkpoint: reader.checkpoint, chunks: reader.directory.chunks, nodes: array)
    }

    /// The origins of the chunks `chunks` of `checkpoint`: `nodes` by chunk index (nil: none
    /// known, never copied).
    init(checkpoint: Checkpoint, chunks: [CheckpointFormat.Chunk], nodes: [Origin?]) {
        self.checkpoint = checkpoint
        self.chunks = chunks
        var array = nodes
        if array.count != chunks.count {
            array = (0..<chunks.count).map { nodes.indices.contains($0) ? nodes[$0] : nil }
        }
        self.nodes = array
        var byPath: [Path: [Int]] = [:]
        for i in chunks.indices where array[i] != nil { byPath[chunks[i].path, default: []].append(i) }
        for (path, indices) in byPath {
            let wholes = indices.filter { if case .whole = chunks[$0].kind { true } else { false } }
            var ranges: [(index: Int, first: ChildKey, last: ChildKey)] = []
            for i in indices {
                if case let .range(first, last) = chunks[i].kind { ranges.append((i, first, last)) }
            }
            ranges.sort { ChildKey.compare($0.first, $1.first) < 0 }
            var kept: [Int] = Array(wholes.prefix(1))
            var previousLast: ChildKey?
            for r in ranges where ChildKey.compare(r.first, r.last) <= 0 {
                if let previousLast, ChildKey.compare(previousLast, r.first) >= 0 { continue }
                kept.append(r.index)
                previousLast = r.last
            }
            byPath[path] = kept
        }
        self.byPath = byPath
        // Each chunk's path and its ancestors, walked up until a path already seen.
        var seen = Set<Path>()
        var leadingChildren: [Path: Set<ChildKey>] = [:]
        for path in byPath.keys {
            var p: Path? = path
            while let q = p, seen.insert(q).inserted {
                p = q.parent
                if let parent = p, let key = q.keys.last { leadingChildren[parent, default: []].insert(key) }
            }
        }
        self.leadingChildren = leadingChildren
    }

    /// Whether the root leads to chunks: whether there are any (every path's ancestors include
    /// the root).
    var rootLeadsToChunks: Bool { !byPath.isEmpty }

    /// The keys of the children of `path` whose paths lead to chunks (a chunk's path or an
    /// ancestor of one): none when `path` itself does not, the set of such paths being closed
    /// upwards.
    func childrenLeadingToChunks(at path: Path) -> Set<ChildKey> { leadingChildren[path] ?? [] }

    /// The whole chunk at `path`, if it can be copied for `node`.
    func wholeChunk(at path: Path, for node: Node) -> Int? {
        guard let first = byPath[path]?.first, case .whole = chunks[first].kind,
            case .whole(let decoded)? = nodes[first], Self.same(decoded, node)
        else { return nil }
        return first
    }

    /// Raw bytes below which a range chunk is not copied but encoded again with its
    /// neighbours: otherwise a node that gains a few children per checkpoint would gain a
    /// small chunk per checkpoint (every run but a node's last is about ``CheckpointFormat/
    /// chunkTarget`` when encoded fresh, so this bounds the chunks to about 4× a fresh count).
    static let minimumCopiedRun = CheckpointFormat.chunkTarget / 4

    /// The range chunks at `path` worth copying (at least ``minimumCopiedRun`` raw bytes), in
    /// key order: index, first and last key, origin.
    /// (`atLeast`: another least raw length.)
    func rangeChunks(
        at path: Path, atLeast least: Int = minimumCopiedRun
    ) -> [(index: Int, first: ChildKey, last: ChildKey, origin: Origin)] {
        guard let indices = byPath[path] else { return [] }
        var out: [(index: Int, first: ChildKey, last: ChildKey, origin: Origin)] = []
        for i in indices {
            if case let .range(first, last) = chunks[i].kind, let origin = nodes[i], chunks[i].rawLength >= least {
                switch origin {
                case .run, .span: out.append((i, first, last, origin))
                case .whole: break
                }
            }
        }
        return out
    }

    /// Whether `children` (consecutive key–node pairs of a node, in key order) are exactly the
    /// children a range chunk decoded to: the same keys, each node the same value.
    static func sameChildren<Children: Collection<(key: ChildKey, node: Node)>>(
        _ children: Children, as decoded: ContiguousArray<(key: ChildKey, node: Node)>
    ) -> Bool {
        guard decoded.count == children.count else { return false }
        for (a, b) in zip(children, decoded) where a.key != b.key || !same(a.node, b.node) { return false }
        return true
    }

    /// Whether `children` (consecutive key–node pairs of a node, in key order, all within
    /// `first`...`last`) are exactly the children a range chunk with those keys encodes.
    static func sameChildren<Children: RandomAccessCollection<(key: ChildKey, node: Node)>>(
        _ children: Children, as origin: Origin, first: ChildKey, last: ChildKey
    ) -> Bool where Children.Index == Int {
        switch origin {
        case .whole: return false
        case .run(let decoded): return sameChildren(children, as: decoded)
        case .span(let map):
            var i = 0
            for (key, node) in map.pairs(from: first) {
                if ChildKey.compare(key, last) > 0 { break }
                guard i < children.count, children[i].key == key, same(children[i].node, node) else { return false }
                i += 1
            }
            return i == children.count
        }
    }

    /// Whether `a` and `b` are the same value, decided in O(1) for children nodes (shared
    /// storage: never a deep comparison, which could cost as much as the encoding it saves);
    /// leaves compare by value. May say no for equal values built separately — they are then
    /// encoded, as without reuse.
    static func same(_ a: Node, _ b: Node) -> Bool {
        if a.isLeaf || b.isLeaf || a.isEmpty || b.isEmpty { return a == b }
        return a.priority == b.priority && a.children.isIdentical(to: b.children)
    }

    /// The id of the checkpoint file holding chunk `index`'s stored bytes.
    func fileID(_ index: Int) -> UInt64 { chunks[index].fileID(own: checkpoint.id) }

    /// The stored bytes of chunk `index`, read from the file holding them (the old checkpoint
    /// or one it references) and verified against the CRC its directory gives; nil when the
    /// read fails or the bytes do not match.
    func storedBytes(_ index: Int) -> [UInt8]? {
        let c = chunks[index]
        guard let file = checkpoint.file(id: fileID(index)),
            let stored = try? file.read(offset: c.offset, count: c.storedLength),
            stored.count == c.storedLength, CRC32C.mask(CRC32C.checksum(stored)) == c.crc
        else { return nil }
        return stored
    }
}
