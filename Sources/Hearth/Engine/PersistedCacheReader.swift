// The persisted server data as the views layer is handed it: a value holding the state (with
// the server events deferred while the whole cache is not resident) and the checkpoint reader
// as of one call.

import HearthModel

/// Reads the store's persisted server data for the views: the server cache of `loading`, and
/// while the whole cache is not resident, the checkpoint chunks on the way to a location
/// (``CheckpointReader/partialCache(for:)``) with the deferred events replayed onto them.
///
/// A value the engine hands to each call that may create views (``ViewHost``), so the views
/// never call back into ``Store``. Hold it no longer than the call: a copy of the state kept
/// past it would make the next commit's mutation copy the state's storage.
struct PersistedCacheReader: ServerCacheSource {
    /// The state and the server events deferred while the cache is not resident, as of the call.
    let loading: LoadingState
    /// The checkpoint's reader while its cache is not resident (else `nil`).
    let reader: CheckpointReader?
    /// Where to record the windows served instead of whole locations (``windowCache(at:query:)``);
    /// `nil`: whole locations, as the persistence rules give them.
    var windows: PersistedWindows? = nil

    /// The server's data at `path`, without pending writes. While the cache is not resident
    /// this decodes only the checkpoint chunks on the way to `path`.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a needed chunk is damaged.
    func serverValue(at path: Path) throws(StoreError) -> Node {
        if loading.cacheLoaded { return loading.state.serverCache.child(at: path) }
        guard let reader else { return loading.serverValue(at: path, base: .empty) }
        let base = try readingCheckpoint { () throws(CheckpointError) in try reader.partialCache(for: path) }.child(
            at: path)
        return loading.serverValue(at: path, base: base)
    }

    /// The server's data at `path` restricted to the children `keys` (other children may be
    /// missing; `nil` keys: the whole value). While the cache is not resident this decodes
    /// only the checkpoint chunks holding those children.
    func serverValue(at path: Path, children keys: Set<ChildKey>?) throws(StoreError) -> Node {
        guard let keys, !loading.cacheLoaded, let reader else { return try serverValue(at: path) }
        let base = try readingCheckpoint { () throws(CheckpointError) in
            try reader.partialCache(forChildren: keys, of: path)
        }.child(at: path)
        return loading.serverChildren(keys, at: path, base: base)
    }

    // MARK: ServerCacheSource

    func serverCache(at path: Path, query: QuerySpec) -> (node: Node, complete: Bool)? {
        if let windows, let window = windowCache(at: path, query: query) {
            windows.record(QueryLocation(path: path, query: query))
            return (window, true)
        }
        // A damaged chunk reads as no data here; the damage is reported by the reads and
        // the whole-cache loads that meet it. Only the children the rules select are read
        // (while the cache is not resident, only their chunks are decoded).
        return loading.state.persistedServerCache(at: path, query: query) { keys in
            (try? serverValue(at: path, children: keys)) ?? .empty
        }
    }

    func serverCacheIsFiltered(at path: Path, query: QuerySpec) -> Bool {
        // A window: the children outside it are unknown, not absent.
        if windows?.answered.contains(QueryLocation(path: path, query: query)) == true { return true }
        return loading.state.persistedServerCacheIsFiltered(at: path, query: query)
    }
}

extension Store.Core {
    /// The persisted data as of now, to hand to the views for the length of one call.
    var persisted: PersistedCacheReader { PersistedCacheReader(loading: loading, reader: reader) }
}
