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
// store then reports `capExceededByUnprunableData`). The largest moment is a checkpoint install:
// the new checkpoint is written and synced while the old one and the segments it will cover
// still exist. So, on disk at any instant:
//
//     F (= old checkpoint files + segments, the footprint) + new checkpoint (+ MANIFEST, ~100 bytes)
//
// The old checkpoint files are the current checkpoint and the earlier files it reads chunks from
// (Store+ChunkFiles.swift): their live chunks and their dead bytes, which compaction keeps under
// a tenth of the cap after each checkpoint. The new checkpoint file holds only what it does not
// reference in them — so it is at most what a whole new checkpoint would be, and the estimate
// below (of a whole one) stays an upper bound; the checkpoint size C in the terms below is that
// of all its files (Store.checkpointBodyBytes), its logical size plus their dead bytes.
//
// Before every checkpoint (makeRoomForCheckpoint) the new checkpoint is estimated — the
// smaller of the cache's encoded size times the last checkpoint's compression ratio and F
// itself (a checkpoint rewrites what the files already hold, minus what was overwritten) —
// and pruned down to at most plannedPeak·K − F. So a checkpoint install peaks at plannedPeak·K
// (1.1 K) when the estimate is right; the 0.15 K to the bound absorbs its error (seen up to
// ~15% of the checkpoint). F itself stays small enough for that target to be positive:
//
// - a new checkpoint is at most min(F, 1.1 K − F) ≤ 0.55 K;
// - a checkpoint is due once the log since the last one reaches its threshold, at most
//   logShare (0.2 K); writers wait for maintenance (backpressure, Backpressure.swift) once
//   that log is past 0.2 K + K/16 and, with the checkpoint, past 0.55 K + 0.2 K + K/16 (or
//   sooner: when the next checkpoint would no longer fit beside it), so checkpoint and log
//   come to at most 0.8125 K — what they came to when writers waited at the log term alone
//   and the checkpoint was at its largest;
// - plus K/64 between footprint checks, plus the covered head of the live segment (one
//   segment, K/8; a checkpoint rolls the segment first, which normally makes this 0, but a
//   roll may be given up — see writeCheckpoint — so the bound keeps the term);
// - so F ≤ 0.8125 + 0.14 < 0.96 K < 1.1 K, and between checkpoints F stays under K.
//
// The price: checkpoints every 0.2 K of log under a cap (each rewriting at most ~0.55 K), and
// the cache between prunes held to what fits twice beside the log. DiskBoundTests checks the
// peak on the simulated file system after every write; a real run is in Benchmarks/README.md,
// "The cap as a bound on disk".

extension Store {
    /// The estimated footprint after pruning must fall below this share of the cap, leaving
    /// room for the live log between checkpoints.
    static let pruneTarget = 0.7

    /// The checkpoint-install peak pruning plans for, as a share of the cap (the disk bound is
    /// 1.25; the difference absorbs estimation error).
    static let plannedPeak = 1.1

