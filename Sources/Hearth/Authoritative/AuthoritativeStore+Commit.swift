// Committing the server's writes: one record of events per commit (group commit across
// committers), the watermarks updated, and — once the log since the last checkpoint is long
// enough — the tree handed with the commit checkpointed off the committing thread.

import HearthLog
import HearthModel

/// The writes of one ``AuthoritativeStore`` commit, as the engine's events: server data
/// resolved by the server (the store records it as given) and writer watermarks.
@_spi(HearthInternals) public struct AuthoritativeBatch: Sendable {
    /// The commit's time (store clock, ms), recorded in its events.
    public let now: Int64
    var events: [StoreEvent] = []

    /// Replaces the data at `path`.
    /// - Throws: ``StoreError/invalidPath(_:)`` or ``StoreError/invalidData(_:)``.
    public mutating func overwrite(_ node: Node, at path: Path) throws(StoreError) {
        events.append(try StoreBatch.serverOverwrite(node, at: path, now: now))
    }

    /// Merges children (paths relative to `path`) into the data at `path`; an empty merge
    /// records nothing.
    /// - Throws: ``StoreError/invalidPath(_:)`` or ``StoreError/invalidData(_:)``.
    public mutating func merge(_ children: [ChildUpdate], at path: Path) throws(StoreError) {
        if let merge = try StoreBatch.serverMerge(children, at: path, now: now) { events.append(merge) }
    }

    /// Records that `writer`'s writes up to `id` are applied (a watermark never goes back).
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long writer id or a
    ///   negative write id.
    public mutating func recordWriterWatermark(_ writer: String, id: Int64) throws(StoreError) {
        events.append(try StoreBatch.writerWatermark(writer, id: id, now: now))
    }

    /// Forgets the watermarks of `writers`; an empty list records nothing.
    /// - Throws: ``StoreError/invalidWriter(_:)`` for an empty or too long writer id.
    public mutating func removeWriterWatermarks(_ writers: [String]) throws(StoreError) {
        if let removed = try StoreBatch.writerWatermarksRemoved(writers) { events.append(removed) }
    }
}

extension AuthoritativeStore {
    /// What a checkpoint encodes: the tree and watermarks as of `lsn`, and the segment roll
    /// queued at that LSN (the checkpoint's install then drops every segment it covers).
    struct Snapshot: Sendable {
        let lsn: LSN
        let data: Node
        let writerWatermarks: [String: WriterWatermark]
        let origins: ChunkOrigins?
        let bytesSinceCheckpoint: Int
        let roll: Log.PendingAppend?
    }

    /// Commits the writes `build` adds as one atomic record, durable under the store's tier when
    /// this returns. `data` is the whole database with these writes applied — the caller's tree,
    /// kept (not copied) for the next checkpoint to encode; the store never applies the writes
    /// to a tree of its own. Returns the commit's LSN (the previous one for an empty batch).
    ///
    /// - Throws: what `build` throws (nothing is committed), or a log error — after which the
    ///   store refuses commits (``StoreError/poisoned(_:)``) until reopened, which recovers
    ///   exactly what reached the disk.
    @discardableResult
    @_spi(HearthInternals) public func commit(
        data: Node, _ build: (inout AuthoritativeBatch) throws(StoreError) -> Void
    ) throws(StoreError) -> LSN {
        if options.readOnly { throw .log(.readOnly(path: directory)) }
        var batch = AuthoritativeBatch(now: options.clock())
        try build(&batch)
        let events = batch.events
        let payload = EventCodec.encode(events)
        let queued = try core.withLock { (core: inout Core) throws(StoreError) -> (Log.PendingAppend, Snapshot?)? in
            if core.closed { throw .closed }
            if let why = core.poisoned { throw .poisoned(why) }
            if events.isEmpty { return nil }
            let pending: Log.PendingAppend
            do throws(LogError) {
                pending = try log.submit(payload, type: EventCodec.recordType)
            } catch {
                core.poisoned = error.description
                throw .log(error)
            }
            for e in events { WriterWatermark.apply(e, to: &core.writerWatermarks) }
            core.lastLSN = pending.lsn
            core.latest = data
            core.logBytesSinceCheckpoint += payload.count
            guard !core.checkpointRunning, core.logBytesSinceCheckpoint >= checkpointThreshold(core),
                core.logBytesSinceCheckpoint >= core.nextAttemptBytes
            else {
                return (pending, nil)
            }
            // The roll is queued right behind this record, under the lock: exactly the records
            // through the snapshot's LSN stay in the sealed segment.
            var roll: Log.PendingAppend?
            if !core.lastCheckpointFailed {
                do throws(LogError) { roll = try log.submitRoll() } catch {
                    core.poisoned = error.description
                    throw .log(error)
                }
            }
            core.checkpointRunning = true
            return (pending, snapshot(core, roll: roll))
        }
        guard let queued else { return core.withLock { $0.lastLSN } }
        let (pending, due) = queued
        do throws(LogError) { try log.wait(pending) } catch {
            core.withLock { $0.poisoned = error.description }
            if due != nil { core.withLock { $0.checkpointRunning = false } }
            throw .log(error)
        }
        // Only once the commit is durable: a checkpoint never holds a write the log lost.
        if let due {
            if options.backgroundCheckpoints {
                checkpointQueue.async { [self] in try? writeCheckpoint(due) }
            } else {
                try? writeCheckpoint(due)
            }
        }
        return pending.lsn
    }

