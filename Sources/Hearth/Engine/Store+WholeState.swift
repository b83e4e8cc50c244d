// The whole-state reads' way to the whole cache: loaded on demand (Store+ResidentCache.swift)
// and, for the whole state, every pending write of the checkpoint decoded.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// Loads the checkpoint's whole server cache now, if it is not resident (it stays until
    /// the next maintenance pass drops it again).
    /// - Throws: the error that stopped the load, if any.
    public func waitUntilLoaded() throws(StoreError) {
        _ = try fullyLoadedCore()
    }

    /// The core once the checkpoint cache is loaded and every pending write of the checkpoint
    /// decoded; throws if either failed (a damaged write chunk then poisons the store, as a
    /// damaged cache chunk does).
    func fullyLoadedCore() throws(StoreError) -> Core {
        // The pending writes first: they do not need the cache, and the cache is then loaded
        // and copied at once (cacheLoadedCore).
        try decodeCheckpointWrites()
        return try cacheLoadedCore()
    }

    /// Decodes every pending write of the checkpoint the store was opened from; throws if that
    /// failed (a damaged write chunk then poisons the store, as a damaged cache chunk does).
    func decodeCheckpointWrites() throws(StoreError) {
        let writes = try core.withLock { (core: inout Core) throws(StoreError) in
            if let e = core.loadError { throw e }
            return core.loading.state.writes
        }
        if !writes.isDecoded {
            // Decoded outside the lock; the chunks are shared with the store's state, which
            // then reads them from memory.
            do throws(StoreError) {
                try readingCheckpoint { () throws(CheckpointError) in try writes.decodeAll() }
            } catch {
                core.withLock {
                    if $0.loadError == nil { $0.loadError = error }
                    $0.poisoned = $0.poisoned ?? "checkpoint load failed: \(error)"
                }
                throw error
            }
        }
    }

    /// The core once the checkpoint cache is loaded (pending writes may still be encoded);
    /// throws if loading failed.
    ///
    /// The load and the copy hold the resident cache's gate together, so that no maintenance
    /// pass ends between them and drops the cache (its drop takes the gate): the copy would then
    /// load it again under the store's lock — a second decode of the whole cache, on another
    /// thread, while glibc still holds the first copy's pages (`coldOpen`'s peak RSS 183 MiB
    /// instead of 106 in one run of six).
    func cacheLoadedCore() throws(StoreError) -> Core {
        try resident.gate.withLock { (_: inout Void) throws(StoreError) -> Core in
            try loadCacheHoldingGate()
            return try residentCore()
        }
    }

    /// A copy of the core with the whole cache in it. The cache loaded outside the lock may
    /// have been dropped since by a maintenance pass on its queue (which drops it when it can);
    /// a copy taken then would hold an empty server cache. So the check and the copy are one
    /// critical section, and a dropped cache is loaded again under the lock (rare: it costs
    /// the writers a wait of one load).
    func residentCore() throws(StoreError) -> Core {
        try core.withLock { (core: inout Core) throws(StoreError) -> Core in
            if let e = core.loadError { throw e }
            try loadCacheUnderLock(&core)
            precondition(core.loading.cacheLoaded, "a whole-state read copies a resident cache")
            return core
        }
    }
}
