@_spi(HearthInternals) import HearthLog
import HearthModel

// What a checkpoint of a cache that is not resident is encoded from (Store+ChunkCheckpoint.swift):
// this checkpoint's cache with the server events since applied, as one tree in which every chunk
// no event reaches into is a stand-in — a node of its own, never decoded — that the encoder
// references where it is (``CheckpointEncoder/standIns``).
//
// Why the stand-ins are sound. A chunk holds the whole node at its path, or a run of consecutive
// children of the node at its path (FORMAT.md §7.1). An event writes whole values at paths (an
// overwrite at its path, a merge at its path joined with each child's, a prune at each pruned
// path — what it keeps below one read from the paths kept, like a write there): a write at or above a
// chunk's path replaces everything the chunk holds, wherever it sits in the tree, without
// reading it; a write elsewhere beside it touches none of it. Only a write strictly inside a
// chunk (below a whole chunk's path; below a range chunk's path under a key of its range) needs
// its content, and those chunks are decoded. So after the events every stand-in left in the
// tree stands for exactly the bytes of its chunk, at the chunk's path, and the encoder finds it
// there by identity — the test ChunkOrigins makes for a resident cache — and references the
// chunk. Only chunks the encoder would reuse are stood in for (the first whole chunk at a path,
// a range chunk of at least ``ChunkOrigins/minimumCopiedRun`` bytes): the others are decoded,
// since the encoder writes them anew.
//
// The order indexes (format 5) hold every child of a location in another order: one whose
// location no event reaches is copied from this checkpoint as its stored bytes; one whose
// location changed, or that this checkpoint does not hold, is written from the tree, so every
// chunk at or below its location is decoded.

extension CheckpointReader {
    /// The cache a checkpoint of a non-resident cache is encoded from (``skeleton(applying:queries:)``).
    struct Skeleton: Sendable {
        /// This checkpoint's cache with the events applied: decoded where an event reaches
        /// into a chunk, a stand-in for every other chunk.
        let cache: Node
        /// What each chunk holds in ``cache`` (the stand-ins among them), for the encoder's reuse.
        let origins: ChunkOrigins
        /// The order indexes of the locations no event reached, with their runs' stored bytes.
        let orderIndexes: [CheckpointFormat.OrderIndex.Target: [CheckpointEncoder.CopiedRun]]
        /// The chunks read whole (decoded, or found decoded), and those stood in for.
        let decodedChunks: Int
        /// The chunks stood in for.
        let standIns: Set<Int>
        /// See ``decodedChunks``.
        var standInChunks: Int { standIns.count }
    }

    /// The key of a stand-in's one child: a leaf under it holds the chunk's index. No stored
    /// node reaches the encoder with it: every stand-in is referenced, never encoded.
    static let standInKey = ChildKey("\u{1}chunk")

