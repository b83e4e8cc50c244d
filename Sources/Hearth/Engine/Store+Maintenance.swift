import Dispatch
import HearthLog
import HearthModel

// Checkpoints, the size cap and LRU pruning.
//
// Maintenance runs on one serial queue (or inline, with `backgroundMaintenance` off), never
// under the store's lock for long: a checkpoint snapshots the state (O(1): persistent
// structures), encodes and writes it while writers go on, and takes the lock again only to
// record what it did. The log switches the MANIFEST to the new checkpoint and deletes the
// segments it covers only after the checkpoint is durable.

// The disk bound (the article "The engine API", FORMAT.md §8.5). With cap K, the store's files hold
// at most 1.25 K at every instant — not only between checkpoints — as long as pruning can
// remove enough (data that active queries, pins and pending writes hold is never pruned; the
// store then reports `capExceededByUnprunableData`), and it keeps up to 0.8 K of checkpoint —
// the most recently used cache, with the rest of the state — beside it. The largest moment is a
// checkpoint install: the new checkpoint file is written and synced while the old files and the
// segments it will cover still exist. So, on disk at any instant:
//
//     F (= old checkpoint files + segments, the footprint) + new file (+ MANIFEST, ~100 bytes)
//
// where the old checkpoint files are the current checkpoint and the earlier files it reads
// chunks from (Store+ChunkFiles.swift): C, their live chunks and state plus their dead bytes
// (Store.checkpointBodyBytes). The terms:
//
// - live: pruning before every checkpoint (makeRoomForCheckpoint) brings the checkpoint,
//   estimated whole — the smaller of the cache's encoded size times the last checkpoint's
//   compression ratio, plus the other state, and F itself — to at most liveShare (0.8 K);
// - dead: compaction brings the dead bytes of the kept files to at most deadShare (0.05 K) at
//   each checkpoint, copying files' live chunks into the new file as far as the room below
//   allows (a file that does not fit is compacted at a later checkpoint with more room, once
//   its chunks die, or when the cap is enforced), so C ≤ 0.85 K;
// - log: a checkpoint is due once the log since the last one reaches its threshold, at most
//   logShare (0.1 K); writers wait for maintenance (backpressure, Backpressure.swift) once that
//   log is past 0.1 K + K/16 and, with the checkpoint, past 0.85 K + 0.1 K + K/16 (or sooner:
//   when the next new file would no longer fit beside them), so C and the log come to at most
//   1.0125 K;
// - plus K/64 between footprint checks, plus the covered head of the live segment (one
//   segment, K/32; a checkpoint rolls the segment first, which normally makes this 0, but a
//   roll may be given up — see writeCheckpoint — so the bound keeps the term);
// - so F ≤ 1.0125 + 0.047 < 1.06 K;
// - the new file: it holds only what the checkpoint does not reference where it is — the
//   changed chunks, the pending writes and indexes, and the copies compaction makes — estimated
//   as the whole checkpoint minus the old chunks still unchanged (ChunkOrigins.reusableBytes),
//   and pruned (Store.prune) until it is at most plannedPeak·K − F − K/32 (the segment the
//   checkpoint's roll creates beside F); the copies are held to what is left of that room
//   (CheckpointRoom.copyBudget). When the changed chunks alone do not fit, pruning goes on
//   until the whole checkpoint does — the bound a new file always meets.
//
// So an install peaks at plannedPeak·K (1.1 K) when the estimates are right; the 0.15 K to the
// bound absorbs their error: the compression ratio's (seen up to ~15% of what is estimated —
// here the new file and, through the live term, the checkpoint; the new file, which also holds
// the copies compaction makes into what is left of the room, is the least sure of them), and,
// with maintenance in the background, the log writers add while it is written before they wait.
// Between checkpoints F is at most C + log ≈ K, and past the cap maintenance prunes and
// checkpoints at once (enforceCap) rather than wait for the log's threshold.
//
// The price: a checkpoint every 0.1 K of log under a cap, each writing what changed beside the
// files it keeps (a design that rewrote the whole checkpoint at each install could keep only what
// fits twice beside the log, about half the cap). DiskBoundTests checks the peak on the simulated
// file system after every write; a real run is in Benchmarks/README.md, "The cap as a bound on
// disk" and "The whole cap usable, second stage".

extension Store {
    /// The checkpoint, estimated, that pruning before every checkpoint aims at, as a share of
    /// the cap: the cache (with the rest of the state) the store keeps.
    static let liveShare = 0.8

