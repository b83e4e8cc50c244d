// The store: its shared parts (the log, the core under its lock, the queues) and their
// lifetime. What it does lives in the Store+*.swift files beside it, one job each.

import Dispatch
import HearthLog
import HearthModel

/// A Hearth store: all the local state of a realtime-database client, persisted as one
/// append-only log of events with periodic checkpoints, under a size cap.
///
/// Every method is safe to call from any thread. Mutations are atomic commits
/// (`commit(durability:_:)`, or the one-operation conveniences) that return once durable
/// under their tier; reads see every commit that has returned.
///
/// ```swift
/// let store = try Store.open(directory: "/path/to/store")
/// let id = try store.saveWrite(.set(.string("hi")), at: "messages/m1")
/// try store.commit { batch in  // ack + the server's data: one atomic commit
///     try batch.ackWrite(id)
///     try batch.applyServerOverwrite(.string("hi"), at: "messages/m1")
/// }
/// print(try store.value(at: "messages"))
/// ```
///
/// (`Tests/HearthToolTests/DocExampleTests.swift` compiles and runs exactly this.)
public final class Store: Sendable {
    /// The store directory.
    public let directory: String
    /// The options the store was opened with.
    public let options: Options
    /// What recovery did on open.
    public let recovery: RecoveryReport

    let log: Log
    let core: Locked<Core>
    /// Loads and drops of the whole server cache (Store+ResidentCache.swift).
    let resident = ResidentCache()
    let maintenanceQueue = DispatchQueue(label: "hearth.store.maintenance")
    /// Listener handlers run here, one at a time, in commit order.
    let eventQueue = DispatchQueue(label: "hearth.store.events")
    /// The views of pins are rebuilt here after open.
    let viewQueue = DispatchQueue(label: "hearth.store.views")

    /// The mutable part, guarded by `core`.
    struct Core: Sendable {
        var loading: LoadingState
        /// Reads chunks of the checkpoint while the cache is not resident.
        var reader: CheckpointReader?
        /// The chunks the resident cache was loaded from, for the next checkpoint to copy
        /// (Store+ResidentCache.swift).
        var cacheOrigins: ChunkOrigins?
        /// The last checkpoint's pending-write chunks, for the next one to copy.
        var writeChunkMemo: WriteChunkMemo?
        /// The pending-write chunks prepared since (Store+WritePreparation.swift).
        var preparedWrites = PreparedWrites()
        /// When the last server event was committed (monotonic nanoseconds; 0: none since
        /// open): a maintenance pass keeps the resident cache while server data keeps coming.
        var lastServerEventNanos: UInt64 = 0
        var lastLSN: LSN
        var poisoned: String?
        var closed = false
        var checkpointLSN: LSN
        var checkpointBodyBytes: UInt64
        /// The most bytes the checkpoint file being written was planned to take (its new file's
        /// bound, ``Store/CheckpointRoom/newFile``); 0 when none is written. Writers wait
        /// before the log pushes the files past the planned install peak beside it.
        var installingBytes: UInt64 = 0
        /// Raw payload bytes appended since the checkpoint LSN.
        var logBytesSinceCheckpoint = 0
        var bytesSinceSizeCheck = 0
        var maintenancePending = false
        /// Set when open replayed a long log tail: the next maintenance pass checkpoints, so
        /// the next open does not replay it again.
        var checkpointRequested = false
        /// The last checkpoint attempt failed (a full disk, typically): the next one does not
        /// roll the log's segment first (Store+Maintenance.swift, writeCheckpoint).
        var lastCheckpointFailed = false
        /// Stored/raw size of the last checkpoint's cache chunks, for estimates.
        var compressionRatio = 0.35
        /// Set when pinned, active and pending data alone exceed the cap.
        var capExceededByUnprunable = false
        /// Set when a load of the whole checkpoint cache failed.
        var loadError: StoreError?
        /// Whether a maintenance pass is bringing the footprint back under the cap, and the
        /// bytes committed since it began (writers wait for it past a sixteenth of the cap).
        var enforcingCap = false
        var bytesDuringEnforcement = 0
        /// Commits whose writer waited for maintenance (backpressure, Store+Queue.swift).
        var backpressureWaits = 0
        var prunedRounds = 0
        /// Prune calls that returned at once: nothing could need pruning (tests).
        var prunePassesSkipped = 0
        /// Prune passes that estimated the next checkpoint's size (tests).
        var checkpointSizeEstimates = 0
        var checkpointsWritten = 0
        var lastCheckpointPause: Duration = .zero
        /// The views (a reference: guarded by this lock too, see ViewHost).
        let views = ViewHost()
    }

    /// A store over a log just opened and the core read from it (``open(directory:options:)``).
    init(directory: String, options: Options, log: Log, recovery: RecoveryReport, core: Core) {
        self.directory = directory
        self.options = options
        self.log = log
        self.recovery = recovery
        self.core = Locked(core)
        maintenanceQueue.setSpecific(key: Store.onMaintenanceQueue, value: true)
    }

    /// Marks the maintenance queue, so that its own commits never wait for it.
    static let onMaintenanceQueue = DispatchSpecificKey<Bool>()

    deinit {
        try? log.close()
    }
}
