import HearthModel

// The cache's encoded size for the disk bound's estimate before a checkpoint
// (`Store.estimatedCheckpointBytes`), without walking what the last checkpoint's chunks
// already measured: a store pruning under its cap estimates before every checkpoint, and the
// walk of a whole cache of ~30 MB of nodes was most of its maintenance thread's time, which
// writers wait for (`HearthBench fill hearth-batched-cap10`).

extension ChunkOrigins {
    /// ``NodeCodec/encodedSize(_:)`` of `node` at `path`, exactly, with every chunk whose nodes
    /// are still the ones it was recorded with counted from its raw length instead of walked:
    /// a whole chunk's raw bytes are the node's encoding, a range chunk's a children node of its
    /// run — its tag, its count, then each child's key and encoding (``CheckpointEncoder``'s
    /// `emitRun`) — so the run's share of the parent's encoding is the raw length less the tag
    /// and the count. Sameness is decided by identity (``same(_:_:)``), in O(1) a node, so the
    /// cost is a walk of what changed since the chunks were recorded and of the paths leading
    /// to them.
    func encodedSize(of node: Node, at path: Path = .root) -> Int {
        let size = measured(node, at: path)
        assert(size == NodeCodec.encodedSize(node), "the chunks' raw lengths give the walk's size")
        return size
    }

    private func measured(_ node: Node, at path: Path) -> Int {
        if let i = wholeChunk(at: path, for: node) {
            return chunks[i].rawLength
        }
        let children = node.children
        guard byPath[path] != nil || !childrenLeadingToChunks(at: path).isEmpty, !node.isLeaf, !children.isEmpty
        else { return NodeCodec.encodedSize(node) }
        let leading = childrenLeadingToChunks(at: path)
        var size = NodeCodec.childrenNodeOverhead(count: children.count, priority: node.priority)
        func pair(_ key: ChildKey, _ child: Node) -> Int {
            NodeCodec.stringSize(key.string)
                + (leading.contains(key) ? measured(child, at: path.child(key)) : NodeCodec.encodedSize(child))
        }
        // The children in key order, a range chunk's run skipped whole where its pairs are the
        // ones it recorded (compared in O(changes · log n) for a map that shares the recorded
        // one's structure, and counted by rank), walked where they changed.
        var pairs = children.makeIterator()
        var pending = pairs.next()
        for range in rangeChunks(at: path, atLeast: 0) {
            while let (key, child) = pending, ChildKey.compare(key, range.first) < 0 {
                size += pair(key, child)
                pending = pairs.next()
            }
            if rangeUnchanged(range.origin, in: children, from: range.first, through: range.last) {
                let count = children.rank(of: range.last) - children.rank(of: range.first) + 1
                size += chunks[range.index].rawLength - NodeCodec.childrenNodeOverhead(count: count, priority: nil)
                pairs = children.iterator(after: range.last)
                pending = pairs.next()
                continue
            }
            while let (key, child) = pending, ChildKey.compare(key, range.last) <= 0 {
                size += pair(key, child)
                pending = pairs.next()
            }
        }
        while let (key, child) = pending {
            size += pair(key, child)
            pending = pairs.next()
        }
        return size
    }
}
