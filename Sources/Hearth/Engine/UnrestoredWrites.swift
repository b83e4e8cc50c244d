import HearthModel

/// The pending writes as of open that the views have not been given yet, and which of them a
/// location needs (``ViewHost``).
///
/// Opening a store does not give its pending writes to the sync tree: a read, a view or a new
/// write at a location first takes out the writes that touch it (``takeRegion(of:)``), decoding
/// only the checkpoint chunks whose directory summary says they may hold one. So the first
/// read after opening a store with 100,000 pending writes decodes a chunk or two, not all.
///
/// Why giving the tree only some writes, late, is exact. A write *touches* the locations at and
/// below its path (for an update, its location: conservative). The overlay at a location
/// depends only on the writes touching it or lying below it, applied in id order; writes at
/// disjoint locations commute. The set taken for a location `P` is every unrestored write at
/// or below `R`, where `R` is the highest location at or above `P` holding an unrestored write
/// (`P` itself when none does). No unrestored write lies above `R`, so every unrestored write
/// left afterwards is disjoint from every write taken — and, since each location a view, read
/// or new write uses was taken first, from everything the tree holds. Hence, invariant: no
/// unrestored write touches or lies below a location of any write in the tree, any view, or
/// any write to come (which is taken for first); giving later writes older than the tree's
/// never reorders two writes that overlap, and raises no events (no view overlaps them).
struct UnrestoredWrites {
    /// Chunks not yet decoded into `byPath` (their writes all unrestored, less `removed`).
    private var lazy: [LazyWriteChunk]
    /// Decoded unrestored writes by path (several writes may share one), each list in id order.
    private var byPath = PathTrie<[PendingWrite]>()
    private var pathOfID: [Int64: Path] = [:]
    /// Ids of chunk writes that are no longer pending (or were replaced): never restored.
    private var removed: Set<Int64>
    /// The least and greatest path of every lazy chunk (in ``CheckpointFormat/pathOrder(_:_:)``):
    /// a location outside them needs no chunk decoded, in O(depth) — new writes at new keys
    /// beyond the ones pending at open (push ids grow) pay nothing for the chunks.
    private var lazyMin: Path = .root
    private var lazyMax: Path = .root

    /// Nothing to restore.
    init() {
        lazy = []
        removed = []
    }

    /// The pending writes of `list` (the state as of open).
    init(_ list: PendingWriteList) {
        lazy = list.chunks
        removed = list.hidden
        if let first = lazy.first {
            lazyMin = first.entry.minPath
            lazyMax = first.entry.maxPath
            for chunk in lazy.dropFirst() {
                if CheckpointFormat.pathOrder(chunk.entry.minPath, lazyMin) < 0 { lazyMin = chunk.entry.minPath }
                if CheckpointFormat.pathOrder(chunk.entry.maxPath, lazyMax) > 0 { lazyMax = chunk.entry.maxPath }
            }
        }
        for write in list.loose { add(write) }
    }

    /// Whether some lazy chunk may hold a write at `path` or at or below it (by the bounds
    /// alone: true is not certain).
    private func lazyMayReach(_ path: Path, below: Bool) -> Bool {
        guard !lazy.isEmpty else { return false }
        if below {
            if path.isRoot { return true }
            if CheckpointFormat.pathOrder(lazyMax, path) < 0 { return false }
            return CheckpointFormat.pathOrder(lazyMin, path) <= 0 || path.contains(lazyMin)
        }
        return CheckpointFormat.pathOrder(lazyMin, path) <= 0 && CheckpointFormat.pathOrder(path, lazyMax) <= 0
    }

    /// Whether every write has been restored or removed.
    var isEmpty: Bool { lazy.isEmpty && pathOfID.isEmpty }

    private mutating func add(_ write: PendingWrite) {
        var list = byPath.value(at: write.path) ?? []
        list.append(write)
        byPath.set(write.path, list)
        pathOfID[write.id] = write.path
    }

    /// Forgets a write that is no longer pending (acknowledged or reverted before the views
    /// needed it).
    mutating func remove(_ id: Int64) {
        if let path = pathOfID.removeValue(forKey: id) {
            let rest = (byPath.value(at: path) ?? []).filter { $0.id != id }
            byPath.set(path, rest.isEmpty ? nil : rest)
        } else if !lazy.isEmpty {
            removed.insert(id)
        }
    }

    /// Decodes the lazy chunks `wanted` selects into `byPath`.
    private mutating func decode(where wanted: (CheckpointFormat.WriteChunk) -> Bool) throws(StoreError) {
        var i = 0
        while i < lazy.count {
            guard wanted(lazy[i].entry) else {
                i += 1
                continue
            }
            for write in try readingCheckpoint({ () throws(CheckpointError) in try lazy[i].writes() })
            where !removed.contains(write.id) { add(write) }
            lazy.remove(at: i)
        }
        if lazy.isEmpty { removed = [] }
    }

    /// Takes out, in id order, every unrestored write the views need before they touch `path`
    /// (see the type's discussion): those at or below the highest location at or above `path`
    /// that holds one.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` when a chunk that may
    ///   hold such a write is damaged (nothing is taken then).
    mutating func takeRegion(of path: Path) throws(StoreError) -> [PendingWrite] {
        if isEmpty { return [] }
        var ancestors: [Path] = []
        var keys = path.keys
        while !keys.isEmpty {
            keys.removeLast()
            ancestors.append(Path(keys: keys))
        }
        let reached = ancestors.filter { lazyMayReach($0, below: false) }
        if lazyMayReach(path, below: true) || !reached.isEmpty {
            try decode { chunk in
                chunk.mayHoldWrites(atOrBelow: path) || reached.contains { chunk.mayHoldWrite(at: $0) }
            }
        }
        // The highest location on the way to `path` holding a write.
        var top = path
        for ancestor in ancestors.reversed() where byPath.value(at: ancestor) != nil {
            top = ancestor
            break
        }
        if top != path && lazyMayReach(top, below: true) { try decode { $0.mayHoldWrites(atOrBelow: top) } }
        var taken: [PendingWrite] = byPath.value(at: top) ?? []
        for below in byPath.entries(below: top) { taken += byPath.value(at: below) ?? [] }
        guard !taken.isEmpty else { return [] }
        byPath.set(top, nil)
        byPath.removeEntries(below: top)
        for write in taken { pathOfID[write.id] = nil }
        taken.sort { $0.id < $1.id }
        return taken
    }
}