    /// Log bytes since the last checkpoint that make the next one due: half the last checkpoint
    /// (so replay stays proportional to the data), at least ``Options/checkpointMinimumBytes``.
    func checkpointThreshold(_ core: Core) -> Int {
        max(options.checkpointMinimumBytes, Int(core.checkpointBodyBytes / 2))
    }

    /// [core locked] The snapshot a checkpoint of the state as of the last commit encodes.
    func snapshot(_ core: Core, roll: Log.PendingAppend?) -> Snapshot {
        Snapshot(
            lsn: core.lastLSN, data: core.latest, writerWatermarks: core.writerWatermarks, origins: core.origins,
            bytesSinceCheckpoint: core.logBytesSinceCheckpoint, roll: roll)
    }

    /// Encodes `snapshot` with the engine's ``CheckpointEncoder`` (as a state holding only the
    /// server data and the watermarks, so the checkpoint is a ``Store``'s byte for byte), copying
    /// the previous checkpoint's chunks whose nodes are unchanged, and installs it (FORMAT.md
    /// §8.3: written, synced and renamed into place, the MANIFEST switched, and only then the old
    /// checkpoint and the segments it covers deleted). Clears `checkpointRunning`.
    func writeCheckpoint(_ snapshot: Snapshot) throws(StoreError) {
        var installed = false
        var summary = CheckpointEncoder.Summary()
        var encoder = CheckpointEncoder(compressionLevel: options.compressionLevel)
        defer {
            let origins =
                installed
                ? log.checkpoint.flatMap { c in
                    c.lsn == snapshot.lsn
                        ? ChunkOrigins(checkpoint: c, chunks: summary.chunks, nodes: summary.origins) : nil
                } : nil
            core.withLock { core in
                core.checkpointRunning = false
                core.lastCheckpointFailed = !installed
                guard installed else {
                    core.nextAttemptBytes = core.logBytesSinceCheckpoint + options.checkpointMinimumBytes
                    return
                }
                core.nextAttemptBytes = 0
                core.checkpointLSN = max(core.checkpointLSN, snapshot.lsn)
                core.checkpointBodyBytes = summary.bodyBytes
                core.logBytesSinceCheckpoint = max(0, core.logBytesSinceCheckpoint - snapshot.bytesSinceCheckpoint)
                core.origins = origins
                core.checkpointsWritten += 1
            }
        }
        if let roll = snapshot.roll {
            // Throws only when the log is poisoned (Store+Maintenance.swift, writeCheckpoint).
            do throws(LogError) { try log.wait(roll) } catch {
                core.withLock { $0.poisoned = $0.poisoned ?? error.description }
                throw .log(error)
            }
        }
        var state = StoreState()
        state.serverCache = snapshot.data
        state.writerWatermarks = snapshot.writerWatermarks
        encoder.reuse = snapshot.origins
        encoder.recordOrigins = true
        encoder.deflateAhead = 0
        do {
            try log.installCheckpoint(lsn: snapshot.lsn) { writer in
                summary = try encoder.encode(state) { bytes in try writer.write(bytes) }
            }
        } catch {
            throw .log(error)
        }
        installed = true
    }
}
