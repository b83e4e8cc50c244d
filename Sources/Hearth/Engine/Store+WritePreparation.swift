// Pending-write chunks prepared between checkpoints (PreparedWriteChunks.swift says why): once
// commits holding saved writes have added `preparationBytes` to the log, the maintenance
// queue cuts the full chunks of the writes saved since the last prepared one, and the next
// checkpoint writes those still exact as they are.

import Dispatch
import HearthModel

extension Store {
    /// The chunks prepared since the last checkpoint's snapshot, and what is due (in `Core`).
    struct PreparedWrites: Sendable {
        /// In id order; every id above the last checkpoint snapshot's last write id.
        var runs: [WriteChunkMemo.Run] = []
        /// Writes with ids up to this are in `runs` or were in a checkpoint's snapshot: the
        /// next preparation starts after it.
        var throughID: Int64 = 0
        /// Raw log bytes of commits saving writes since the last preparation was scheduled.
        var bytesSinceScheduled = 0
        /// A preparation is scheduled or running.
        var scheduled = false
        /// The bodies of the writes saved by ``Store/saveWrite(_:at:durability:)`` after
        /// `throughID` (ids increasing), encoded before the store's lock: a preparation does not
        /// encode them again.
        var bodies: [CheckpointEncoder.EncodedWrite] = []
    }

    /// [core locked] Keeps the body of write `id`, just saved, for the next preparation.
    func keepBody(_ body: EventCodec.WriteBody, of id: Int64, _ core: inout Core) {
        guard !options.readOnly else { return }
        assert(core.preparedWrites.bodies.last.map { $0.id < id } ?? true, "bodies are kept in id order")
        core.preparedWrites.bodies.append(CheckpointEncoder.EncodedWrite(id: id, body: body))
    }

    /// A preparation is due after this many raw log bytes of commits that save writes: two
    /// chunks' worth, so that one pass cuts at least one full chunk and the writes it leaves
    /// for the next (under a chunk) are at most a third of what it encodes.
    static let preparationBytes = 2 * CheckpointFormat.writeChunkTarget

    /// [core locked] Counts a commit of `rawCount` log bytes holding saved writes; says whether
    /// a preparation is now due (and marks it scheduled: the caller runs
    /// ``prepareWriteChunks()`` after the lock).
    func notePreparation(rawCount: Int, _ core: inout Core) -> Bool {
        core.preparedWrites.bytesSinceScheduled += rawCount
        guard !options.readOnly, !core.preparedWrites.scheduled,
            core.preparedWrites.bytesSinceScheduled >= Store.preparationBytes
        else { return false }
        core.preparedWrites.scheduled = true
        core.preparedWrites.bytesSinceScheduled = 0
        return true
    }

    /// [core not locked] Runs ``prepareWriteChunks()`` on the maintenance queue (inline
    /// without ``Options/backgroundMaintenance``, like maintenance).
    func schedulePreparation() {
        if options.backgroundMaintenance {
            maintenanceQueue.async { [self] in prepareWriteChunks() }
        } else {
            prepareWriteChunks()
        }
    }

    /// Cuts and compresses the full chunks of the pending writes saved after the last prepared
    /// one, outside the lock, and keeps them for the next checkpoint. A checkpoint snapshot
    /// taken meanwhile holds those writes already: the chunks are then dropped.
    func prepareWriteChunks() {
        let taken = core.withLock {
            core -> (writes: [PendingWrite], bodies: [CheckpointEncoder.EncodedWrite], after: Int64)? in
            guard !core.closed, core.poisoned == nil else {
                core.preparedWrites.scheduled = false
                return nil
            }
            let after = core.preparedWrites.throughID
            // Taken, not copied: the commits meanwhile append to a new array.
            defer { core.preparedWrites.bodies = [] }
            return (core.loading.state.writes.loose.writes(above: after), core.preparedWrites.bodies, after)
        }
        guard let taken else { return }
        let runs = CheckpointEncoder.preparedWriteChunks(
            taken.writes, bodies: taken.bodies[...], level: options.pendingWriteCompressionLevel)
        core.withLock { core in
            core.preparedWrites.scheduled = false
            guard core.preparedWrites.throughID == taken.after else { return }
            // The bodies of the writes left for the next preparation go back ahead of the ones
            // kept meanwhile (all newer).
            let through = runs.last?.entry.lastID ?? taken.after
            let rest = taken.bodies.drop(while: { $0.id <= through })
            if !rest.isEmpty { core.preparedWrites.bodies.insert(contentsOf: rest, at: 0) }
            guard let last = runs.last else { return }
            core.preparedWrites.runs += runs
            core.preparedWrites.throughID = last.entry.lastID
        }
    }

    /// [core locked] At a checkpoint's snapshot: hands the prepared chunks to its encoder, and
    /// starts the next preparation after every write the snapshot holds.
    func takePreparedWrites(_ core: inout Core) -> [WriteChunkMemo.Run] {
        defer {
            core.preparedWrites.runs = []
            core.preparedWrites.bodies = []
            core.preparedWrites.throughID = max(core.preparedWrites.throughID, core.loading.state.lastWriteID)
        }
        return core.preparedWrites.runs
    }
}
