// Checkpoint install, the manifest side of the log: write the checkpoint file, make the log durable
// through its LSN, switch the MANIFEST, then drop what the checkpoint covers. Fields and lock
// discipline: see LogCore.swift.

extension LogCore {
    /// The live checkpoint files (the current one, or files it references) the body keeps
    /// (``CheckpointWriter/keep(_:)``) stay live with the new one; every other checkpoint file
    /// is dropped once the new MANIFEST is durable.
    func installCheckpoint(lsn: LSN, writer body: (CheckpointWriter) throws -> Void) throws(LogError) -> Checkpoint {
        if settings.readOnly { throw .readOnly(path: directory) }
        checkpointLock.lock()
        defer { checkpointLock.unlock() }
        let (written, poisoned, isClosed) = monitor.withLock { (writtenLSN, poison, closing || closed) }
        if isClosed { throw .closed }
        if let p = poisoned { throw .poisoned(underlying: p) }
        let (currentLSN, id, live) = manifestLock.withLock {
            (checkpointRef?.lsn ?? 0, nextCheckpointID, [checkpointRef].compactMap { $0 } + references)
        }
        guard lsn <= written, lsn >= currentLSN else {
            throw .invalidArgument("checkpoint LSN \(lsn) must be within \(currentLSN)...\(written)")
        }
        // Installs are serialised (checkpointLock), so the live files read here stay live until
        // this install replaces the MANIFEST.
        // A failure while the new file is written (a full disk, typically) changes nothing
        // durable: the temp file is gone again, the MANIFEST, the old checkpoint and the log are
        // as they were. So the log is not poisoned: appends go on, and a later checkpoint may
        // succeed once there is room. (Poisoning here made a store on a full disk refuse even
        // to open for reading, since open checkpoints a long log tail.)
        let (header, file, kept) = try writeCheckpointFile(lsn: lsn, id: id, live: live, writer: body)
        do throws(LogError) {
            return try installLocked(lsn: lsn, id: id, header: header, file: file, keeping: kept)
        } catch {
            // Fail-stop: after any failure from the rename on, the directory's state is uncertain.
            monitor.withLock { if poison == nil { poison = error } }
            throw error
        }
    }

    /// Step 1 of an install: the new checkpoint written and synced under its temp name, then
    /// renamed to its final one. On any failure the temp file is removed and nothing durable
    /// has changed (the MANIFEST does not name the new file yet). Returns the files of `live`
    /// the body keeps, ascending by id; a kept id not among them fails it.
    func writeCheckpointFile(
        lsn: LSN, id: UInt64, live: [Manifest.CheckpointRef], writer body: (CheckpointWriter) throws -> Void
    ) throws(LogError) -> (CheckpointHeader, StoreFile, [Manifest.CheckpointRef]) {
        let tmp = joinPath(directory, Layout.checkpointName(id)) + Layout.tempSuffix
        let file = try logIO { try fs.open(tmp, mode: .createTruncate) }
        let header: CheckpointHeader
        let kept: [Manifest.CheckpointRef]
        do throws(LogError) {
            let w = CheckpointWriter(file: file)
            do { try body(w) } catch let e as LogError { throw e } catch let e as FileSystemError { throw .io(e) } catch
            {
                throw .invalidArgument("checkpoint body writer failed: \(error)")
            }
            kept = live.filter { w.kept.contains($0.id) }.sorted { $0.id < $1.id }
            guard kept.count == w.kept.count else {
                throw .invalidArgument("a checkpoint may keep only live checkpoint files: \(w.kept.sorted())")
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
        return (header, file, kept)
    }

    /// Steps 2–4 of an install: the new name made durable, the log made durable through `lsn`,
    /// the MANIFEST switch, the old files dropped.
    func installLocked(
        lsn: LSN, id: UInt64, header: CheckpointHeader, file: StoreFile, keeping kept: [Manifest.CheckpointRef]
    ) throws(LogError) -> Checkpoint {
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
        let keptIDs = Set(kept.map(\.id))
        let handle = manifestLock.withLock {
            let live = [checkpoint].compactMap { $0 } + (checkpoint?.referenced ?? [])
            let referenced = live.filter { keptIDs.contains($0.id) }.sorted { $0.id < $1.id }
            return Checkpoint(header: header, file: file, referenced: referenced)
        }
        let (oldCheckpoints, dropped): ([Manifest.CheckpointRef], [Manifest.Entry]) = try {
            () throws(LogError) -> ([Manifest.CheckpointRef], [Manifest.Entry]) in
            manifestLock.lock()
            defer { manifestLock.unlock() }
            var keep: [Manifest.Entry] = []
            var drop: [Manifest.Entry] = []
            for (i, e) in segments.enumerated() {
                let isLast = i == segments.count - 1
                if !isLast && segments[i + 1].baseLSN - 1 <= lsn { drop.append(e) } else { keep.append(e) }
            }
            try ManifestWriter.replace(
                Manifest(generation: generation + 1, checkpoint: ref, segments: keep, references: kept),
                directory: directory, fs: fs)
            let old = ([checkpointRef].compactMap { $0 } + references).filter { !keptIDs.contains($0.id) }
            references = kept
            assert(keep.last?.number == segments.last?.number, "the active (last) segment stays live")
            assert(id == nextCheckpointID, "installs are serialised: the id taken at the start is still the next")
            generation += 1
            segments = keep
            checkpointRef = ref
            checkpoint = handle
            nextCheckpointID = id + 1
            return (old, drop)
        }()
        // 4. Only now, with the new generation durable, delete the old one. Best effort: anything left
        //    behind is not named by the MANIFEST and is removed by the next open. For the same
        //    reason the unlinks are not followed by a directory sync: one lost in a crash only
        //    brings back such a file, and the next sync of this directory (the next roll or
        //    install) makes them durable anyway.
        for old in oldCheckpoints where old.id != id {
            try? fs.unlink(joinPath(directory, Layout.checkpointName(old.id)))
        }
        for e in dropped { try? fs.unlink(joinPath(directory, Layout.segmentName(e.number))) }
        return handle
    }
}
