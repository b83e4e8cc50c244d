// The write side of the log: its state and the rules for touching it. What it does is split by job,
// one file each (all `extension LogCore`):
//   LogCore+Framing.swift      preparing records (compress) and framing a group into one buffer
//   LogCore+GroupCommit.swift  the leader/follower commit queue, flush, waitUntilDurable
//   LogCore+Gather.swift       a synced group's leader waiting for the committers it expects
//   LogCore+Roll.swift         segment rolls — the one place a segment header is written
//   LogCore+Preallocate.swift  zero bytes written ahead of the active segment's tail
//   LogCore+Flusher.swift      the `.batched` flusher thread
//   LogCore+Checkpoint.swift   checkpoint install (file, then MANIFEST switch)
//   LogCore+Close.swift        poisoning and close
//
// Lock discipline (this is why the class is `@unchecked Sendable`):
// - `monitor` guards the fields marked [monitor]: the queue, LSN counters, poison, close state.
// - Only the leader touches the fields marked [leader]: the thread that set `leading` (under the
//   monitor) to run the group at the front of `queue` — the front request's own thread, or a
//   submitter helping past a full queue. It clears `leading` only once it has finished its I/O and
//   relocked the monitor, so there is exactly one at a time; the monitor's lock/unlock hand-over
//   orders one leader's writes before the next's.
// - `manifestLock` guards the fields marked [manifest] (live segment list, checkpoint, generation).
//   Segment rolls (by the leader) and checkpoint installs take it; lock order: never take `monitor`
//   while holding `manifestLock` except for the brief counter reads noted below.
// - `checkpointLock` serialises checkpoint installs.
import Synchronization

final class LogCore: @unchecked Sendable {
    let fs: any FileSystem
    let directory: String
    let settings: WriterSettings
    let deflaters: DeflaterPool

    let monitor = Monitor()
    /// The most requests the commit queue holds. A caller queueing beyond it waits until the
    /// front group completes (back-pressure) — or, when no one is leading, leads that group
    /// itself, so that a single thread submitting without waiting cannot block forever. A
    /// request's bytes are bounded too (``Layout/maxPayloadSize`` per record), so the queue's
    /// memory is bounded by what its callers hold anyway.
    static let maxQueuedRequests = 4096

    // [monitor]
    /// Requests in commit order; at most ``maxQueuedRequests``.
    var queue: [CommitRequest] = []
    /// The longest the queue has been (tests observe the bound with it).
    var queueHighWater = 0
    /// Whether a thread is running a group now. There is exactly one leader at a time: the thread
    /// that sets this (the front request's, or a submitter helping past a full queue) and clears it
    /// once the group is complete.
    var leading = false
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
    /// While the flusher syncs the active segment beside the queue (LogCore+Flusher.swift): the
    /// last LSN that sync covers. A leader whose group syncs or may roll waits for it to clear.
    var detachedSync: LSN?
    /// Syncs the flusher has made beside the queue (see ``detachedSyncCount``).
    var detachedSyncs = 0
    /// Threads in ``waitForProgress()`` (back-pressure, `waitUntilDurable`, close): a group's
    /// completion broadcasts the monitor's condition only when there are some.
    var progressWaiters = 0
    /// Wake-ups of committers waiting in `wait` (see ``waiterWakeupCount``).
    var waiterWakeups = 0
    /// Wakes the `.batched` flusher: broadcast when a deadline is set and at close.
    let flusherWake = Monitor.Condition()
    /// Turns of the flusher's loop (see ``flusherWakeupCount``).
    var flusherWakeups = 0
    /// Threads in ``wait(_:)`` now (their own group's leader included).
    var committersWaiting = 0
    /// ``committersWaiting`` when the last group completed: how many committers a synced group
    /// gathers (LogCore+Gather.swift).
    var expectedCommitters = 0
    /// While a leader gathers: the queue length that ends its wait (``submit(_:)`` wakes it then).
    var gatherTarget: Int?
    /// The gathering leader sleeps on this.
    let gatherWake = Monitor.Condition()
    /// Gathers begun, and those that ended at their time limit (see ``gatherCounts``).
    var gathers = 0
    var gatherTimeouts = 0
    /// Tests: the longest a gather waits, in nanoseconds, instead of the sync estimate.
    var gatherLimitOverride: UInt64?
    /// Requested rolls given up because they failed before anything durable changed.
    var abandonedRolls = 0
    var lastAbandonedRoll: LogError?

    // [leader]
    var active: (file: any StoreFile, header: SegmentHeader, offset: UInt64, chain: UInt32)?
    /// How far the active segment's file may extend past `active.offset` with zero bytes
    /// written ahead of the records (LogCore+Preallocate.swift): a file offset, or 0 when none
    /// were written in this segment. After a failed preallocation write it stays ≥ the offset
    /// the write started at, so that a roll or close still cuts off whatever that write left.
    var preallocatedEnd: UInt64 = 0
    /// The zero bytes the last preallocation step wrote in the active segment, in full: file
    /// offsets a group may overwrite (``StoreFile/overwrite(_:at:)``), since the file holds them
    /// and they are in no hole. Empty when that step failed, and in a new segment.
    var overwritable: Range<UInt64> = 0..<0
    /// The active segment's number and the end of its records (counting the group being
    /// written), published by the leader before it preallocates zeros past them, for
    /// ``Log/footprint()``: a segment's file may be longer than its records only while it is
    /// the active one and only after this was published for it.
    let recordsEnd = Mutex<(segment: UInt64, end: UInt64)>((0, 0))
    /// A moving average of the group syncs' duration, in nanoseconds (0 before the first): the
    /// longest a gather waits (LogCore+Gather.swift).
    var syncNanosEstimate: UInt64 = 0

    let manifestLock = Monitor()
    // [manifest]
    var generation: UInt64
    var segments: [Manifest.Entry]
    var checkpointRef: Manifest.CheckpointRef?
    /// With its referenced files' handles (``Checkpoint/referenced``).
    var checkpoint: Checkpoint?
    /// The earlier checkpoint files the current checkpoint references (FORMAT.md §6).
    var references: [Manifest.CheckpointRef]
    var nextCheckpointID: UInt64

    let checkpointLock = Monitor()
    var flusher: OSThread?
    var lock: (any StoreLock)?

    init(
        fs: any FileSystem, directory: String, settings: WriterSettings, lastLSN: LSN, manifest: Manifest,
        checkpoint: Checkpoint?, lock: any StoreLock
    ) {
        self.fs = fs
        self.directory = directory
        self.settings = settings
        deflaters = DeflaterPool(level: settings.compressionLevel, rawLimit: settings.rawPayloadLimit)
        nextLSN = lastLSN + 1
        reservedLSN = lastLSN
        writtenLSN = lastLSN
        durableLSN = lastLSN
        generation = manifest.generation
        segments = manifest.segments
        checkpointRef = manifest.checkpoint
        self.checkpoint = checkpoint
        references = manifest.references
        nextCheckpointID = (manifest.checkpoint?.id ?? 0) + 1
        self.lock = lock
    }
}