    /// The log since the last checkpoint, as a share of the cap, that makes a checkpoint due
    /// (the disk bound's log term).
    static let logShare = 0.2

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
                try makeRoomForCheckpoint()
                try writeCheckpoint()
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
            let rounds = try makeRoomForCheckpoint(target: Double(cap) * Store.pruneTarget)
            if step > 0 && rounds == 0 { break }
            try writeCheckpoint()
            footprint = try footprintBytes()
            if footprint <= cap && !tooManyInactiveQueries() { break }
        }
        core.withLock { $0.capExceededByUnprunable = footprint > cap }
    }

    /// Prunes before a checkpoint so that it fits beside the files it will replace within the
    /// disk bound (the argument at the top of this file): the new checkpoint, estimated, must
    /// come to at most `plannedPeak`·cap − footprint, and to `target` when one is given.
    /// Returns the pruning rounds committed.
    @discardableResult
    func makeRoomForCheckpoint(target: Double = .infinity) throws(StoreError) -> Int {
        let footprint = Double(try footprintBytes())
        let room = max(0, Double(options.cacheSizeBytes) * Store.plannedPeak - footprint)
        return try prune(target: min(target, room), footprint: footprint)
    }

    /// The bytes of the live files (MANIFEST, checkpoint, segments).
    func footprintBytes() throws(StoreError) -> UInt64 {
        do { return try log.footprint().total } catch { throw .log(error) }
    }

    /// Prunes the least recently used inactive queries (a ``Pruner/Pass`` round takes a fifth of
    /// the candidates, so this runs once per ~maxInactiveQueries/5 new ones) until at most
    /// `maxInactiveQueries` remain; no size estimate, no checkpoint. Returns the rounds
    /// committed.
    @discardableResult
    func pruneInactiveQueries() throws(StoreError) -> Int {
        return try prune(target: .infinity)
    }

    /// Prunes in rounds until the estimated checkpoint fits the target share of the cap and
    /// the inactive queries are within their limit, or nothing prunable is left. Returns the
    /// number of rounds committed.
    ///
    /// One ``Pruner/Pass`` computes the rounds: the candidates are sorted once, and the
    /// estimate is measured once and then lowered by what each round frees (the encoded size
    /// of the pruned subtrees minus the kept ones below them, times the last checkpoint's
    /// compression ratio) — not re-measured over the whole cache every round. Writers go on
    /// meanwhile: each round is committed as its own event, adjusted under the commit's lock
    /// to keep what other commits made protected or recent since the pass began
    /// (``Pruner/Pass/adjust(_:to:snapshot:)``).
    @discardableResult
    func prune(target: Double, footprint: Double = .infinity) throws(StoreError) -> Int {
        // Nothing can need pruning when the footprint already meets the target (the estimate
        // is at most the footprint) and the inactive queries are within their limit (a pass
        // counts at most those): skip the estimate and the pass, each O(cache + pending
        // writes) — before every checkpoint among many pending writes, most of the
        // maintenance thread's time (`HearthBench writes16`).
        let inactive = core.withLock { Pruner.inactiveQueryCount($0.loading.state) }
        if footprint <= target && inactive <= options.maxInactiveQueries {
            core.withLock { $0.prunePassesSkipped += 1 }
            return 0
        }
        // Pending writes protect their locations: every one must be known.
        _ = try fullyLoadedCore()
        let (snapshot, ratio, resident) = core.withLock {
            ($0.loading.state, $0.compressionRatio, $0.loading.cacheLoaded)
        }
        // Loaded above; dropped only at the end of a maintenance pass, which this is part of.
        guard resident else { return 0 }
        // The estimate walks the whole cache and every pending write: only when a size target
        // asks for it and the footprint, which bounds the estimate, does not meet it already.
        // (A pass for the query limit alone before a checkpoint — every checkpoint of a
        // client draining its writes, whose acks track a query each — would otherwise walk
        // every pending write once more per checkpoint, to prune nothing by size.)
        var estimate = 0.0
        if target.isFinite && footprint > target {
            estimate = min(Store.estimatedCheckpointBytes(snapshot, ratio: ratio), footprint)
            core.withLock { $0.checkpointSizeEstimates += 1 }
        }
        var pass = Pruner.Pass(snapshot, maxInactiveQueries: options.maxInactiveQueries)
        var committed = 0
        while estimate > target || pass.inactiveQueries > options.maxInactiveQueries {
            guard let round = pass.nextRound() else { break }
            estimate -= Double(round.freedCacheBytes) * ratio + Double(round.freedMetaBytes)
            var result: PruneResult?
            try commit(durability: .buffered) { batch in
                result = pass.adjust(round, to: batch.base, snapshot: snapshot)
                if let result { batch.append(.cachePruned(result)) }
            }
            if result != nil {
                committed += 1
                core.withLock { $0.prunedRounds += 1 }
            }
        }
        return committed
    }

    /// An estimate of the checkpoint body for `state`: the cache's encoded size times the
    /// last checkpoint's compression ratio, plus the other state uncompressed.
    static func estimatedCheckpointBytes(_ state: StoreState, ratio: Double) -> Double {
        let cache = Double(NodeCodec.encodedSize(state.serverCache))
        var meta = 0
        for w in state.pendingWrites {
            switch w.operation {
            case .set(let n): meta += NodeCodec.encodedSize(n) + 16
            case .update(let c): meta += c.reduce(16) { $0 + NodeCodec.encodedSize($1.node) + 16 }
            }
        }
        meta +=
            state.trackedQueries.count * 64 + state.trackedQueries.values.reduce(0) { $0 + ($1.keys?.count ?? 0) * 16 }
        meta += state.untracked.count * 32
        return cache * ratio + Double(meta)
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
    func writeCheckpoint(
        afterSnapshot: (() -> Void)? = nil, closing: Bool = false, waited: Bool = false
    ) throws(StoreError) {
        // Nothing to checkpoint: do not load the whole cache for it.
        if core.withLock({ $0.lastLSN <= $0.checkpointLSN }) { return }
        _ = try fullyLoadedCore()
        var origins: ChunkOrigins?
        var previousWrites: WriteChunkMemo?
        var preparedWrites: [WriteChunkMemo.Run] = []
        let (state, lsn, checkpointLSN, bytesAtSnapshot, roll) = try core.withLock {
            (core: inout Core) throws(StoreError) -> (StoreState, LSN, LSN, Int, Log.PendingAppend?) in
            origins = core.cacheOrigins
            previousWrites = core.writeChunkMemo
            // Loaded above; dropped only at the end of a maintenance pass, which this is part of.
            guard core.loading.cacheLoaded, core.lastLSN > core.checkpointLSN else {
                return (core.loading.state, core.lastLSN, core.lastLSN, 0, nil)
            }
            var roll: Log.PendingAppend?
            if !core.lastCheckpointFailed {
                do throws(LogError) { roll = try log.submitRoll() } catch { throw .log(error) }
            }
            checkpointSnapshotTaken(&core)
            preparedWrites = takePreparedWrites(&core)
            return (core.loading.state, core.lastLSN, core.checkpointLSN, core.logBytesSinceCheckpoint, roll)
        }
        guard lsn > checkpointLSN else { return }
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
        var encoder = CheckpointEncoder(
            compressionLevel: options.compressionLevel, writeCompressionLevel: options.pendingWriteCompressionLevel)
        encoder.reuse = origins
        encoder.previousWrites = previousWrites
        encoder.preparedWrites = preparedWrites
        encoder.recordOrigins = !closing && cacheMayStayResident()
        encoder.referenceReused = true
        encoder.compactFiles = origins.map { filesToCompact($0) } ?? []
        encoder.deflateAhead = closing || waited ? options.checkpointDeflateAhead : 0
        var summary = CheckpointEncoder.Summary()
        let clock = ContinuousClock()
        let start = clock.now
        do {
            try log.installCheckpoint(lsn: lsn) { writer in
                summary = try encoder.encode(state) { bytes in try writer.write(bytes) }
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
            try makeRoomForCheckpoint()
            try writeCheckpoint(closing: true)
        } catch {
            // Best effort (see above).
        }
    }
}