    /// The checkpoint-install peak pruning plans for, as a share of the cap (the disk bound is
    /// 1.25; the difference absorbs estimation error).
    static let plannedPeak = 1.1

    /// The log since the last checkpoint, as a share of the cap, that makes a checkpoint due
    /// (the disk bound's log term).
    static let logShare = 0.1

    /// Runs maintenance now (inline) or on the maintenance queue.
    func scheduleMaintenance(force: Bool) {
        let go = core.withLock { core -> Bool in
            if core.maintenancePending || core.closed { return false }
            core.maintenancePending = true
            return true
        }
        guard go else { return }
        if options.backgroundMaintenance {
            maintenanceQueue.async { [self] in
                try? maintain(force: force)
            }
        } else {
            try? maintain(force: force)
        }
    }

    /// How many prune-and-checkpoint steps one maintenance pass takes at most to get under
    /// the cap (a step after the first corrects an estimate made with a stale compression
    /// ratio).
    static let maxCapSteps = 3

    /// Checkpoints when the log since the last checkpoint passed its threshold, and prunes
    /// while the footprint is over the cap (or too many inactive queries are tracked).
    ///
    /// Over the cap it prunes first, by estimate, and then writes one checkpoint — which drops
    /// the pruned data and the log at once — rather than checkpointing before pruning too.
    func maintain(force: Bool) throws(StoreError) {
        defer { core.withLock { $0.maintenancePending = false } }
        // The pass ends by dropping a whole cache that pruning, a checkpoint or a whole-state
        // read loaded, unless server data was still arriving when the pass began (writers may
        // wait for the pass, so the time it takes is not quiet: Store+ResidentCache.swift).
        let startedAt = monotonicNanos()
        defer { dropResidentCacheIfQuiet(asOf: startedAt) }
        // The whole cache and the checkpoint's pending writes are decoded only if a checkpoint
        // or pruning needs them (writeCheckpoint and prune load them), not by every pass.
        if let failure = core.withLock({ $0.loadError }) { throw failure }
        let (sinceCheckpoint, threshold, closed) = core.withLock { core in
            core.bytesSinceSizeCheck = 0
            let requested = core.checkpointRequested
            core.checkpointRequested = false
            return (core.logBytesSinceCheckpoint, requested ? 0 : checkpointThreshold(core), core.closed)
        }
        if closed { return }
        let footprint = try footprintBytes()
        if footprint > options.capBytes {
            try enforceCap()
        } else {
            // Within the cap, too many inactive queries only need their metadata pruned (and
            // the cache only they held): cachePruned events, no checkpoint. A checkpoint per
            // pass would rewrite every pending write each time — and a client draining N
            // offline writes tracks a query per acknowledged write (Firebase's
            // ensureCompleteTrackedQuery), so it would pass the limit every ~maxInactiveQueries/5
            // acks: O(N) checkpoints of O(N) writes.
            if tooManyInactiveQueries() { try pruneInactiveQueries() }
            if sinceCheckpoint >= threshold {
                let room = try makeRoomForCheckpoint()
                try writeCheckpoint(room: room)
            }
            if force { core.withLock { $0.capExceededByUnprunable = false } }
        }
    }

    /// Whether more inactive queries are tracked than allowed.
    func tooManyInactiveQueries() -> Bool {
        core.withLock { Pruner.inactiveQueryCount($0.loading.state) > options.maxInactiveQueries }
    }

    /// Prunes towards the target and checkpoints, repeating (a few times at most) while the
    /// footprint stays over the cap and pruning still finds something to do; records whether
    /// the cap is exceeded by data pruning cannot remove.
    func enforceCap() throws(StoreError) {
        core.withLock {
            $0.enforcingCap = true
            $0.bytesDuringEnforcement = 0
        }
        defer { core.withLock { $0.enforcingCap = false } }
        let cap = options.capBytes
        var footprint = try footprintBytes()
        for step in 0..<Store.maxCapSteps {
            let room = try makeRoomForCheckpoint()
            if step > 0 && room.rounds == 0 { break }
            try writeCheckpoint(room: room)
            footprint = try footprintBytes()
            if footprint <= cap && !tooManyInactiveQueries() { break }
        }
        core.withLock { $0.capExceededByUnprunable = footprint > cap }
    }

