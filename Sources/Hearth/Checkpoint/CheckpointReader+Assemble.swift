// Putting checkpoint chunks back together: the whole cache, or the chunks on the way to a
// location, as one tree (CheckpointReader.swift reads and memoizes the chunks themselves).

import HearthModel

extension CheckpointReader {
    /// Places the chunks selected by `include` into one tree, with the split nodes'
    /// priorities under `prioritiesUnder`.
    ///
    /// Built bottom-up: each node is made once from its children in key order (range chunks
    /// come in key order, recursively split children are assembled first), so the whole
    /// cache costs O(n) tree work rather than a path update per child. The runs of a split
    /// node are joined rather than copied (``ChildMap/concatenating(_:)``): the node shares
    /// their decoded trees.
    ///
    /// `select` names, for a range chunk, the only children of it to place (`nil`: all of
    /// them); the others are not built (``chunkChildren(_:keeping:)``). `visit` sees each chunk
    /// decoded whole, with its node (a selected range chunk is not decoded whole: not visited).
    /// `standIns`: chunks placed as their stand-in (``standIn(_:_:)``) instead of decoded, and
    /// visited with it.
    func assemble(
        include: (CheckpointFormat.Chunk) -> Bool, prioritiesUnder: Path?, within: Path? = nil,
        select: (CheckpointFormat.Chunk) -> Set<ChildKey>? = { _ in nil }, standIns: Set<Int> = [],
        visit: ((Int, Node) -> Void)? = nil
    ) throws(CheckpointError) -> Node {
        // Group the selected chunks by their path, in directory order.
        var byPath: [Path: [Int]] = [:]
        // `within`: only the chunks at, below or above that location can be included.
        for i in within.map(chunkIndex.candidates(for:)) ?? Array(directory.chunks.indices) {
            let c = directory.chunks[i]
            if include(c) { byPath[c.path, default: []].append(i) }
        }
        if byPath.isEmpty { return .empty }
        var priorities: [Path: Priority] = [:]
        for (path, priority) in directory.priorities
        where prioritiesUnder.map({ $0.contains(path) || path.contains($0) }) ?? true {
            priorities[path] = priority
        }
        // Every ancestor of a chunk path is a node to build; record which child keys lead down.
        var below: [Path: Set<ChildKey>] = [:]
        for path in byPath.keys {
            var p = path
            while let parent = p.parent, let key = p.back {
                below[parent, default: []].insert(key)
                p = parent
            }
        }
        func placed(_ i: Int) throws(CheckpointError) -> Node {
            if standIns.contains(i) { return CheckpointReader.standIn(i, directory.chunks[i]) }
            return try chunk(i)
        }
        func build(_ path: Path, depth: Int) throws(CheckpointError) -> Node {
            var pairs: [(key: ChildKey, value: Node)] = []
            var wholeNode: Node?
            // The range chunks decoded whole, joined in key order: they share the decoded
            // chunks' trees (with the reader's memo and whoever else read them) instead of
            // copying every child into a new map. `nil` once they are not in order (a
            // well-formed checkpoint writes them so: FORMAT.md §7.1); their children then
            // go through `pairs` with the rest.
            var joined: ChildMap? = ChildMap()
            for i in byPath[path] ?? [] {
                let c = directory.chunks[i]
                switch c.kind {
                case .whole:
                    let node = try placed(i)
                    visit?(i, node)
                    wholeNode = node
                case .range:
                    if let keys = select(c) {
                        pairs.append(contentsOf: try chunkChildren(i, keeping: keys))
                    } else {
                        let node = try placed(i)
                        visit?(i, node)
                        if let map = joined, let next = map.concatenating(node.children) {
                            joined = next
                        } else {
                            if let map = joined { pairs.append(contentsOf: map) }
                            joined = nil
                            pairs.append(contentsOf: node.children)
                        }
                    }
                }
            }
            for key in below[path] ?? [] {
                pairs.append((key, try build(path.child(key), depth: depth + 1)))
            }
            if wholeNode != nil, let map = joined {
                // (Not a well-formed checkpoint's shape: a node whole and in runs.)
                pairs.insert(contentsOf: Array(map), at: 0)
                joined = nil
            }
            if let wholeNode, pairs.isEmpty { return wholeNode }
            pairs.sort { ChildKey.compare($0.key, $1.key) < 0 }
            // A well-formed checkpoint never places a key twice; keep the last if it does.
            var unique: [(key: ChildKey, value: Node)] = []
            unique.reserveCapacity(pairs.count)
            for pair in pairs where !pair.value.isEmpty {
                if let last = unique.last, last.key == pair.key { unique.removeLast() }
                unique.append(pair)
            }
            if let joined, !joined.isEmpty {
                // The other pairs (selected runs' children, children with chunks of their own)
                // set over the joined runs: they win a key placed twice, as they would in the
                // sort had they come after the runs.
                let map = unique.isEmpty ? joined : joined.setting(sortedPairs: unique)
                return Node(children: map).withPriority(priorities[path])
            }
            var node = wholeNode ?? .empty
            if !unique.isEmpty {
                node =
                    wholeNode == nil
                    ? Node(children: ChildMap(sortedPairs: unique))
                    : node.merging(unique.map { (Path(keys: [$0.key]), $0.value) })
            }
            return node.withPriority(priorities[path] ?? node.priority)
        }
        return try build(.root, depth: 0)
    }

    /// The whole server cache.
    func fullCache() throws(CheckpointError) -> Node {
        try assemble(include: { _ in true }, prioritiesUnder: nil)
    }

    /// The whole server cache, and the node each chunk decoded to (for reuse by the next
    /// checkpoint: ChunkOrigins).
    ///
    /// A range chunk's decoded pairs end up, the very same nodes, among the children of the
    /// node assembled at its path: it is recorded as that node's map within its keys (a span,
    /// as a checkpoint's encoder records the chunks it writes), which the cache holds anyway,
    /// rather than as a copy of the pairs — ~90 bytes a child, kept until the next checkpoint
    /// (30 MB for 64 MiB of JSON records). Only where the map holds exactly those pairs within
    /// the chunk's keys, so that the two compare alike; a chunk overlapping another, which no
    /// writer makes, keeps its pairs.
    ///
    /// `standIns`: chunks left undecoded, each placed as its stand-in (CheckpointReader+Skeleton.swift).
    func fullCacheWithOrigins(
        standingIn standIns: Set<Int> = []
    ) throws(CheckpointError) -> (
        cache: Node, origins: ChunkOrigins
    ) {
        var nodes: [Int: ChunkOrigins.Origin] = [:]
        let chunks = directory.chunks
        let cache = try assemble(
            include: { _ in true }, prioritiesUnder: nil, standIns: standIns,
            visit: { nodes[$0] = ChunkOrigins.Origin($1, kind: chunks[$0].kind) })
        for (i, origin) in nodes {
            guard case .run(let pairs) = origin, case .range(let first, let last) = chunks[i].kind else { continue }
            let map = cache.child(at: chunks[i].path).children
            if ChunkOrigins.sameChildren(pairs, as: .span(map), first: first, last: last) { nodes[i] = .span(map) }
        }
        return (cache, ChunkOrigins(reader: self, nodes: nodes))
    }
}
