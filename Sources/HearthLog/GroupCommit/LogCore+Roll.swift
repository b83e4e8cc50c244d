// Segment rolls: sealing the active segment and starting the next one. `roll(nextLSN:)` is the one
// place a segment header is written (by the leader, or by recovery for a store with no live
// segment). Fields and lock discipline: see LogCore.swift.

extension LogCore {
    /// [leader] Starts a new segment if the active one is non-empty and the group would overflow it,
    /// then makes sure zero bytes are preallocated past the group's end (``preallocate(through:)``).
    /// Returns the LSN through which the old segment was sealed (synced), if a roll happened.
    func rollIfNeeded(groupBytes: Int, nextLSN: LSN) throws(LogError) -> LSN? {
        precondition(active != nil, "no active segment")
        var sealed: LSN?
        if groupOverflowsSegment(bytes: groupBytes) {
            // Any failure poisons here (the group fails): only a requested roll is optional.
            do throws(RollFailure) { try roll(nextLSN: nextLSN) } catch { throw error.error }
            sealed = nextLSN - 1
        }
        guard let b = active else { preconditionFailure("no active segment") }
        preallocate(through: b.offset + UInt64(groupBytes))
        return sealed
    }

    /// [leader] Whether a group of `bytes` overflows the active segment, which is then rolled
    /// first (a non-empty one; an empty segment takes any group): the test of
    /// ``rollIfNeeded(groupBytes:nextLSN:)``, and the leader's before it writes beside the
    /// flusher's sync (LogCore+Flusher.swift).
    func groupOverflowsSegment(bytes: Int) -> Bool {
        guard let a = active else { return false }
        let used = a.offset - UInt64(Layout.segmentHeaderSize)
        return used > 0 && a.offset + UInt64(bytes) > UInt64(settings.segmentSize)
    }

    /// [leader or open] Seals the active segment (sync) and starts segment n+1 at `nextLSN`:
    /// create, write header, sync, then name it in a new MANIFEST. Appends go to it only after that,
    /// so a segment is never written before the MANIFEST names it.
    ///
    /// On failure, ``RollFailure/poisons`` says whether the log may go on in the old segment
    /// (see there); `active`, `segments` and `generation` are changed only once the new MANIFEST
    /// is durable.
    func roll(nextLSN: LSN) throws(RollFailure) {
        assert(monitor.withLock { detachedSync == nil }, "no roll beside the flusher's sync of the segment")
        if let a = active {
            // Zeros preallocated past its last record are cut off first: only the LAST segment may
            // end in zeros (FORMAT.md §4.2). A failed cut changes nothing that matters — the segment
            // is still the last, and whatever zeros are left are a valid end — so it gives the
            // roll up without poisoning; the sealing sync makes a successful cut durable.
            if preallocatedEnd > a.offset {
                do throws(LogError) { try logIO { try a.file.truncate(to: a.offset) } } catch {
                    throw RollFailure(error: error, poisons: false)
                }
                preallocatedEnd = 0
                overwritable = 0..<0
            }
            // Sealing: nothing may reach the next segment before this one is durable (prefix rule).
            // A failed sync leaves the old segment's unsynced pages in an unknown state: poison.
            do throws(LogError) { try logIO { try a.file.sync() } } catch {
                throw RollFailure(error: error, poisons: true)
            }
        }
        manifestLock.lock()
        defer { manifestLock.unlock() }
        let number = (segments.last?.number ?? 0) + 1
        assert(segments.last.map { $0.baseLSN <= nextLSN } ?? true, "segments' base LSNs never fall")
        let header = SegmentHeader(
            number: number, baseLSN: nextLSN, salt: fs.randomUInt64(),
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
            try ManifestWriter.writeTemp(
                Manifest(
                    generation: generation + 1, checkpoint: checkpointRef, segments: newSegments,
                    references: references),
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
        assert(header.previousLastLSN + 1 == header.baseLSN, "a new segment continues the LSN sequence")
        active = (file, header, UInt64(Layout.segmentHeaderSize), header.previousChain)
        preallocatedEnd = 0
        overwritable = 0..<0
    }
}
