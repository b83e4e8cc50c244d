// The server's store: the same log and checkpoint format as the client's Store, and none of its
// cache. Its parts and their lifetime here; opening, committing and checkpoints in the
// AuthoritativeStore+*.swift files beside it.

import Dispatch
import HearthLog
import HearthModel

/// A database held by its server (`hearth serve`'s store): the same append-only log of events
/// and the same checkpoints as a ``Store`` — a directory written by either opens in the other —
/// but no tree of its own.
///
/// The server already holds the database as one immutable, structurally shared tree (the tree it
/// answers reads from). This store only makes that tree's changes durable: each ``commit(data:_:)``
/// appends the server's writes as the engine's server-data and writer-watermark events (one
/// record, group-committed), and checkpoints encode the tree the server hands it with the commit
/// — a snapshot that costs nothing to keep, since nodes are never mutated — off the committing
/// thread. ``open(directory:options:)`` reads the newest checkpoint and replays the log after it,
/// and returns the tree for the server to hold. Nothing is pruned, nothing tracked: the data is
/// the truth, not a cache of it.
///
/// Every method is safe to call from any thread.
@_spi(HearthInternals) public final class AuthoritativeStore: Sendable {
    /// How the store behaves. Every field has a documented default.
    public struct Options: Sendable {
        /// The durability tier of commits. Default `.full`.
        public var durability: Durability = .full
        /// Log segment size. Default 16 MiB.
        public var segmentSize: Int = 16 << 20
        /// A checkpoint is written once the log since the last one exceeds
        /// max(this, half the last checkpoint's size). Default 16 MiB.
        public var checkpointMinimumBytes: Int = 16 << 20
        /// Create the store if the directory holds none. Default true.
        public var createIfMissing: Bool = true
        /// Open without the lock and write nothing (``Store/Options/readOnly``): commits throw
        /// ``StoreError/log(_:)`` with `LogError.readOnly(path:)`. Default false.
        public var readOnly: Bool = false
        /// Write checkpoints on a background queue (default). When false they run inline, after
        /// the commit that made them due — deterministic, for tests.
        public var backgroundCheckpoints: Bool = true
        /// zlib level for a checkpoint's chunks (1…9). Default 6.
        public var compressionLevel: Int32 = 6
        /// zlib level for log records (0…9; ``Store/Options/logCompressionLevel``). Default 6.
        public var logCompressionLevel: Int32 = 6
        /// The file system (the simulated one in tests).
        public var fileSystem: any FileSystem = POSIXFileSystem()
        /// The clock, in milliseconds since the Unix epoch: the time the events record.
        public var clock: @Sendable () -> Int64 = Store.systemClock

        /// Default options.
        public init() {}

        func validate() throws(StoreError) {
            guard segmentSize >= 4096 else { throw .invalidOption("segmentSize \(segmentSize) is below 4096") }
            guard checkpointMinimumBytes >= 4096 else { throw .invalidOption("checkpointMinimumBytes below 4096") }
            guard (1...9).contains(compressionLevel) else { throw .invalidOption("compressionLevel outside 1…9") }
            guard (0...9).contains(logCompressionLevel) else {
                throw .invalidOption("logCompressionLevel outside 0…9")
            }
        }
    }

    /// What ``open(directory:options:)`` returns: the store, and the database it holds — the
    /// tree the caller serves and hands back with every commit.
    public struct Opened: Sendable {
        /// The store.
        public let store: AuthoritativeStore
        /// The database as of the last durable commit.
        public let data: Node
    }

    /// The store directory.
    public let directory: String
    /// The options the store was opened with.
    public let options: Options
    /// What recovery did on open.
    public let recovery: RecoveryReport

    let log: Log
    let core: Locked<Core>
    /// Checkpoints are encoded and installed here, one at a time.
    let checkpointQueue = DispatchQueue(label: "hearth.authoritative.checkpoint")

