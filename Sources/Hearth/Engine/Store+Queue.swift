// The part of a commit shared by ``Store/commit(durability:_:)`` and the one-write fast path
// (``Store/saveWrite(_:at:durability:)``): the record queued under the store's lock (fixing its
// LSN), the state and the views brought up to it, and — after the lock — the wait for the tier.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// [core locked] Queues `payload` (the encoded `events`) in the log, applies the events to
    /// the state and the views, and says whether maintenance is due, whether a preparation of
    /// write chunks is (Store+WritePreparation.swift), and whether the writer must wait for
    /// maintenance. `core.views.prepare(for: events)` must have run.
    ///
    /// The record is queued here, which fixes its LSN — the order states are applied in — and
    /// written and synced after the lock is released (``awaitTier(_:)``),
    /// so that concurrent committers share one write and one fsync (group commit).
    /// - Throws: a log error; the store is then poisoned.
    func queue(
        _ events: [StoreEvent], _ viewOperations: [StoreBatch.ViewOperation], payload: RecordPayload,
        tier: Durability, now: Int64, plainWrite: Int64? = nil, _ core: inout Core
    ) throws(StoreError) -> Queued {
        try core.views.completeWindows(for: events, viewOperations, core.persisted)
        let pending: Log.PendingAppend
        do throws(LogError) {
            switch payload {
            case .whole(let bytes): pending = try log.submit(bytes, type: EventCodec.recordType, durability: tier)
            case .split(let split): pending = try log.submit(split, type: EventCodec.recordType, durability: tier)
            }
        } catch {
            core.poisoned = error.description
            throw .log(error)
        }
        for e in events { core.loading.apply(e) }
        if events.contains(where: \.isServerData) { core.lastServerEventNanos = monotonicNanos() }
        // The views follow the state in the same order; their events are queued while the
        // lock is held, so handlers see commits in LSN order.
        let deliveries = core.views.apply(events, viewOperations, core.persisted, now: now, plainWrite: plainWrite)
        if !deliveries.isEmpty { eventQueue.async { for (e, handler) in deliveries { handler(e) } } }
        core.lastLSN = pending.lsn
        core.logBytesSinceCheckpoint += payload.rawCount
        core.bytesSinceSizeCheck += payload.rawCount
        let maintain =
            !core.maintenancePending
            && (core.bytesSinceSizeCheck >= options.effectiveSizeCheckInterval
                || core.logBytesSinceCheckpoint >= checkpointThreshold(core))
        // Backpressure (the disk bound's log term, Store+Maintenance.swift): writers wait
        // for maintenance once the log since the checkpoint has grown by a sixteenth of the
        // cap while the cap is enforced, or has passed the cap's log share (0.1 K, the most
        // the threshold can be) by a sixteenth of the cap and the footprint it makes with the
        // checkpoint has grown as far as the bound lets it (Backpressure.swift) — so a
        // sustained burst cannot outrun checkpoints and pruning. Not the threshold itself
        // plus the slack: for a store well under its cap the threshold is half the last
        // checkpoint, a writer faster than the checkpoints then waited for every other one
        // (a 50 MiB fill under a 100 MiB cap spent a quarter of its time there), and the bound
        // needs only this.
        if core.enforcingCap { core.bytesDuringEnforcement += payload.rawCount }
        let slack = options.cacheSizeBytes / 16
        let backpressure =
            core.bytesDuringEnforcement > slack
            || Store.writersWait(
                log: core.logBytesSinceCheckpoint, checkpoint: core.checkpointBodyBytes,
                ratio: core.compressionRatio, cacheSizeBytes: options.cacheSizeBytes, installing: core.installingBytes)
        let prepare =
            events.contains(where: \.isWriteSaved) && notePreparation(rawCount: payload.rawCount, &core)
        return Queued(pending: pending, maintain: maintain, prepare: prepare, backpressure: backpressure)
    }

    /// What ``queue(_:_:payload:tier:now:plainWrite:_:)`` queued, and what the writer does
    /// after the lock (``awaitTier(_:)``).
    struct Queued {
        /// The record in the log.
        let pending: Log.PendingAppend
        /// Maintenance is due.
        let maintain: Bool
        /// A preparation of write chunks is due.
        let prepare: Bool
        /// The writer waits for maintenance.
        let backpressure: Bool
    }

    /// [core not locked] Returns once the queued record's tier holds, then schedules the
    /// maintenance and preparation ``queue(_:_:payload:tier:now:plainWrite:_:)`` found due,
    /// and waits for maintenance under backpressure.
    ///
    /// A failure leaves the state ahead of the log (the events were applied when queued), so
    /// the store refuses writes until it is reopened — which recovers exactly what reached the
    /// disk.
    func awaitTier(_ queued: Queued) throws(StoreError) {
        do throws(LogError) { try log.wait(queued.pending) } catch {
            core.withLock { $0.poisoned = error.description }
            throw .log(error)
        }
        if queued.prepare { schedulePreparation() }
        if queued.maintain { scheduleMaintenance(force: false) }
        if queued.backpressure && DispatchQueue.getSpecific(key: Store.onMaintenanceQueue) != true {
            core.withLock { $0.backpressureWaits += 1 }
            maintenanceQueue.sync {}
        }
    }

    /// How many commits waited for maintenance (backpressure) since the store opened.
    @_spi(HearthInternals) public var backpressureWaitCount: Int { core.withLock { $0.backpressureWaits } }

    /// The log's group-commit gathers since the store opened, and those that ended at their
    /// time limit (the log's `gatherCounts`): what the durable-write benchmarks print beside their
    /// rates.
    @_spi(HearthInternals) public var groupCommitGathers: (gathers: Int, timeouts: Int) { log.gatherCounts }

    /// [core locked] The commit of one validated user write whose path and data were encoded
    /// and deflated before the lock (`body`, `deflatedBody`): under the lock only its id is
    /// taken, its record queued (the id's bytes stored ahead of the deflated body, one raw
    /// DEFLATE stream: `SplitPayload`) and its event applied. The same record payload, state and
    /// views as a ``StoreBatch/saveWrite(_:at:)`` commit. `plain`: the caller found that the
    /// write holds no server value (so the views need not look for one under the lock).
    func queueWrite(
        _ operation: PendingWrite.Operation, at path: Path, body: EventCodec.WriteBody, deflatedBody: [UInt8]?,
        plain: Bool, tier: Durability, now: Int64, _ core: inout Core
    ) throws(StoreError) -> (id: Int64, queued: Queued) {
        if core.closed { throw .closed }
        if let why = core.poisoned { throw .poisoned(why) }
        let id = core.loading.state.lastWriteID + 1
        let events: [StoreEvent] = [.writeSaved(PendingWrite(id: id, path: path, operation: operation))]
        try core.views.prepare(for: events)
        let queued = try queue(
            events, [],
            payload: .split(
                SplitPayload(head: EventCodec.writeSavedHead(id: id), tail: body.bytes, deflatedTail: deflatedBody)),
            tier: tier, now: now, plainWrite: plain ? id : nil, &core)
        keepBody(body, of: id, &core)
        return (id, queued)
    }
}

/// A record's payload as ``Store/queue(_:_:payload:tier:now:plainWrite:_:)`` takes it: whole, or split in a
/// head known under the lock and a tail deflated before it.
enum RecordPayload {
    case whole([UInt8])
    case split(SplitPayload)

    /// The payload's raw (uncompressed) length: what the log-size accounting counts.
    var rawCount: Int {
        switch self {
        case .whole(let bytes): bytes.count
        case .split(let split): split.rawCount
        }
    }
}
