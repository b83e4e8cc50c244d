// The public face of the durable log. See FORMAT.md for the bytes on disk and the promises.
//
// Thread-safety: every method may be called from any thread. Appends from concurrent threads are
// batched into one write and one sync per group (GroupCommit/LogCore.swift).

/// An append-only, checksummed, compressed log of typed records with checkpoints, group commit,
/// durability tiers and crash recovery, stored in one directory.
public final class Log: Sendable {
    /// The largest payload one record may carry (uncompressed): 64 MiB.
    public static let maxPayloadSize = Layout.maxPayloadSize

    /// The store directory.
    public let directory: String
    /// What recovery did when the store was opened.
    public let recovery: RecoveryReport
    let core: LogCore

    init(directory: String, core: LogCore, recovery: RecoveryReport) {
        self.directory = directory
        self.core = core
        self.recovery = recovery
    }

    deinit { try? core.close() }

    // MARK: Appending

    /// Appends one record (one commit batch) and returns its LSN once `durability` (or the store's
    /// default tier) holds. `skippable` marks a record that readers not knowing `type` may skip.
    public func append(
        _ payload: [UInt8], type: UInt8, skippable: Bool = false,
        durability: Durability? = nil
    ) throws(LogError) -> LSN {
        let rec = try core.prepare(payload, type: type, skippable: skippable)
        return try core.commit(request([rec], durability))
    }

    /// A record queued by ``submit(_:type:skippable:durability:)``: its LSN is already fixed;
    /// ``wait(_:)`` returns once the durability tier holds.
    public struct PendingAppend: Sendable {
        /// The record's LSN.
        public let lsn: LSN
        let request: CommitRequest
    }

    /// Queues one record for appending and returns at once with its LSN — records are written
    /// in the order they are queued, so callers that must apply changes in LSN order can queue
    /// under their own lock and ``wait(_:)`` outside it, letting concurrent appenders share one
    /// write and one sync. The record is acknowledged (under `durability`) only when
    /// ``wait(_:)`` returns.
    ///
    /// The commit queue holds at most 4,096 requests: beyond that, this call waits until the
    /// group being written completes (or writes the front group itself), so a caller queueing
    /// faster than the disk keeps up is slowed down rather than growing the queue.
    public func submit(
        _ payload: [UInt8], type: UInt8, skippable: Bool = false,
        durability: Durability? = nil
    ) throws(LogError) -> PendingAppend {
        let rec = try core.prepare(payload, type: type, skippable: skippable)
        let req = request([rec], durability)
        return PendingAppend(lsn: try core.submit(req), request: req)
    }

    /// Queues a segment roll: the records queued before it stay in the active segment (or an
    /// earlier one) and the next record starts a new segment, as if the active one were full.
    /// Returns at once; ``wait(_:)`` returns once the old segment is sealed (synced) and the new
    /// one named by the MANIFEST (FORMAT.md §8.2). A checkpoint through the returned LSN then
    /// drops the sealed segment at its install, instead of leaving the records it covers in the
    /// active segment, where every open scans them until the segment fills. Nothing happens when
    /// the active segment holds no record.
    ///
    /// The roll is optional: when it fails before the new MANIFEST is renamed into place (a full
    /// disk creating the new segment or MANIFEST.tmp, typically), nothing durable has changed,
    /// the records go on in the old segment, ``abandonedRolls`` counts it, and ``wait(_:)``
    /// returns normally. Only a failed sync of the old segment, or a failure from the MANIFEST's
    /// rename on, makes ``wait(_:)`` throw — and poisons the log, as a failed append does.
    package func submitRoll() throws(LogError) -> PendingAppend {
        let req = CommitRequest(records: [], sync: false, batchedInterval: nil, roll: true)
        return PendingAppend(lsn: try core.submit(req), request: req)
    }

    /// How many requested rolls (``submitRoll()``, a checkpoint install's) were given up because
    /// they failed before anything durable changed, and the last such failure.
    package var abandonedRolls: (count: Int, last: LogError?) {
        core.monitor.withLock { (core.abandonedRolls, core.lastAbandonedRoll) }
    }

    /// Waits until a submitted record is written — and synced, under `.full` — or throws if it
    /// could not be (after which the log is poisoned).
    @discardableResult
    public func wait(_ pending: PendingAppend) throws(LogError) -> LSN {
        try core.wait(pending.request)
    }

    /// Appends several records atomically and in order: after a crash either all of them or none are
    /// recovered. Returns the LSN of the last; they have consecutive LSNs.
    public func appendBatch(
        _ records: [(payload: [UInt8], type: UInt8)], durability: Durability? = nil
    ) throws(LogError) -> LSN {
        guard !records.isEmpty else { throw .invalidArgument("empty batch") }
        var prepared: [PreparedRecord] = []
        prepared.reserveCapacity(records.count)
        for r in records { prepared.append(try core.prepare(r.payload, type: r.type, skippable: false)) }
        return try core.commit(request(prepared, durability))
    }

    func request(_ recs: [PreparedRecord], _ d: Durability?) -> CommitRequest {
        switch d ?? core.settings.durability {
        case .full: CommitRequest(records: recs, sync: true, batchedInterval: nil)
        case let .batched(interval): CommitRequest(records: recs, sync: false, batchedInterval: interval.nanoseconds)
        case .buffered: CommitRequest(records: recs, sync: false, batchedInterval: nil)
        }
    }

    /// Syncs everything written so far, now.
    public func flush() throws(LogError) { try core.flush() }

    /// Returns once every record up to `lsn` is durable: waits for the scheduled `.batched` sync if one
    /// is pending (adding no sync), otherwise syncs now. `lsn` must have been written.
    public func waitUntilDurable(_ lsn: LSN) throws(LogError) { try core.waitUntilDurable(lsn) }

