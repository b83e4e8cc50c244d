// The write side of the log: group commit (leader/follower), segment rolls, syncs, poisoning, the
// `.batched` flusher and checkpoint installation.
//
// Lock discipline (this is why the class is `@unchecked Sendable`):
// - `monitor` guards the fields marked [monitor]: the queue, LSN counters, poison, close state.
// - Only the leader (the request at the front of `queue`) touches the fields marked [leader]. A leader
//   remains at the front until it has finished its I/O and relocked the monitor, so there is exactly
//   one at a time; the monitor's lock/unlock hand-over orders one leader's writes before the next's.
// - `manifestLock` guards the fields marked [manifest] (live segment list, checkpoint, generation).
//   Segment rolls (by the leader) and checkpoint installs take it; lock order: never take `monitor`
//   while holding `manifestLock` except for the brief counter reads noted below.
// - `checkpointLock` serialises checkpoint installs.
final class LogCore: @unchecked Sendable {
    let fs: any FileSystem
    let directory: String
    let options: Log.Options
    let deflaters: DeflaterPool

    let monitor = Monitor()
    // [monitor]
    var queue: [CommitRequest] = []
    var nextLSN: LSN
    /// The LSN of the last record queued (the queue's requests take LSNs in queue order, which
    /// is the order groups are formed and written in, so an LSN is fixed when it is queued).
    var reservedLSN: LSN
    var writtenLSN: LSN
    var durableLSN: LSN
    var poison: LogError?
    var closeStarted = false
    var closing = false
    var closed = false
    var batchedDeadline: UInt64?
    var stopFlusher = false
    /// Requested rolls given up because they failed before anything durable changed.
    var abandonedRolls = 0
    var lastAbandonedRoll: LogError?

    // [leader]
    var active: (file: any StoreFile, header: SegmentHeader, offset: UInt64, chain: UInt32)?

    let manifestLock = Monitor()
    // [manifest]
    var generation: UInt64
    var segments: [Manifest.Entry]
    var checkpointRef: Manifest.CheckpointRef?
    var checkpoint: Checkpoint?
    var nextCheckpointID: UInt64

    let checkpointLock = Monitor()
    var flusher: OSThread?
    var lock: (any StoreLock)?

    init(fs: any FileSystem, directory: String, options: Log.Options, lastLSN: LSN, manifest: Manifest,
         checkpoint: Checkpoint?, lock: any StoreLock) {
        self.fs = fs
        self.directory = directory
        self.options = options
        deflaters = DeflaterPool(level: options.compressionLevel)
        nextLSN = lastLSN + 1
        reservedLSN = lastLSN
        writtenLSN = lastLSN
        durableLSN = lastLSN
        generation = manifest.generation
        segments = manifest.segments
        checkpointRef = manifest.checkpoint
        self.checkpoint = checkpoint
        nextCheckpointID = (manifest.checkpoint?.id ?? 0) + 1
        self.lock = lock
    }

    // MARK: Preparing records (caller's thread, no lock)

    func prepare(_ payload: [UInt8], type: UInt8, skippable: Bool) throws(LogError) -> PreparedRecord {
        guard payload.count <= Layout.maxPayloadSize else {
            throw .recordTooLarge(size: payload.count, limit: Layout.maxPayloadSize)
        }
        let skip = skippable ? Layout.flagSkippable : 0
        if let c = deflaters.compress(payload) {
            return PreparedRecord(type: type, flags: Layout.flagCompressed | skip, stored: c, rawLength: payload.count)
        }
        return PreparedRecord(type: type, flags: skip, stored: payload, rawLength: payload.count)
    }

    // MARK: Group commit

    /// Queues `req` and returns when its group has been written (and synced if required).
    /// Returns the LSN of the request's last record (for a flush: the highest LSN written).
    func commit(_ req: CommitRequest) throws(LogError) -> LSN {
        _ = try submit(req)
        return try wait(req)
    }

    /// Queues `req` without waiting and returns the LSN its last record will have (for a
    /// flush: the last LSN queued before it). Records are written in queue order, so this LSN
    /// is final; ``wait(_:)`` returns once the request's group is written (and synced if
    /// required), or throws if it could not be.
    func submit(_ req: CommitRequest) throws(LogError) -> LSN {
        if options.readOnly { throw .readOnly(path: directory) }
        monitor.lock()
        defer { monitor.unlock() }
        if closing || closed { throw .closed }
        if let p = poison { throw .poisoned(underlying: p) }
        queue.append(req)
        reservedLSN += LSN(req.records.count)
        req.reservedLSN = reservedLSN
        return reservedLSN
    }