    /// Writes a checkpoint of the state as of the last commit, unless one exists at that LSN.
    ///
    /// The log's active segment is rolled at the snapshot's LSN first (``Log/submitRoll()``,
    /// queued under the store's lock, so exactly the records through that LSN stay in the old
    /// segment): the install then drops every segment holding records the checkpoint covers, and
    /// the next open scans only the records after it. Without the roll, they would stay in the
    /// active segment until it filled, and every open would read them all to reach the tail
    /// (100,000 pending writes: 3.8 MB, most of a first reopen's 90 ms).
    ///
    /// The roll may fail without harm: before the new MANIFEST is renamed into place nothing
    /// durable has changed (``Log/submitRoll()``), so the log gives it up and goes on in the old
    /// segment — on a full disk the store keeps writing, and the checkpoint is written without
    /// it (the covered records then stay live until a later checkpoint's roll). After a failed
    /// checkpoint the next one does not roll, so that a disk too full for checkpoints does not
    /// fill the MANIFEST with one small segment per attempt.
    ///
    /// `afterSnapshot` (tests) runs once the snapshot is taken and the roll done, before the
    /// checkpoint is encoded: commits made there come after the checkpoint's LSN.
    ///
    /// `closing`: the checkpoint close writes. Nothing will read the new checkpoint through
    /// this store, so what its chunks hold is not recorded (for the next checkpoint to copy),
    /// nor does it become the base a resident cache drops back to (that would build a reader at
    /// every install: 27% of a fill's close).
    ///
    /// `waited`: a caller waits for it (``compact()``, and close's). Only those compress on a second
    /// thread (DeflateAhead.swift): beside writers, on two cores, it cost CPU and gained nothing.
    ///
    /// `room`: what ``makeRoomForCheckpoint()`` planned for the new file (the copies of compacted
    /// files' chunks it allows, the size writers leave room for while it is written).
    func writeCheckpoint(
        afterSnapshot: (() -> Void)? = nil, closing: Bool = false, waited: Bool = false,
        room: CheckpointRoom = CheckpointRoom()
    ) throws(StoreError) {
        // Nothing to checkpoint: do not load the whole cache for it.
        if core.withLock({ $0.lastLSN <= $0.checkpointLSN }) { return }
        // A lazily loaded cache that is not resident is checkpointed from its chunks, not loaded
        // (Store+ChunkCheckpoint.swift); the pending writes are encoded from memory either way.
        if options.lazyCacheLoad { try decodeCheckpointWrites() } else { _ = try fullyLoadedCore() }
        var source: ChunkSource?
        var origins: ChunkOrigins?
        var previousWrites: WriteChunkMemo?
        var preparedWrites: [WriteChunkMemo.Run] = []
        let (snapshot, lsn, checkpointLSN, bytesAtSnapshot, roll) = try core.withLock {
            (core: inout Core) throws(StoreError) -> (StoreState, LSN, LSN, Int, Log.PendingAppend?) in
            origins = core.cacheOrigins
            previousWrites = core.writeChunkMemo
            if options.lazyCacheLoad, !core.loading.cacheLoaded, let reader = core.reader {
                source = ChunkSource(reader: reader, events: core.loading.deferred)
            }
            guard core.loading.cacheLoaded || source != nil, core.lastLSN > core.checkpointLSN else {
                return (core.loading.state, core.lastLSN, core.lastLSN, 0, nil)
            }
            var roll: Log.PendingAppend?
            if !core.lastCheckpointFailed {
                do throws(LogError) { roll = try log.submitRoll() } catch { throw .log(error) }
            }
            checkpointSnapshotTaken(&core)
            core.installingBytes = room.newFile
            preparedWrites = takePreparedWrites(&core)
            return (core.loading.state, core.lastLSN, core.checkpointLSN, core.logBytesSinceCheckpoint, roll)
        }
        guard lsn > checkpointLSN else { return }
        defer { core.withLock { $0.installingBytes = 0 } }
        var installed = false
        var nextOrigins: ChunkOrigins?
        defer { checkpointFinished(lsn: lsn, installed: installed, origins: nextOrigins, readable: !closing) }
        if let roll {
            // Throws only when the log is poisoned: a failed sync of the old segment, or a
            // MANIFEST switch that failed midway. A roll that failed cleanly returns normally.
            do throws(LogError) { try log.wait(roll) } catch {
                core.withLock { $0.poisoned = $0.poisoned ?? error.description }
                throw .log(error)
            }
        }
        afterSnapshot?()
        var state = snapshot
        var encoder = CheckpointEncoder(
            compressionLevel: options.compressionLevel, writeCompressionLevel: options.pendingWriteCompressionLevel)
        if let source {
            let skeleton = try chunkSkeleton(source, queries: state.trackedQueries.values)
            state.serverCache = skeleton.cache
            origins = skeleton.origins
            encoder.standIns = true
            encoder.copiedOrderIndexes = skeleton.orderIndexes
        }
        encoder.reuse = origins
        encoder.previousWrites = previousWrites
        encoder.preparedWrites = preparedWrites
        // Recorded at every checkpoint but close's, not only when the cache looks likely to stay
        // resident (a guess, wrong whenever server data pauses and resumes): the disk bound counts
        // on the next install referencing the unchanged chunks, and without them it writes the
        // whole checkpoint beside the old files. A drop of the cache releases them with it. Not
        // for a checkpoint from chunks: its cache holds stand-ins, and the next one starts from
        // the new checkpoint's directory (or a load's origins) instead.
        encoder.recordOrigins = !closing && source == nil
        encoder.referenceReused = true
        encoder.compactFiles = origins.map { filesToCompact($0, copyBudget: room.copyBudget) } ?? []
        encoder.deflateAhead = closing || waited ? options.checkpointDeflateAhead : 0
        var summary = CheckpointEncoder.Summary()
        let clock = ContinuousClock()
        let start = clock.now
        do throws(LogError) {
            try log.installCheckpoint(lsn: lsn) { writer in
                summary = try encoder.encode(state) { bytes in try writer.write(bytes) }
                // Never written (CheckpointReader+Skeleton.swift); if one were, the checkpoint is
                // given up before it is installed, and the store goes on from the old one.
                if summary.standInsEncoded > 0 {
                    throw LogError.invalidArgument("a checkpoint from chunks met \(summary.standInsEncoded) stand-ins")
                }
                for id in summary.liveBytes.keys where id != CheckpointEncoder.ownFile { writer.keep(id) }
            }
        } catch {
            core.withLock { $0.lastCheckpointFailed = true }
            throw .log(error)
        }
        installed = true
        let elapsed = clock.now - start
        resident.counters.withLock { $0.add(summary) }
        // The new checkpoint's write chunks, for the next one to copy (only if it is the
        // checkpoint now installed: the handle the copies will read).
        let installedCheckpoint = log.checkpoint.flatMap { $0.lsn == lsn ? $0 : nil }
        if encoder.recordOrigins, let installedCheckpoint {
            nextOrigins = ChunkOrigins(checkpoint: installedCheckpoint, chunks: summary.chunks, nodes: summary.origins)
        }
        core.withLock { core in
            core.checkpointLSN = max(core.checkpointLSN, lsn)
            // The files the checkpoint reads: its own body and those it references.
            core.checkpointBodyBytes = summary.bodyBytes + (installedCheckpoint?.referencedBytes ?? 0)
            core.logBytesSinceCheckpoint = max(0, core.logBytesSinceCheckpoint - bytesAtSnapshot)
            if summary.rawCacheBytes > 0 {
                // The order indexes are written from the cache at every checkpoint: estimates of
                // the next checkpoint's size (the disk bound) count them as cache bytes.
                let stored = summary.storedCacheBytes + summary.orderIndexBytes
                core.compressionRatio = Double(stored) / Double(summary.rawCacheBytes)
            }
            core.checkpointsWritten += 1
            core.writeChunkMemo = installedCheckpoint.map { WriteChunkMemo(checkpoint: $0, runs: summary.writeRuns) }
            core.lastCheckpointPause = elapsed
            core.lastCheckpointFailed = false
        }
        if let source, !closing { readFromChunkCheckpoint(source, installed: installedCheckpoint) }
    }

    /// At close (on the maintenance queue): checkpoints when the log since the last checkpoint
    /// is at least ``openReplayCheckpointBytes`` — what the next open would otherwise replay
    /// record by record (12–20 µs a pending write of ~330 B) and then checkpoint in the background.
    /// Under a cap it first makes room as every checkpoint does (the disk bound). Errors are
    /// swallowed: a checkpoint that fails changes nothing durable, and the log is replayed at
    /// the next open as before. Nothing is done for a read-only, closed or poisoned store.
    func checkpointBeforeClose() {
        if options.readOnly { return }
        let due = core.withLock { core -> Bool in
            guard !core.closed, core.poisoned == nil, core.loadError == nil,
                core.logBytesSinceCheckpoint >= Store.openReplayCheckpointBytes
            else { return false }
            // Commits made here (pruning) schedule no further maintenance.
            core.maintenancePending = true
            return true
        }
        guard due else { return }
        defer { core.withLock { $0.maintenancePending = false } }
        do throws(StoreError) {
            let room = try makeRoomForCheckpoint()
            try writeCheckpoint(closing: true, room: room)
        } catch {
            // Best effort (see above).
        }
    }
}
