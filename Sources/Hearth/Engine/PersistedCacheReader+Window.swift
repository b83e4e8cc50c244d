// A limited view over a location cached whole, built from the checkpoint chunks its window
// needs rather than the whole location: found from the chunk index when ordered by key
// (CheckpointReader+Window.swift), from the checkpoint's order index of that ordering otherwise
// (CheckpointReader+OrderWindow.swift), or, with no such index, from a pass over the location's
// range chunks that keeps only the window (CheckpointReader+ScanWindow.swift). The views layer completes the view's server cache from
// the whole location before anything changes it (ViewHost+Windows.swift).

import HearthModel

/// The locations whose views a ``PersistedCacheReader`` served a window rather than the whole
/// location, during one call of the views layer. Used only under the store's lock.
final class PersistedWindows: @unchecked Sendable {
    /// The query locations served a window, in order.
    private(set) var answered: [QueryLocation] = []

    func record(_ location: QueryLocation) { answered.append(location) }
}

extension PersistedCacheReader {
    /// This reader, serving limited queries over a location cached whole with the children
    /// their windows need (recorded in `windows`) instead of the whole location.
    func servingWindows(_ windows: PersistedWindows) -> PersistedCacheReader {
        PersistedCacheReader(loading: loading, reader: reader, windows: windows)
    }

    /// The server cache of a limited `query` at `path` that the persistence rules serve the
    /// whole location (a complete default query covers it): its children that the query's
    /// window can hold, read from the chunks holding them — complete for the window (the same
    /// window as the whole location's), not for the location. `nil` when that is not known
    /// from the checkpoint: the cache is resident (no chunks to spare), the location is held
    /// whole in one chunk (or, ordered by other than the key without an order index of that
    /// ordering, a child of it has chunks of its own), a server event since the checkpoint wrote at
    /// or above `path`, or a chunk or index run needed is damaged or disagrees with the other.
    func windowCache(at path: Path, query: QuerySpec) -> Node? {
        guard !loading.cacheLoaded, let reader, query.limit != nil else { return nil }
        let state = loading.state
        guard state.isServerCacheComplete(path: path, query: query) else { return nil }
        // A complete filtered query of its own is served its tracked keys (the rules' case).
        if let own = state.trackedQuery(at: QueryLocation(path: path, query: query)), own.complete, own.keys != nil {
            return nil
        }
        // The children the server events since the checkpoint wrote: each may add a child to
        // the window or remove one from it.
        var written = Set<ChildKey>()
        func note(_ target: Path) -> Bool {
            if target.contains(path) { return false }
            if path.contains(target) { written.insert(target.keys[path.depth]) }
            return true
        }
        for event in loading.deferred {
            switch event {
            case .serverOverwrite(let target, _, _):
                guard note(target) else { return nil }
            case let .serverMerge(target, children, _):
                guard target.contains(path) || path.contains(target) else { continue }
                for child in children { guard note(target.appending(child.path)) else { return nil } }
            case .cachePruned(let result):
                // What a prune keeps below the location is not one child each: read it whole.
                for p in result.prunedPaths where p.contains(path) || path.contains(p) { return nil }
            default:
                break
            }
        }
        do {
            var keys: Set<ChildKey>
            var indexed: [(key: ChildKey, value: Node)] = []
            if case .key = query.index {
                guard let found = try reader.windowKeys(of: path, query: query, margin: written.count) else {
                    return nil
                }
                keys = found
            } else {
                // Without an order index of this ordering, every child's value is read, but
                // only the window's children are kept.
                let found =
                    try reader.orderWindow(of: path, query: query, margin: written.count)
                    ?? reader.scannedOrderWindow(of: path, query: query, margin: written.count)
                guard let found else { return nil }
                indexed = found
                keys = Set(found.map(\.key))
            }
            keys.formUnion(written)
            let base = try reader.partialCache(forChildren: keys, of: path).child(at: path)
            // The index and the chunks were written from one state: a child the index names
            // that the chunks lack, or hold with a value ordered elsewhere, is damage the CRCs
            // missed. Never a window from it: the whole location is read instead.
            for entry in indexed {
                let child = base.child(entry.key)
                let value = CheckpointFormat.storedIndexValue(query.index.indexedValue(of: child))
                guard !child.isEmpty, Node.compareForOrdering(value, entry.value) == 0 else { return nil }
            }
            return loading.serverChildren(keys, at: path, base: base)
        } catch {
            // Read through the whole location, which meets and reports the damage.
            return nil
        }
    }
}
