import HearthModel

// The encoded size of the cache a skeleton stands for (CheckpointReader+Skeleton.swift), from the
// chunk table instead of a load: `Store.stats()`'s server cache size and the disk bound's estimate
// before a prune of a cache that is not resident (Store+ChunkSizes.swift).
//
// Why it is exact. ``NodeCodec/encodedSize(_:)`` of a children node is its tag, its count, its
// priority and, per child, the key and the child's encoding. A whole chunk's raw bytes are the
// encoding of the node at its path, so a whole stand-in counts its raw length. A range chunk's raw
// bytes are a children node of its run (tag, count, the pairs: ``CheckpointEncoder``'s `emitRun`),
// so its pairs take the raw length less the tag and the count — and the parent's count gains the
// run's count, which the chunk table does not hold: it is the varint after the tag, read from the
// chunk's raw bytes (the chunk is inflated, not decoded; no node is built). Everything else in
// the skeleton is the real data (decoded chunks, events applied) and is walked.

extension CheckpointReader {
    /// ``NodeCodec/encodedSize(_:)`` of the cache a ``Skeleton`` stands for, at any path of it,
    /// with every stand-in counted from its chunk's raw length.
    struct SkeletonMeasure: Sendable {
        let chunks: [CheckpointFormat.Chunk]
        /// The chunks stood in for.
        let standIns: Set<Int>
        /// The number of children of each range chunk stood in for.
        let runCounts: [Int: Int]
        /// For each stand-in's path and its ancestors: the keys of its children that lead to a
        /// stand-in (so that a node leading to none is measured by ``NodeCodec`` directly).
        let leading: [Path: Set<ChildKey>]

        /// The encoded size of the node `node` at `path` of the skeleton stands for.
        func encodedSize(of node: Node, at path: Path) -> Int {
            guard !node.isLeaf, !node.isEmpty, let leadingKeys = leading[path] else {
                return NodeCodec.encodedSize(node)
            }
            if let i = standIn(node, at: path), case .whole = chunks[i].kind { return chunks[i].rawLength }
            var count = 0
            var size = 0
            for (key, child) in node.children {
                if let i = standIn(child, at: path), case .range(let first, _) = chunks[i].kind, first == key,
                    let n = runCounts[i]
                {
                    count += n
                    size += chunks[i].rawLength - NodeCodec.childrenNodeOverhead(count: n, priority: nil)
                    continue
                }
                count += 1
                size += NodeCodec.stringSize(key.string)
                size +=
                    leadingKeys.contains(key)
                    ? encodedSize(of: child, at: path.child(key)) : NodeCodec.encodedSize(child)
            }
            return NodeCodec.childrenNodeOverhead(count: count, priority: node.priority) + size
        }

        /// The chunk `node` stands in for, if it is a stand-in of a chunk at `path` (a whole one
        /// is the node at its path; a range one the child under its first key there).
        private func standIn(_ node: Node, at path: Path) -> Int? {
            guard CheckpointReader.isStandIn(node),
                case .number(let d)? = node.child(CheckpointReader.standInKey).leafValue,
                let i = Int(exactly: d), standIns.contains(i), chunks[i].path == path
            else { return nil }
            return i
        }
    }

    /// The measure of `skeleton`: reads the count of every range chunk it stands in for from the
    /// chunk's raw bytes (checked against its CRC, inflated, not decoded).
    func measure(_ skeleton: Skeleton) throws(CheckpointError) -> SkeletonMeasure {
        let chunks = directory.chunks
        var runCounts: [Int: Int] = [:]
        var leading: [Path: Set<ChildKey>] = [:]
        for i in skeleton.standIns {
            if case .range = chunks[i].kind { runCounts[i] = try runCount(i) }
            var p = chunks[i].path
            if leading[p] == nil { leading[p] = [] }
            while let parent = p.parent, let key = p.back {
                leading[parent, default: []].insert(key)
                p = parent
            }
        }
        return SkeletonMeasure(chunks: chunks, standIns: skeleton.standIns, runCounts: runCounts, leading: leading)
    }

    /// The number of children range chunk `index` holds: the count after its children node's tag.
    func runCount(_ index: Int) throws(CheckpointError) -> Int {
        let raw = try rawChunk(index)
        var r = ByteReader(raw)
        do throws(DecodeError) {
            guard try r.u8() == 0x07 else { throw r.fail("range chunk is not a plain children node") }
            let count = try r.count(limit: r.remaining / 3)
            guard count > 0 else { throw r.fail("children node without children") }
            return count
        } catch {
            throw corrupt(index, "\(error)")
        }
    }
}