    /// This checkpoint's cache with `events` (server overwrites, merges and prunes, in order) applied,
    /// decoding only the chunks an event writes inside and the locations of `queries`' order
    /// indexes that changed (see the top of this file).
    ///
    /// `standingInAll`: every chunk may stand in, not only those the encoder would reuse (for a
    /// skeleton that is measured, never encoded: Store+ChunkSizes.swift).
    func skeleton(
        applying events: [StoreEvent], queries: some Sequence<TrackedQuery>, standingInAll: Bool = false
    ) throws(CheckpointError) -> Skeleton {
        let chunks = directory.chunks
        // Every path an event writes a whole value at.
        var written = PathTrie<Bool>()
        for event in events {
            switch event {
            case let .serverOverwrite(path, _, _):
                written.set(path, true)
            case let .serverMerge(path, children, _):
                for child in children { written.set(path.appending(child.path), true) }
            case .cachePruned(let result):
                // A pruned path is written whole (with what is kept below it); a kept path
                // inside a chunk is read from it.
                for path in result.prunedPaths { written.set(path, true) }
                for path in result.keptPaths { written.set(path, true) }
            default:
                break
            }
        }
        // The chunks the encoder would reuse, found as it finds them.
        let layout = ChunkOrigins(
            checkpoint: checkpoint, chunks: chunks, nodes: chunks.map { _ -> ChunkOrigins.Origin? in .whole(.empty) })
        var reusable = standingInAll ? Set(chunks.indices) : Set<Int>()
        for indices in layout.byPath.values where !standingInAll {
            for (n, i) in indices.enumerated() {
                switch chunks[i].kind {
                case .whole: if n == 0 { reusable.insert(i) }
                case .range: if chunks[i].rawLength >= ChunkOrigins.minimumCopiedRun { reusable.insert(i) }
                }
            }
        }
        var decode = Set(chunks.indices).subtracting(reusable)
        // A stand-in must be the only thing at its place: a path whose chunks overlap (which no
        // writer makes) has all of them decoded, and so does a range holding the key of a chunk
        // below it.
        var atPath: [Path: [Int]] = [:]
        var chunkPaths = PathTrie<Bool>()
        for i in chunks.indices {
            atPath[chunks[i].path, default: []].append(i)
            chunkPaths.set(chunks[i].path, true)
        }
        for indices in atPath.values where !Self.disjoint(indices.map { chunks[$0].kind }) {
            decode.formUnion(indices)
        }
        for i in reusable {
            guard case .range(let first, let last) = chunks[i].kind, chunkPaths.hasEntries(below: chunks[i].path),
                Self.holdsKey(chunkPaths.subtree(chunks[i].path).children.keys, from: first, through: last)
            else { continue }
            decode.insert(i)
        }
        var keysBelow: [Path: [ChildKey]] = [:]
        for i in reusable {
            let c = chunks[i]
            switch c.kind {
            case .whole:
                if written.hasEntries(below: c.path) { decode.insert(i) }
            case .range(let first, let last):
                guard written.hasEntries(below: c.path) else { continue }
                let keys = keysBelow[c.path] ?? written.subtree(c.path).children.keys
                keysBelow[c.path] = keys
                if Self.holdsKey(keys, from: first, through: last) { decode.insert(i) }
            }
        }
        // The order indexes: copied where nothing changed, else written from decoded chunks.
        var copied: [CheckpointFormat.OrderIndex.Target: [CheckpointEncoder.CopiedRun]] = [:]
        let old = Dictionary(
            directory.orderIndexes.map { (CheckpointFormat.OrderIndex.Target(path: $0.path, index: $0.index), $0) },
            uniquingKeysWith: { a, _ in a })
        for location in queries.lazy.map(\.location) where location.query.limit != nil && location.query.index != .key {
            let path = location.path
            let target = CheckpointFormat.OrderIndex.Target(path: path, index: location.query.index)
            if copied[target] != nil { continue }
            let changed = written.nearestAtOrAbove(path) != nil || written.hasEntries(below: path)
            if !changed, let index = old[target], let runs = copiedRuns(index) {
                copied[target] = runs
                continue
            }
            for i in chunkIndex.candidates(for: path) where path.contains(chunks[i].path) { decode.insert(i) }
        }
        let standIns = Set(chunks.indices).subtracting(decode)
        let readBefore = chunksRead
        let assembled = try fullCacheWithOrigins(standingIn: standIns)
        let read = chunksRead - readBefore
        var cache = assembled.cache
        for event in events { cache = StoreState.applyingCacheEvent(event, to: cache) }
        return Skeleton(
            cache: cache, origins: assembled.origins, orderIndexes: copied, decodedChunks: read, standIns: standIns)
    }

    /// The stand-in for chunk `index`: a node only it holds (compared by identity), whole or as
    /// the one child of its range under the range's first key.
    static func standIn(_ index: Int, _ chunk: CheckpointFormat.Chunk) -> Node {
        let marker = Node(children: [(key: standInKey, value: .number(Double(index)))])
        switch chunk.kind {
        case .whole: return marker
        case .range(let first, _): return Node(children: [(key: first, value: marker)])
        }
    }

    /// Whether chunks of these kinds at one path are one whole chunk, or range chunks whose
    /// ranges are ordered and disjoint.
    static func disjoint(_ kinds: [CheckpointFormat.Chunk.Kind]) -> Bool {
        var ranges: [(first: ChildKey, last: ChildKey)] = []
        for kind in kinds {
            switch kind {
            case .whole: if kinds.count > 1 { return false }
            case .range(let first, let last): ranges.append((first, last))
            }
        }
        ranges.sort { ChildKey.compare($0.first, $1.first) < 0 }
        for (n, r) in ranges.enumerated() {
            if ChildKey.compare(r.first, r.last) > 0 { return false }
            if n > 0, ChildKey.compare(ranges[n - 1].last, r.first) >= 0 { return false }
        }
        return true
    }

    /// Whether `node` is a stand-in (``standIn(_:_:)``, the whole kind).
    static func isStandIn(_ node: Node) -> Bool {
        !node.isLeaf && node.children.count == 1 && !node.child(standInKey).isEmpty
    }

    /// Whether `keys` (in key order) holds one within `first`...`last`.
    static func holdsKey(_ keys: [ChildKey], from first: ChildKey, through last: ChildKey) -> Bool {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ChildKey.compare(keys[mid], first) < 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo < keys.count && ChildKey.compare(keys[lo], last) <= 0
    }

    /// The stored bytes of `index`'s runs, each checked against its CRC; nil when one cannot be
    /// read or does not match (the index is then written anew from decoded chunks).
    private func copiedRuns(_ index: CheckpointFormat.OrderIndex) -> [CheckpointEncoder.CopiedRun]? {
        var runs: [CheckpointEncoder.CopiedRun] = []
        for run in index.runs {
            guard let stored = try? checkpoint.read(offset: run.offset, count: run.storedLength),
                stored.count == run.storedLength, CRC32C.mask(CRC32C.checksum(stored)) == run.crc
            else { return nil }
            runs.append(CheckpointEncoder.CopiedRun(run: run, stored: stored))
        }
        return runs
    }
}
