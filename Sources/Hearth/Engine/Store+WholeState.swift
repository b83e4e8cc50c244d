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
        let loadedCore = try cacheLoadedCore()
        let writes = loadedCore.loading.state.writes
        if writes.isDecoded { return loadedCore }
        // Decoded outside the lock; the chunks are shared with the store's state, which then
        // reads them from memory.
        do throws(StoreError) { try readingCheckpoint { () throws(CheckpointError) in try writes.decodeAll() } } catch {
            core.withLock {
                if $0.loadError == nil { $0.loadError = error }
                $0.poisoned = $0.poisoned ?? "checkpoint load failed: \(error)"
            }
            throw error
        }
        return core.withLock { $0 }
    }

    /// The core once the checkpoint cache is loaded (pending writes may still be encoded);
    /// throws if loading failed.
    func cacheLoadedCore() throws(StoreError) -> Core {
        try ensureCacheLoaded()
        let core = core.withLock { $0 }
        if let e = core.loadError { throw e }
        return core
    }
}
