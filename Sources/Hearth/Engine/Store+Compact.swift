import HearthLog

// `compact()`: the maintenance pass a caller asks for and waits on (the `hearth compact` tool,
// an app going to the background). Store+Maintenance.swift has the passes it runs.

extension Store {
    /// Checkpoints now, prunes if over the cap, and drops dead log. Returns the footprint
    /// before and after, in bytes.
    @discardableResult
    public func compact() throws(StoreError) -> (before: UInt64, after: UInt64) {
        if options.readOnly { throw .log(.readOnly(path: directory)) }
        // Nothing since the checkpoint and the cache not resident: no checkpoint to write. A
        // lazily loaded cache that is not resident is checkpointed from its chunks, not loaded
        // (Store+ChunkCheckpoint.swift).
        let due = core.withLock { $0.lastLSN > $0.checkpointLSN || $0.loading.cacheLoaded }
        if due && !options.lazyCacheLoad {
            _ = try fullyLoadedCore()
        } else if due {
            try decodeCheckpointWrites()
        } else if let failure = core.withLock({ $0.loadError }) {
            throw failure
        }
        let before = try footprintBytes()
        let result = maintenanceQueue.sync { () -> Result<Void, StoreError> in
            core.withLock { $0.maintenancePending = true }
            defer { core.withLock { $0.maintenancePending = false } }
            do throws(StoreError) {
                if due {
                    let room = try makeRoomForCheckpoint()
                    try writeCheckpoint(waited: true, room: room)
                }
                if try footprintBytes() > options.capBytes || tooManyInactiveQueries() {
                    try enforceCap()
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        dropResidentCache()
        let after = try footprintBytes()
        core.withLock { $0.capExceededByUnprunable = after > options.capBytes }
        return (before, after)
    }
}
