import HearthModel

// Views built from their windows' chunks. A `limitToLast(50)` over a location cached whole (a
// complete default query covers it) needs its window, not the location: its view is built from
// the children the window can hold, read from the checkpoint chunks that hold them (found from
// the chunk index by key, or from an order index by child, value or priority:
// PersistedCacheReader+Window.swift), so a listener's first events cost the same over 1,000 or
// 100,000 cached children. Such a view's server cache is marked filtered and the
// location is kept in `windowed`. The view is then exactly the one built from the whole
// location except for the children its server cache leaves out, which only a change can
// bring into the window (a child removed, the window refilled) or the listen's hash can see;
// so before anything reaches the view — a commit's server data, writes, acks or a listen's
// data at, above or below it, or the hash of its server cache — its server cache is completed
// with the whole location as the store has it before that change, and the view continues as
// if it had been built from it.

extension ViewHost {
    /// Runs `addListener` (which may create the view of `location`) with `cache` serving
    /// windows where a view may be built from its window's chunks — none where pending writes
    /// overlap the location (an overlaid write may remove a child, and the window then needs
    /// the next from the whole location) — and records the locations served so.
    func servingWindows<T>(
        for location: QueryLocation, _ cache: PersistedCacheReader, _ addListener: (PersistedCacheReader) -> T
    ) -> T {
        // A view that went away was complete or is to be built anew.
        if tree.eventCache(at: location.path, query: location.query) == nil { windowed.remove(location) }
        guard !cache.loading.cacheLoaded, tree.visibleWrites.childCompoundWrite(location.path).isEmpty else {
            return addListener(cache)
        }
        let windows = PersistedWindows()
        let result = addListener(cache.servingWindows(windows))
        windowed.formUnion(windows.answered)
        return result
    }

    /// Completes the server caches of the windowed views that `events` and `operations` reach,
    /// from `cache` — the store's data before they are applied. Call it before committing them.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` when a chunk of a
    ///   location to complete is damaged (the commit then fails before it is logged).
    func completeWindows(
        for events: [StoreEvent], _ operations: [StoreBatch.ViewOperation], _ cache: PersistedCacheReader
    ) throws(StoreError) {
        guard !windowed.isEmpty else { return }
        for event in events {
            switch event {
            case let .serverOverwrite(path, _, _), let .serverMerge(path, _, _):
                try completeWindows(overlapping: path, cache)
            case .writeSaved(let write):
                try completeWindows(overlapping: write.path, cache)
            case .writeAcked, .writeReverted:
                // Where the write was is the tree's; an ack is rare beside a window: all.
                try completeWindows(overlapping: nil, cache)
            default:
                break
            }
        }
        for operation in operations {
            switch operation {
            case let .taggedOverwrite(location, _, _), let .taggedMerge(location, _, _), let .listenComplete(location):
                try completeWindows(overlapping: location.path, cache)
            case .hideWrite:
                break
            }
        }
    }

    /// Completes the server caches of the windowed views at, above or below `path` (all when
    /// `nil`) from the whole locations in `cache`.
    func completeWindows(overlapping path: Path?, _ cache: PersistedCacheReader) throws(StoreError) {
        for location in windowed where path.map({ $0.contains(location.path) || location.path.contains($0) }) ?? true {
            _ = try tree.completeFilteredServerCache(at: location.path, query: location.query) {
                () throws(StoreError) -> Node in try cache.serverValue(at: location.path)
            }
            windowed.remove(location)
        }
    }
}
