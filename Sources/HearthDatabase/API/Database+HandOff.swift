// Commits the app's calls make: saved on the caller's thread without a sync, made durable on the
// database's queue, and only then handed to the core (which may send them).

import Dispatch
import Hearth
import HearthModel

extension Database {
    /// The most commits that may wait on ``work`` to be made durable and handed to the core; a
    /// call that finds more waits until ``work`` has caught up, so a caller faster than the
    /// disk is slowed down instead of growing the queue (the log's commit queue has the same
    /// bound).
    static let maxHandOffs = 4096

    /// Whether the store's tier syncs (`.full`): then the app's commits are saved without a sync
    /// on the caller's thread, and ``work`` syncs them (one sync for every commit written by
    /// then). Under `.batched` and `.buffered` a commit does not sync on the caller's thread
    /// anyway, and is as durable as its tier promises when it returns.
    var defersSync: Bool { store.options.durability == .full }

    /// Commits `build` on the caller's thread without waiting for a sync; returns its LSN for
    /// ``handOff(after:_:failed:)``. Local observers see the commit at once.
    func commitWithoutSync(_ build: (inout StoreBatch) throws(StoreError) -> Void) throws(DatabaseError) -> LSN {
        try withoutSync { (durability) throws(StoreError) in try store.commit(durability: durability, build).lsn }
    }

    /// Saves an app's write as ``commitWithoutSync(_:)`` would a batch of it alone, on the
    /// store's write path (encoded and deflated before the store's lock); returns its id and LSN.
    func saveWriteWithoutSync(
        _ operation: PendingWrite.Operation, at path: Path
    ) throws(DatabaseError) -> (
        id: Int64, lsn: LSN
    ) {
        try withoutSync { (durability) throws(StoreError) in
            try store.saveWrite(operation, at: path, writer: writerID, durability: durability)
        }
    }

    /// Runs `save` at the tier that leaves the sync to ``work`` (`.buffered` when the store's
    /// own tier would sync; nil, the store's tier, otherwise) — refused once a sync failed.
    private func withoutSync<T>(_ save: (Durability?) throws(StoreError) -> T) throws(DatabaseError) -> T {
        if let failure = state.withLock({ $0.durabilityFailure }) { throw failure }
        do { return try save(defersSync ? .buffered : nil) } catch { throw DatabaseError(error) }
    }

    /// On ``work``, after the calls queued before it: makes every commit up to `lsn` durable at
    /// the store's tier, then runs `handOff` — or, when the sync fails, `failed` with the error.
    /// A failed sync poisons the store's log: every later commit is refused (the engine's rule,
    /// until the store is reopened), and every hand-off still queued fails too, so a commit
    /// that was not made durable is never sent and its caller hears of it.
    ///
    /// Call it under ``writeLock`` when the commits must reach the core in their order.
    func handOff(
        after lsn: LSN, _ handOff: @escaping @Sendable () -> Void,
        failed: @escaping @Sendable (DatabaseError) -> Void
    ) {
        let backlog = state.withLock { s in
            s.handOffs += 1
            return s.handOffs
        }
        work.async { [self] in
            let failure = makeDurable(through: lsn)
            state.withLock { $0.handOffs -= 1 }
            if let failure { failed(failure) } else { handOff() }
        }
        if backlog > Database.maxHandOffs { work.sync {} }
    }

    /// [on ``work``] Syncs the store through `lsn` (nothing to do when the tier does not sync,
    /// or when an earlier sync covered it); the failure, kept for every later call.
    private func makeDurable(through lsn: LSN) -> DatabaseError? {
        dispatchPrecondition(condition: .onQueue(work))
        if let failure = state.withLock({ $0.durabilityFailure }) { return failure }
        guard defersSync else { return nil }
        do throws(StoreError) {
            try store.waitUntilDurable(lsn)
            return nil
        } catch {
            let failure = DatabaseError(error)
            state.withLock { $0.durabilityFailure = $0.durabilityFailure ?? failure }
            Database.logger(options)("writes refused until the database is reopened: a sync failed (\(error))")
            return failure
        }
    }
}
