import HearthModel

// The children a window by child, by value or by priority needs when the checkpoint has no order
// index of that ordering (the app never showed it before the checkpoint): every child's value
// is needed, so every range chunk of the location is read — but of each child only the value
// it is ordered by is decoded, and only the window's children are kept. The
// caller then reads those children as it reads an order index's (PersistedCacheReader+Window.swift),
// without building the location's 100,000-child map, its views' index or their events.

extension CheckpointReader {
    /// What ``orderWindow(of:query:margin:)`` returns, found by reading every child of `parent`
    /// instead of an order index: the children (with their stored indexed values) that a
    /// limited `query` ordered by other than the key can select given `margin` children
    /// changed or removed since, from the limit's end. `nil` when the chunks cannot tell:
    /// the query is not limited or is ordered by key, `parent` is held whole in one chunk (or
    /// in a chunk above it) or not split at all, or a child of it has chunks of its own (its
    /// value is not in one range chunk) — the caller then reads the whole location.
    ///
    /// Of each range chunk only the children's indexed values are decoded, and not kept
    /// (``indexedChildren(_:by:)``), so the memory this needs is one chunk's entries and the
    /// window, whatever the location's size.
    /// - Throws: ``CheckpointError/corrupt(file:offset:reason:)`` for a damaged chunk.
    func scannedOrderWindow(
        of parent: Path, query: QuerySpec, margin: Int
    ) throws(CheckpointError) -> [(key: ChildKey, value: Node)]? {
        guard let limit = query.limit, query.index != .key else { return nil }
        var runs: [Int] = []
        for i in chunkIndex.candidates(for: parent) {
            let c = directory.chunks[i]
            if c.path == parent, case .range = c.kind {
                runs.append(i)
            } else if c.path == parent || c.isRelevant(to: parent) {
                // Held whole, above it, or a child with chunks of its own.
                return nil
            }
        }
        if runs.isEmpty { return nil }
        let fromEnd: Bool = if case .last = limit { true } else { false }
        let needed = limit.count + margin
        // The best `needed` so far, kept sorted in the window's order from the limit's end
        // (the last entry is the one the next better child displaces): O(log needed) to find
        // where a child goes, and a child past the last one of a full window costs one compare.
        var window: [(key: ChildKey, value: Node)] = []
        window.reserveCapacity(needed + 1)
        func before(_ a: (key: ChildKey, value: Node), _ b: (key: ChildKey, value: Node)) -> Bool {
            let c = CheckpointFormat.compareIndexed(a, b)
            return fromEnd ? c > 0 : c < 0
        }
        for i in runs {
            for entry in try indexedChildren(i, by: query.index) {
                guard query.inRange(entry.key, indexedValue: entry.value) else { continue }
                if window.count == needed, let last = window.last, !before(entry, last) { continue }
                var lo = 0, hi = window.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if before(window[mid], entry) { lo = mid + 1 } else { hi = mid }
                }
                window.insert(entry, at: lo)
                if window.count > needed { window.removeLast() }
            }
        }
        return window
    }

    /// Range chunk `index`'s children with the values `index` orders them by, as an order
    /// index stores them: from the chunk's node when it is decoded already, else scanned from
    /// its raw bytes (``NodeCodec/indexedChildren(_:by:)``: only each child's indexed value is
    /// decoded) and not kept — a scan over every chunk of a location would otherwise fill the
    /// decoded-chunk memo with the whole location and evict what the views use.
    func indexedChildren(_ chunk: Int, by index: QueryIndex) throws(CheckpointError) -> [(key: ChildKey, value: Node)] {
        if case .node(let node)? = decoded.withLock({ $0.get(chunk) }) {
            if node.isLeaf || node.priority != nil { throw corrupt(chunk, "range chunk is not a plain children node") }
            return node.children.map { ($0.key, CheckpointFormat.storedIndexValue(index.indexedValue(of: $0.value))) }
        }
        let raw = try rawChunk(chunk)
        do { return try NodeCodec.indexedChildren(raw, by: index) } catch {
            throw corrupt(chunk, "range chunk: \(error)")
        }
    }
}