    /// Waits for a request queued by ``submit(_:)``: leads its group when it reaches the
    /// front of the queue, or follows the leader that takes it along.
    func wait(_ req: CommitRequest) throws(LogError) -> LSN {
        monitor.lock()
        while !req.done && queue.first !== req { monitor.wait() }
        if req.done {
            monitor.unlock()
            return try req.result.get()
        }
        lead()
        monitor.unlock()
        return try req.result.get()
    }

    /// Runs one group as leader. Called and returns with `monitor` locked; unlocks it during I/O.
    private func lead() {
        // Invariant: the caller is at the front of the queue and stays there until this returns.
        // Build the group: consecutive requests from the front, up to maxBatchBytes (at least one).
        var group: [CommitRequest] = []
        var bytes = 0
        for r in queue {
            if !group.isEmpty && bytes + r.bytes > options.maxBatchBytes { break }
            // A requested roll starts its group, so that it falls exactly between the records
            // queued before it (left in the old segment) and those queued after it.
            if !group.isEmpty && r.roll { break }
            group.append(r)
            bytes += r.bytes
        }
        assert(group.first === queue.first && !group.isEmpty, "the leader leads its own group")
        if let p = poison {
            finish(group, .failure(.poisoned(underlying: p)))
            return
        }
        assert(writtenLSN == nextLSN - 1, "no LSN is assigned but unwritten between groups")
        assert(durableLSN <= writtenLSN)
        let first = nextLSN
        let count = group.reduce(0) { $0 + $1.records.count }
        nextLSN += LSN(count)
        let needSync = group.contains { $0.sync } && (count > 0 || writtenLSN > durableLSN)
        let rollRequested = group.contains { $0.roll }
        let batched = group.compactMap(\.batchedInterval).min()
        let syncedThrough = durableLSN
        monitor.unlock()

        // I/O, outside the monitor. Followers keep queueing behind us.
        var failure: LogError?
        var sealedThrough: LSN?
        var abandonedRoll: LogError?
        do throws(LogError) {
            if rollRequested, let a = active, a.offset > UInt64(Layout.segmentHeaderSize) {
                do throws(RollFailure) {
                    try roll(nextLSN: first)
                    // Sealing syncs the old segment, so everything written so far is durable.
                    sealedThrough = first - 1
                } catch where !error.poisons {
                    // A requested roll is an optimization (a checkpoint can then drop the
                    // segment it covers). It failed before anything durable changed, so the
                    // group goes on in the old segment and the log stays writable.
                    abandonedRoll = error.error
                } catch {
                    throw error.error
                }
            }
            if count > 0 {
                sealedThrough = try rollIfNeeded(groupBytes: bytes, nextLSN: first) ?? sealedThrough
                try writeGroup(group, firstLSN: first, syncedThrough: max(syncedThrough, sealedThrough ?? 0))
            }
            if needSync {
                let f = active!.file
                try logIO { try f.sync() }
            }
        } catch {
            failure = error
        }

        monitor.lock()
        if let e = failure {
            // Poison: the state of the file is unknown (a retried fsync can falsely succeed).
            poison = e
            finish(group, .failure(e))
            return
        }
        if let e = abandonedRoll {
            abandonedRolls += 1
            lastAbandonedRoll = e
        }
        if let s = sealedThrough { durableLSN = max(durableLSN, s) }
        writtenLSN = first + LSN(count) - 1
        if needSync {
            durableLSN = writtenLSN
        } else if let interval = batched, writtenLSN > durableLSN {
            let d = monotonicNanos() &+ interval
            if batchedDeadline == nil || d < batchedDeadline! { batchedDeadline = d }
        }
        if durableLSN >= writtenLSN { batchedDeadline = nil }
        var lsn = first
        for r in group {
            lsn += LSN(r.records.count)
            assert(r.records.isEmpty || r.reservedLSN == lsn - 1, "records are written at the LSNs reserved when queued")
            r.result = .success(r.records.isEmpty ? writtenLSN : lsn - 1)
        }
        finish(group, nil)
    }

    /// Completes the group (monitor locked): pops it from the queue and wakes everyone.
    private func finish(_ group: [CommitRequest], _ result: Result<LSN, LogError>?) {
        for r in group {
            if let result { r.result = result }
            r.done = true
        }
        assert(queue.count >= group.count && zip(queue, group).allSatisfy { $0 === $1 })
        queue.removeFirst(group.count)
        monitor.broadcast()
    }

