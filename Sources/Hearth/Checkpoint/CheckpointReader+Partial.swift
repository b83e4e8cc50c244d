import HearthModel

// The partial reads of a checkpoint's cache: only the chunks on the way to a location (and,
// in a node split into key-range chunks, only the children wanted) are decoded.

extension CheckpointReader {
    /// The server cache as far as needed to read `path` exactly (other locations may be
    /// missing): only the chunks on the way to and below `path` are decoded.
    func partialCache(for path: Path) throws(CheckpointError) -> Node {
        try assemble(include: { $0.isRelevant(to: path) }, prioritiesUnder: path, within: path) { c in
            // A range chunk above `path`: only the child on the way.
            c.path.depth < path.depth && c.path.contains(path) ? [path.keys[c.path.depth]] : nil
        }
    }

    /// The server cache as far as needed to read the children `keys` of `parent` exactly
    /// (other locations may be missing): only the chunks on the way to `parent` and those
    /// holding the children are decoded — in a node split into key-range chunks, the ones
    /// whose range holds a key.
    func partialCache(forChildren keys: Set<ChildKey>, of parent: Path) throws(CheckpointError) -> Node {
        // Whether a range of `parent`'s children holds a key: a binary search of the keys in
        // key order, not a pass over them per chunk.
        let sorted = keys.sorted { ChildKey.compare($0, $1) < 0 }
        func holdsKey(_ first: ChildKey, _ last: ChildKey) -> Bool {
            var lo = 0, hi = sorted.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if ChildKey.compare(sorted[mid], first) < 0 { lo = mid + 1 } else { hi = mid }
            }
            return lo < sorted.count && ChildKey.compare(sorted[lo], last) <= 0
        }
        let include = { (c: CheckpointFormat.Chunk) -> Bool in
            if case .range(let first, let last) = c.kind, c.path == parent { return holdsKey(first, last) }
            return c.isRelevant(toChildren: keys, of: parent)
        }
        return try assemble(include: include, prioritiesUnder: parent, within: parent) { c in
            // A range chunk of `parent`: only `keys`; above it: only the child on the way.
            if c.path == parent { return keys }
            return c.path.depth < parent.depth && c.path.contains(parent) ? [parent.keys[c.path.depth]] : nil
        }
    }
}
