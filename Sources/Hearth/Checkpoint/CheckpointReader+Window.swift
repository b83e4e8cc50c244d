import HearthModel

// The children a key-ordered window needs, found from the chunk index: a large node is split
// into key-range chunks (FORMAT.md §7.1), in key order, and a child that has chunks of its own
// is named by their paths, so the last (or first) children in key order lie in the last (or
// first) chunks — a `limitToLast(50)` over 100,000 cached children reads one or two chunks.
// Other orders (by child, by value, by priority) need every child's value, or the checkpoint's
// order index of that ordering (CheckpointReader+OrderWindow.swift).

extension CheckpointReader {
    /// The keys of `parent`'s children in the checkpoint that a key-ordered, limited `query` at
    /// `parent` can select, given that `margin` children of `parent` may be removed (by server
    /// events not in the checkpoint): at least `limit + margin` children in the query's range
    /// from the limit's end, or every child in range. `nil` when the chunks cannot tell — the
    /// query is not limited or not ordered by key, `parent` is held whole in one chunk (or in
    /// a chunk above it), or not split at all — and the caller reads the whole location.
    ///
    /// Only the range chunks walked are decoded (a child with chunks of its own is counted by
    /// its key alone); the caller reads the selected children with
    /// ``partialCache(forChildren:of:)``, which finds those chunks decoded.
    func windowKeys(of parent: Path, query: QuerySpec, margin: Int) throws(CheckpointError) -> Set<ChildKey>? {
        guard case .key = query.index, let limit = query.limit else { return nil }
        // The pieces of `parent`'s children in key order: key-range runs, and single children
        // with chunks of their own (one piece per child however deep its chunks).
        var runs: [(first: ChildKey, last: ChildKey, chunk: Int)] = []
        var own = Set<ChildKey>()
        for i in chunkIndex.candidates(for: parent) {
            let c = directory.chunks[i]
            if c.path == parent, case let .range(first, last) = c.kind {
                runs.append((first, last, i))
            } else if c.path.depth > parent.depth, parent.contains(c.path) {
                own.insert(c.path.keys[parent.depth])
            } else if c.path == parent || c.isRelevant(to: parent) {
                // Held whole at `parent` or in a chunk above it: small, read whole.
                return nil
            }
        }
        if runs.isEmpty { return nil }
        var pieces: [(first: ChildKey, last: ChildKey, chunk: Int?)] = runs.map { ($0.first, $0.last, $0.chunk) }
        pieces += own.map { ($0, $0, nil) }
        pieces.sort { ChildKey.compare($0.first, $1.first) < 0 }
        let bound = { (b: QueryBound?) -> ChildKey? in
            if case .string(let s)? = b?.value.leafValue { return ChildKey(s) }
            return nil
        }
        let (start, end) = (bound(query.start), bound(query.end))
        let needed = limit.count + margin
        var keys = Set<ChildKey>()
        var found = 0
        let order: [Int] = if case .last = limit { Array(pieces.indices.reversed()) } else { Array(pieces.indices) }
        for p in order {
            let piece = pieces[p]
            // A piece wholly outside the range holds nothing the query selects.
            if let start, ChildKey.compare(piece.last, start) < 0 { continue }
            if let end, ChildKey.compare(piece.first, end) > 0 { continue }
            if let i = piece.chunk {
                for child in try chunk(i).children where query.inRange(child.key, child.value) {
                    keys.insert(child.key)
                    found += 1
                }
            } else if query.inRange(piece.first, .empty) {
                // Ordered by key, the range is a range of keys: the value is not read.
                keys.insert(piece.first)
                found += 1
            }
            if found >= needed { break }
        }
        return keys
    }
}