    /// [leader] Frames the group's records into one buffer and writes it with one call.
    private func writeGroup(_ group: [CommitRequest], firstLSN: LSN, syncedThrough: LSN) throws(LogError) {
        guard let a = active else { preconditionFailure("no active segment") }
        let framer = RecordFramer(salt: a.header.salt, segment: a.header.number)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(group.reduce(0) { $0 + $1.bytes })
        var lsn = firstLSN
        var chain = a.chain
        for r in group {
            for (i, rec) in r.records.enumerated() {
                // All but the last record of one request carry `continued`: the batch is atomic.
                let crc = framer.frame(rec, lsn: lsn, syncedThrough: syncedThrough,
                                       continued: i < r.records.count - 1, into: &buffer)
                chain = RecordHeader.chain(chain, crc)
                lsn += 1
            }
        }
        assert(buffer.count == group.reduce(0) { $0 + $1.bytes } && buffer.count % Layout.recordAlignment == 0)
        assert(a.offset % UInt64(Layout.recordAlignment) == 0, "records start 8-aligned")
        try logIO { try a.file.write(buffer, at: a.offset) }
        active = (a.file, a.header, a.offset + UInt64(buffer.count), chain)
    }

    /// [leader] Starts a new segment if the active one is non-empty and the group would overflow it.
    /// Returns the LSN through which the old segment was sealed (synced), if a roll happened.
    private func rollIfNeeded(groupBytes: Int, nextLSN: LSN) throws(LogError) -> LSN? {
        guard let a = active else { preconditionFailure("no active segment") }
        let used = a.offset - UInt64(Layout.segmentHeaderSize)
        guard used > 0, a.offset + UInt64(groupBytes) > UInt64(options.segmentSize) else { return nil }
        // Any failure poisons here (the group fails): only a requested roll is optional.
        do throws(RollFailure) { try roll(nextLSN: nextLSN) } catch { throw error.error }
        return nextLSN - 1
    }

    /// [leader or open] Seals the active segment (sync) and starts segment n+1 at `nextLSN`:
    /// create, write header, sync, then name it in a new MANIFEST. Appends go to it only after that,
    /// so a segment is never written before the MANIFEST names it.
    ///
    /// On failure, ``RollFailure/poisons`` says whether the log may go on in the old segment
    /// (see there); `active`, `segments` and `generation` are changed only once the new MANIFEST
    /// is durable.
    func roll(nextLSN: LSN) throws(RollFailure) {
        if let a = active {
            // Sealing: nothing may reach the next segment before this one is durable (prefix rule).
            // A failed sync leaves the old segment's unsynced pages in an unknown state: poison.
            do throws(LogError) { try logIO { try a.file.sync() } } catch {
                throw RollFailure(error: error, poisons: true)
            }
        }
        manifestLock.lock()
        defer { manifestLock.unlock() }
        let number = (segments.last?.number ?? 0) + 1
        let header = SegmentHeader(number: number, baseLSN: nextLSN, salt: fs.randomUInt64(),
                                   previousLastLSN: nextLSN - 1, previousChain: active?.chain ?? 0)
        let path = joinPath(directory, Layout.segmentName(number))
        let newSegments = segments + [Manifest.Entry(number: number, baseLSN: nextLSN)]
        // Until the rename in publishTemp, nothing recovery reads has changed: the new segment
        // file and MANIFEST.tmp are named by no MANIFEST (an open removes both), and this
        // object's state is untouched. A failure up to there (ENOSPC creating or writing
        // either file, EIO syncing them) leaves the store exactly as before the roll, so the
        // log need not be poisoned: the old segment stays the active one. (A failed sync of a
        // file that is then deleted loses nothing: no acknowledged byte is in it.)
        var created: (any StoreFile)?
        do throws(LogError) {
            let file = try logIO { try fs.open(path, mode: .createTruncate) }
            created = file
            try logIO {
                try file.write(header.encode(), at: 0)
                try file.sync()
            }
            try ManifestWriter.writeTemp(Manifest(generation: generation + 1, checkpoint: checkpointRef, segments: newSegments),
                                         directory: directory, fs: fs)
        } catch {
            try? created?.close()
            // Best effort: left behind, it is a stray file the next open removes.
            if created != nil { try? fs.unlink(path) }
            throw RollFailure(error: error, poisons: false)
        }
        guard let file = created else { preconditionFailure("the new segment was created") }
        // From the rename on, the MANIFEST on disk may be the old or the new one: poison.
        do throws(LogError) { try ManifestWriter.publishTemp(directory: directory, fs: fs) } catch {
            try? file.close()
            throw RollFailure(error: error, poisons: true)
        }
        generation += 1
        segments = newSegments
        if let old = active { try? old.file.close() }
        active = (file, header, UInt64(Layout.segmentHeaderSize), header.previousChain)
    }

