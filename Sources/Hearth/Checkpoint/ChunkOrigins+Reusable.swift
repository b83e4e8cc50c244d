import HearthModel

extension ChunkOrigins {
    /// The stored bytes, by checkpoint file id, of the chunks a checkpoint of `cache` would
    /// still find unchanged (a whole chunk whose node is the same value, a range chunk worth
    /// copying whose children are the same pairs): what the next checkpoint can reference
    /// where it is instead of writing it (``CheckpointEncoder/referenceReused``), unless its file
    /// is compacted — then it is copied into the new file.
    ///
    /// The same tests as the encoder's (``wholeChunk(at:for:)``, ``rangeChunks(at:)`` and
    /// `ChildMap.hasSamePairs`), without walking the cache: O(chunks · depth) plus, per range
    /// chunk, the changes since it was recorded — so the disk bound can ask, before a checkpoint,
    /// how much of it will be new bytes on disk. The encoder may still find a chunk unusable (a
    /// failed read, a CRC mismatch: it encodes the node then), so this is an estimate, as the
    /// compression ratio behind the whole checkpoint's is.
    func reusableBytes(in cache: Node) -> [UInt64: UInt64] {
        var out: [UInt64: UInt64] = [:]
        for (path, indices) in byPath {
            let node = cache.child(at: path)
            for i in indices {
                guard let origin = nodes[i] else { continue }
                let chunk = chunks[i]
                var unchanged = false
                switch (chunk.kind, origin) {
                case (.whole, .whole(let decoded)):
                    unchanged = Self.same(decoded, node)
                case (.range(let first, let last), _):
                    unchanged =
                        chunk.rawLength >= Self.minimumCopiedRun
                        && rangeUnchanged(origin, in: node.children, from: first, through: last)
                default:
                    break
                }
                if unchanged { out[fileID(i), default: 0] += UInt64(chunk.storedLength) }
            }
        }
        return out
    }

    /// Whether `children` hold, within `first`...`last`, exactly the pairs a range chunk
    /// recorded as `origin` (the key of both ends included: a run starts and ends at a child).
    func rangeUnchanged(
        _ origin: Origin, in children: ChildMap, from first: ChildKey, through last: ChildKey
    ) -> Bool {
        switch origin {
        case .whole: return false
        case .span(let recorded):
            return children.hasSamePairs(as: recorded, from: first, through: last, same: Self.same)
        case .run(let decoded):
            guard let head = decoded.first, let tail = decoded.last, head.key == first, tail.key == last else {
                return false
            }
            var held = ContiguousArray<(key: ChildKey, node: Node)>()
            for (key, child) in children.pairs(from: first) {
                if ChildKey.compare(key, last) > 0 || held.count > decoded.count { break }
                held.append((key, child))
            }
            return Self.sameChildren(held, as: decoded)
        }
    }
}
