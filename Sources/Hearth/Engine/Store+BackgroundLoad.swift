// The background load after open: the checkpoint's whole cache decoded and installed, and the
// waits for it (whole-state reads, close).

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// Decodes the whole checkpoint cache and installs it (background, after open).
    func finishBackgroundLoad() {
        defer { loaded.leave() }
        guard let reader = core.withLock({ $0.reader }) else { return }
        do {
            let cache = try readingCheckpoint { () throws(CheckpointError) in try reader.fullCache() }
            core.withLock {
                $0.loading.finishLoading(cache: cache)
                $0.reader = nil
            }
            reader.dropDecoded()
        } catch {
            // Damage in a chunk (or an I/O failure): reads that need it report it, whole-state
            // reads report the failure, and writes stop.
            core.withLock {
                $0.loadError = error
                $0.poisoned = "checkpoint load failed: \(error)"
            }
        }
    }

    /// Blocks until the checkpoint's server cache is fully loaded.
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
        loaded.wait()
        let core = core.withLock { $0 }
        if let e = core.loadError { throw e }
        return core
    }
}