    // MARK: Flush, durability queries

    func flush() throws(LogError) {
        _ = try commit(CommitRequest(records: [], sync: true, batchedInterval: nil))
    }

    /// Returns once `lsn` is durable. If a `.batched` sync is already scheduled, waits for it (so that
    /// waiting does not add syncs); otherwise syncs now.
    func waitUntilDurable(_ lsn: LSN) throws(LogError) {
        monitor.lock()
        let written = writtenLSN
        guard lsn <= written else {
            monitor.unlock()
            throw .invalidArgument("LSN \(lsn) has not been written (last is \(written))")
        }
        // Bounded: each wake-up follows a group completion; the flusher's deadline is at most one
        // interval away, and poison or close end the wait.
        while durableLSN < lsn && batchedDeadline != nil && poison == nil && !closing && !closed {
            monitor.wait()
        }
        let done = durableLSN >= lsn
        monitor.unlock()
        if !done { try flush() }
    }

    // MARK: The `.batched` flusher

    func startFlusher() {
        flusher = OSThread { [self] in
            monitor.lock()
            while !stopFlusher {
                if let d = batchedDeadline {
                    if monotonicNanos() >= d {
                        batchedDeadline = nil
                        monitor.unlock()
                        // Errors poison the log inside commit; the next append reports them.
                        try? flush()
                        monitor.lock()
                    } else {
                        monitor.wait(untilMonotonic: d)
                    }
                } else {
                    monitor.wait()
                }
            }
            monitor.unlock()
        }
    }

    // MARK: Close

    func close() throws(LogError) {
        // Exactly one caller performs the close (two threads may call close, or close and deinit).
        let already = monitor.withLock { () -> Bool in
            if closeStarted || closing || closed { return true }
            closeStarted = true
            return false
        }
        if already { return }
        var failure: LogError?
        if options.readOnly {
            // Nothing was written: nothing to sync.
        } else if let poisoned = monitor.withLock({ poison }) {
            // Nothing written since the failure can be synced: the close must not report success.
            failure = .poisoned(underlying: poisoned)
        } else {
            do throws(LogError) { try flush() } catch { failure = error }
        }
        monitor.withLock {
            closing = true
            stopFlusher = true
            monitor.broadcast()
            while !queue.isEmpty { monitor.wait() }
        }
        flusher?.join()
        flusher = nil
        monitor.withLock { closed = true }
        if let a = active { try? a.file.close() }
        active = nil
        lock?.release()
        lock = nil
        if let failure { throw failure }
    }

    // MARK: Checkpoints

    func installCheckpoint(lsn: LSN, writer body: (CheckpointWriter) throws -> Void) throws(LogError) -> Checkpoint {
        if options.readOnly { throw .readOnly(path: directory) }
        checkpointLock.lock()
        defer { checkpointLock.unlock() }
        let (written, poisoned, isClosed) = monitor.withLock { (writtenLSN, poison, closing || closed) }
        if isClosed { throw .closed }
        if let p = poisoned { throw .poisoned(underlying: p) }
        let (currentLSN, id) = manifestLock.withLock { (checkpointRef?.lsn ?? 0, nextCheckpointID) }
        guard lsn <= written, lsn >= currentLSN else {
            throw .invalidArgument("checkpoint LSN \(lsn) must be within \(currentLSN)...\(written)")
        }
        // A failure while the new file is written (a full disk, typically) changes nothing
        // durable: the temp file is gone again, the MANIFEST, the old checkpoint and the log are
        // as they were. So the log is not poisoned: appends go on, and a later checkpoint may
        // succeed once there is room. (Poisoning here made a store on a full disk refuse even
        // to open for reading, since open checkpoints a long log tail.)
        let (header, file) = try writeCheckpointFile(lsn: lsn, id: id, writer: body)
        do throws(LogError) {
            return try installLocked(lsn: lsn, id: id, header: header, file: file)
        } catch {
            // Fail-stop: after any failure from the rename on, the directory's state is uncertain.
            monitor.withLock { if poison == nil { poison = error } }
            throw error
        }
    }