    /// The highest LSN known to be synced.
    public var durableLSN: LSN { core.monitor.withLock { core.durableLSN } }

    /// Group commit's gathers since the log was opened — the leader of a synced group waiting
    /// for as many committers as the last group released — and how many of them ended at their
    /// time limit (about one sync's duration) before that many were queued.
    package var gatherCounts: (gathers: Int, timeouts: Int) { core.gatherCounts }

    /// The highest LSN written (acknowledged under its tier); 0 if the log has never had a record.
    public var lastLSN: LSN { core.monitor.withLock { core.writtenLSN } }

    /// The LSN of the first record of the live log (records before it are only in the checkpoint).
    public var firstLSN: LSN {
        core.manifestLock.withLock { core.segments.first?.baseLSN ?? ((core.checkpointRef?.lsn ?? 0) + 1) }
    }

    /// Flushes and closes the log and releases the lock. Further calls throw ``LogError/closed``.
    public func close() throws(LogError) { try core.close() }

    // MARK: Reading

    /// Reads the records with LSN > `after` (up to `lastLSN` at the time of the call), in order,
    /// streaming from the segment files. With `knownTypes`, records of other types are skipped when
    /// flagged skippable and otherwise throw ``LogError/unknownRecordType(file:offset:type:)``.
    /// Appends may continue meanwhile (they are not returned); do not install a checkpoint while
    /// replaying, since it may delete segments the reader has not reached (``LogError/missingFile(file:)``).
    public func reader(after: LSN, knownTypes: Set<UInt8>? = nil) -> LogReader {
        let end = lastLSN
        let segs = core.manifestLock.withLock { core.segments }
        return LogReader(
            fs: core.fs, directory: directory, segments: segs, after: after, end: end, knownTypes: knownTypes)
    }

    /// Calls `body` with every record after `after`, in order.
    public func replay(after: LSN, knownTypes: Set<UInt8>? = nil, _ body: (LogRecord) throws -> Void) throws {
        let r = reader(after: after, knownTypes: knownTypes)
        while let rec = try r.next() { try body(rec) }
    }

    // MARK: Checkpoints

    /// The current checkpoint, if any. Only its header has been verified.
    public var checkpoint: Checkpoint? { core.manifestLock.withLock { core.checkpoint } }

    /// The earlier checkpoint files the current checkpoint references (FORMAT.md §6), ascending
    /// by id: live with it until an install keeps them no longer. Only their headers have been
    /// verified.
    public var referencedCheckpoints: [Checkpoint] {
        core.manifestLock.withLock { core.checkpoint?.referenced ?? [] }
    }

    /// Installs a checkpoint of the state through `lsn` whose body is `body`. See
    /// ``installCheckpoint(lsn:writer:)``.
    @discardableResult
    public func installCheckpoint(lsn: LSN, body: [UInt8]) throws(LogError) -> Checkpoint {
        try core.installCheckpoint(lsn: lsn) { w in try w.write(body) }
    }

    /// Installs a checkpoint of the state through `lsn` (≤ `lastLSN`, ≥ the current checkpoint's).
    /// `writer` streams the body; appends continue meanwhile. Then: the file is synced and renamed into
    /// place, the log is made durable through `lsn`, the MANIFEST is switched (the only moment that
    /// excludes segment rolls), and only then the old checkpoint and the segments wholly ≤ `lsn` are
    /// deleted. A crash at any point leaves exactly the old or the new generation.
    ///
    /// Live checkpoint files — the current checkpoint's, or those it references — that the new
    /// body reads chunks from are named through ``CheckpointWriter/keep(_:)``: the new MANIFEST
    /// references them (FORMAT.md §6), so they stay live; every other checkpoint file is deleted
    /// after the switch.
    @discardableResult
    public func installCheckpoint(lsn: LSN, writer: (CheckpointWriter) throws -> Void) throws(LogError) -> Checkpoint {
        try core.installCheckpoint(lsn: lsn, writer: writer)
    }

    // MARK: Introspection

    /// One file of the store and its size.
    public struct FileSize: Sendable, Equatable {
        /// File name inside the directory.
        public var name: String
        /// Size in bytes.
        public var bytes: UInt64
    }

    /// The live files (MANIFEST, checkpoints, segments) and their sizes; `total` is their sum.
    /// The active segment counts up to the end of its records: the zero bytes preallocated
    /// after them (FORMAT.md §4.2) are cut off again at a roll or close, and hold no data.
    public func footprint() throws(LogError) -> (files: [FileSize], total: UInt64) {
        let tail = core.recordsEnd.withLock { $0 }
        let (segs, ckpts) = core.manifestLock.withLock {
            (core.segments, [core.checkpointRef].compactMap { $0 } + core.references)
        }
        var names = [Layout.manifestName]
        names += ckpts.map { Layout.checkpointName($0.id) }
        names += segs.map { Layout.segmentName($0.number) }
        var files: [FileSize] = []
        for n in names {
            let size: UInt64
            do {
                size = try logIO { () throws -> UInt64 in
                    let f = try core.fs.open(joinPath(directory, n), mode: .readOnly)
                    defer { try? f.close() }
                    return try f.size()
                }
            } catch .io(let e) where e.code == .notFound {
                // An install on another thread (a background maintenance pass, beside a caller's
                // compact) deleted it after the list was taken: it holds no bytes now.
                continue
            }
            let live = n == Layout.segmentName(tail.segment) ? min(size, tail.end) : size
            files.append(FileSize(name: n, bytes: live))
        }
        return (files, files.reduce(0) { $0 + $1.bytes })
    }
}