    /// The mutable part, guarded by `core`.
    struct Core: Sendable {
        /// Per writer, the highest write id applied: a small table, kept here because the
        /// checkpoint records it beside the tree.
        var writerWatermarks: [String: WriterWatermark]
        var lastLSN: LSN
        var checkpointLSN: LSN
        var checkpointBodyBytes: UInt64
        /// Raw payload bytes appended since the checkpoint LSN.
        var logBytesSinceCheckpoint: Int
        /// The tree as of ``lastLSN`` (the caller's, shared), for the checkpoint close writes.
        var latest: Node
        /// The chunks of the last checkpoint and the nodes each encodes, for the next
        /// checkpoint to copy those whose nodes are unchanged.
        var origins: ChunkOrigins?
        var checkpointRunning = false
        /// The last checkpoint failed (a full disk, typically): the next one does not roll the
        /// log's segment first (``Store``'s reason, Store+Maintenance.swift).
        var lastCheckpointFailed = false
        /// After a failed checkpoint, the log bytes since the newest checkpoint at which the
        /// next attempt is due: another ``Options/checkpointMinimumBytes`` of log, so that a
        /// full disk does not make every commit encode the whole database again.
        var nextAttemptBytes = 0
        var checkpointsWritten = 0
        var poisoned: String?
        var closed = false
    }

    init(directory: String, options: Options, log: Log, core: Core) {
        self.directory = directory
        self.options = options
        self.log = log
        self.recovery = log.recovery
        self.core = Locked(core)
    }

    deinit {
        try? log.close()
    }

    /// The writer watermarks: per writer, the highest write id applied.
    package func writerWatermarks() -> [String: WriterWatermark] { core.withLock { $0.writerWatermarks } }

    /// Checkpoints written since open.
    public var checkpointsWritten: Int { core.withLock { $0.checkpointsWritten } }

    /// The LSN of the newest checkpoint (0: none).
    public var checkpointLSN: LSN { core.withLock { $0.checkpointLSN } }

    /// Checkpoints the data as of the last commit now, after any running checkpoint, and returns
    /// once it is installed; nothing when the newest checkpoint is current.
    /// - Throws: ``StoreError/log(_:)`` when the checkpoint cannot be written (nothing durable
    ///   changed: the old checkpoint and the log stay).
    public func compact() throws(StoreError) { try checkpoint(ifLogExceeds: 0) }

    /// On the checkpoint queue (after a running checkpoint): checkpoints the data as of the last
    /// commit when the log since the newest checkpoint holds at least `bytes`.
    func checkpoint(ifLogExceeds bytes: Int) throws(StoreError) {
        let result = checkpointQueue.sync { () -> Result<Void, StoreError> in
            let due = core.withLock { core -> Snapshot? in
                guard !core.closed, core.poisoned == nil, !options.readOnly, !core.checkpointRunning,
                    core.lastLSN > core.checkpointLSN, core.logBytesSinceCheckpoint >= bytes
                else { return nil }
                core.checkpointRunning = true
                // A roll that cannot be queued (the log failed) leaves the segment as it is.
                let roll = core.lastCheckpointFailed ? nil : try? log.submitRoll()
                return snapshot(core, roll: roll)
            }
            guard let due else { return .success(()) }
            return Result { () throws(StoreError) in try writeCheckpoint(due) }
        }
        try result.get()
    }

    /// Waits for a running checkpoint, writes one when the log since the last is long enough
    /// that the next open would replay it record by record (at least 64 KiB), and closes the
    /// log. A failed checkpoint here changes nothing durable. Closing again does nothing.
    public func close() throws(StoreError) {
        try? checkpoint(ifLogExceeds: Store.openReplayCheckpointBytes)
        let wasClosed = core.withLock { core -> Bool in
            defer { core.closed = true }
            return core.closed
        }
        if wasClosed { return }
        do { try log.close() } catch { throw .log(error) }
    }
}