    /// Step 1 of an install: the new checkpoint written and synced under its temp name, then
    /// renamed to its final one. On any failure the temp file is removed and nothing durable
    /// has changed (the MANIFEST does not name the new file yet).
    private func writeCheckpointFile(lsn: LSN, id: UInt64, writer body: (CheckpointWriter) throws -> Void) throws(LogError) -> (CheckpointHeader, StoreFile) {
        let tmp = joinPath(directory, Layout.checkpointName(id)) + Layout.tempSuffix
        let file = try logIO { try fs.open(tmp, mode: .createTruncate) }
        let header: CheckpointHeader
        do throws(LogError) {
            let w = CheckpointWriter(file: file)
            do { try body(w) } catch let e as LogError { throw e } catch let e as FileSystemError { throw .io(e) } catch {
                throw .invalidArgument("checkpoint body writer failed: \(error)")
            }
            header = CheckpointHeader(id: id, lsn: lsn, bodyLength: w.bytesWritten, bodyCRC: CRC32C.mask(w.crc))
            try logIO {
                try file.write(header.encode(), at: 0)
                try file.sync()
                // Atomic: on failure the file keeps its temp name, which is removed below.
                try fs.rename(from: tmp, to: joinPath(directory, Layout.checkpointName(id)))
            }
        } catch {
            // A failed checkpoint leaves no temp file behind: on a full disk it would hold the very
            // space the next attempt needs (it is not named by the MANIFEST, so removing it is safe).
            try? file.close()
            try? fs.unlink(tmp)
            throw error
        }
        return (header, file)
    }

    /// Steps 2–4 of an install: the new name made durable, the log made durable through `lsn`,
    /// the MANIFEST switch, the old files dropped.
    private func installLocked(lsn: LSN, id: UInt64, header: CheckpointHeader, file: StoreFile) throws(LogError) -> Checkpoint {
        try logIO { try fs.syncDirectory(directory) }
        // 2. The log must be durable through `lsn` before the MANIFEST points past it: otherwise a crash
        //    could recover a checkpoint whose LSN is beyond the end of the log, and LSNs would be reused.
        // (A flush, not waitUntilDurable: never wait for a `.batched` interval here.)
        // When nothing was appended after `lsn`, the active segment is wholly covered by the
        // checkpoint: roll to a new one (which also makes the log durable), so that the old
        // segment leaves the live set at the switch instead of staying as dead bytes until the
        // next roll. (Should the roll fail before anything durable changed — a full disk — it
        // is given up and the request still syncs: the log is durable through `lsn` either way.)
        if monitor.withLock({ writtenLSN == lsn }) {
            _ = try commit(CommitRequest(records: [], sync: true, batchedInterval: nil, roll: true))
        } else if monitor.withLock({ durableLSN < lsn }) {
            try flush()
        }
        // 3. The switch: one MANIFEST replacement. Segments wholly ≤ lsn (never the active, last one)
        //    leave the live set.
        let ref = Manifest.CheckpointRef(id: id, lsn: lsn, bodyLength: header.bodyLength, bodyCRC: header.bodyCRC)
        let handle = Checkpoint(header: header, file: file)
        let (oldCheckpoint, dropped): (Manifest.CheckpointRef?, [Manifest.Entry]) = try {
            () throws(LogError) -> (Manifest.CheckpointRef?, [Manifest.Entry]) in
            manifestLock.lock()
            defer { manifestLock.unlock() }
            var keep: [Manifest.Entry] = []
            var drop: [Manifest.Entry] = []
            for (i, e) in segments.enumerated() {
                let isLast = i == segments.count - 1
                if !isLast && segments[i + 1].baseLSN - 1 <= lsn { drop.append(e) } else { keep.append(e) }
            }
            try ManifestWriter.replace(Manifest(generation: generation + 1, checkpoint: ref, segments: keep),
                                       directory: directory, fs: fs)
            let old = checkpointRef
            generation += 1
            segments = keep
            checkpointRef = ref
            checkpoint = handle
            nextCheckpointID = id + 1
            return (old, drop)
        }()
        // 4. Only now, with the new generation durable, delete the old one. Best effort: anything left
        //    behind is not named by the MANIFEST and is removed by the next open.
        if let old = oldCheckpoint, old.id != id { try? fs.unlink(joinPath(directory, Layout.checkpointName(old.id))) }
        for e in dropped { try? fs.unlink(joinPath(directory, Layout.segmentName(e.number))) }
        if oldCheckpoint != nil || !dropped.isEmpty { try? fs.syncDirectory(directory) }
        return handle
    }
}
