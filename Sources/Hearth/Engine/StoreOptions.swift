#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthLog

extension Store {
    /// How a store behaves. Every field has a documented default.
    public struct Options: Sendable {
        /// The cap on the store's whole on-disk footprint (checkpoint + live log), enforced by
        /// pruning least-recently-used cached data. Default 10 MiB; allowed 1 MiB … 100 MiB.
        public var cacheSizeBytes: Int = Store.defaultCacheSize
        /// The durability tier of writes that do not name one. Default `.full`.
        public var durability: Durability = .full
        /// Log segment size. Default 4 MiB, and never more than a thirty-second of the cap, so
        /// that the covered head of the live segment a checkpoint may leave behind is a small
        /// term of the disk bound.
        public var segmentSize: Int = 4 << 20
        /// Keep the longest valid prefix of a damaged store (moving damaged files aside as
        /// `*.broken`, never deleting one) instead of refusing to open: a damaged MANIFEST is
        /// rebuilt from the files present; a checkpoint whose header or body fails its checksum is
        /// moved aside (the log then keeps only what replays from LSN 1); the log is cut before a
        /// damaged record, or before a record whose checksum holds but whose events cannot be
        /// replayed. ``Store/recovery`` says what was found and moved (FORMAT.md §9.5; the
        /// `hearth salvage` command reports what was lost). Default false.
        public var salvage: Bool = false
        /// Create the store if the directory holds none. Default true.
        public var createIfMissing: Bool = true
        /// Open without the lock and write nothing, to read the last consistent state of a store
        /// whose directory is not writable or that another process has open
        /// (`HearthLog.Log.Options.readOnly`). Reads work as usual; commits, ``Store/compact()``
        /// and every other write throw ``StoreError/log(_:)`` with `LogError.readOnly(path:)`.
        /// The state is exactly what the log holds: no recovery writes (a torn tail is left in
        /// place and not read, `RecoveryReport.ignoredTornTail`), no checkpoint or pruning,
        /// and queries left active stay active (a writable open would mark them inactive).
        /// Under a live writer it is a snapshot of a prefix of that writer's commits.
        /// Damage other than a torn tail fails the open; `salvage` and `createIfMissing` are
        /// ignored. Default false.
        public var readOnly: Bool = false
        /// A checkpoint is written once the log since the last one exceeds
        /// max(this, half the last checkpoint's size). Default 1 MiB.
        public var checkpointMinimumBytes: Int = 1 << 20
        /// The footprint is checked against the cap after every this many appended bytes (and
        /// at open and at every checkpoint). Default 256 KiB.
        package var sizeCheckIntervalBytes: Int = 256 << 10
        /// More inactive tracked queries than this are pruned even under the cap. Default 1,000.
        public var maxInactiveQueries: Int = 1000
        /// Run checkpoints and pruning on a background queue (default). When false they run
        /// inline, after the commit that triggered them — deterministic, for tests.
        public var backgroundMaintenance: Bool = true
        /// Decode the checkpoint's server cache chunk by chunk as reads and views need it, and
        /// its pending writes likewise (default), so that open returns once the directory
        /// (tracked queries, pins, the indexes of the cache and of the pending writes) and the
        /// log after the checkpoint are read, and the whole cache is resident only while an
        /// operation needs it whole (pruning to a size, a read of the whole state; dropped again
        /// at the end of the next maintenance pass once no server data has arrived for a second:
        /// under a stream of server data it stays resident). A checkpoint, and pruning by the
        /// number of inactive queries, work from the chunks instead. When false, open loads
        /// everything before it returns and the cache stays resident.
        public var lazyCacheLoad: Bool = true
        /// How long after the last server event a maintenance pass still keeps a resident
        /// cache (Store+ResidentCache.swift). Not public: tests set 0 (drop at every pass).
        var residentCacheQuietNanos: UInt64 = 1_000_000_000
        /// How many cache chunks a checkpoint that a caller waits for (close's, `compact()`'s)
        /// compresses on a second thread ahead of the one it writes (DeflateAhead.swift; 0: on
        /// the maintenance thread). Not public: tests compare the two, byte for byte.
        var checkpointDeflateAhead = 4
        /// zlib level for a checkpoint's server-cache chunks (1…9). Default 6.
        public var compressionLevel: Int32 = 6
        /// zlib level for a checkpoint's pending-write chunks (1…9), including the chunks
        /// prepared between checkpoints so that close does not encode every pending write
        /// (Store+WritePreparation.swift). Default 1.
        ///
        /// Pending writes are transient (each is dropped when the server acknowledges it) and
        /// are compressed as they arrive, on the committers' machine time, while the cache is
        /// long-lived and counted against ``cacheSizeBytes``. At level 1 the write chunks of
        /// `HearthBench writes16` took ~11 ms less CPU a run than at level 6, for ~10% more
        /// bytes on disk. Any level reads back the same.
        public var pendingWriteCompressionLevel: Int32 = 1
        /// zlib level for log records (1…9, or 0 to store them uncompressed;
        /// `HearthLog.Log.Options.compressionLevel`): a writer's choice, any level reads back
        /// the same (FORMAT.md §5.2). Log segments are dropped by the next checkpoint, which
        /// compresses their data again at ``compressionLevel``, so a lower level here trades
        /// transient disk (the log until the next checkpoint) for less CPU in every commit.
        /// Only records of 64 KiB or more are compressed at all: shorter ones are stored raw
        /// whatever the level (`Store.rawRecordLimit`). Default 6.
        public var logCompressionLevel: Int32 = 6
        /// The file system (the simulated one in tests).
        public var fileSystem: any FileSystem = POSIXFileSystem()
        /// The clock, in milliseconds since the Unix epoch (for LRU and server timestamps).
        public var clock: @Sendable () -> Int64 = Store.systemClock

        /// Default options.
        public init() {}

        func validate() throws(StoreError) {
            guard (Store.minimumCacheSize...Store.maximumCacheSize).contains(cacheSizeBytes) else {
                throw .invalidOption(
                    "cacheSizeBytes \(cacheSizeBytes) is outside \(Store.minimumCacheSize)…\(Store.maximumCacheSize) (1 MiB … 100 MiB)"
                )
            }
            guard segmentSize >= 4096 else { throw .invalidOption("segmentSize \(segmentSize) is below 4096") }
            guard checkpointMinimumBytes >= 4096 else { throw .invalidOption("checkpointMinimumBytes below 4096") }
            guard sizeCheckIntervalBytes >= 1024 else { throw .invalidOption("sizeCheckIntervalBytes below 1024") }
            guard maxInactiveQueries >= 1 else { throw .invalidOption("maxInactiveQueries below 1") }
            guard (1...9).contains(compressionLevel) else { throw .invalidOption("compressionLevel outside 1…9") }
            guard (1...9).contains(pendingWriteCompressionLevel) else {
                throw .invalidOption("pendingWriteCompressionLevel outside 1…9")
            }
            guard (0...9).contains(logCompressionLevel) else {
                throw .invalidOption("logCompressionLevel outside 0…9")
            }
        }

        /// The segment size actually used: at most a thirty-second of the cap (the disk bound
        /// counts one segment's covered head: Store+Maintenance.swift).
        var effectiveSegmentSize: Int { max(4096, min(segmentSize, cacheSizeBytes / 32)) }

        /// How many bytes of commits pass between footprint checks: at most 1/64 of the cap,
        /// so the footprint overshoots by no more than that between checks.
        var effectiveSizeCheckInterval: Int {
            min(sizeCheckIntervalBytes, max(1024, cacheSizeBytes / 64))
        }

        /// The cap in bytes.
        var capBytes: UInt64 { UInt64(cacheSizeBytes) }
    }

    /// The default cap: 10 MiB.
    public static let defaultCacheSize = 10 << 20
    /// The smallest allowed cap: 1 MiB.
    public static let minimumCacheSize = 1 << 20
    /// The largest allowed cap: 100 MiB.
    public static let maximumCacheSize = 100 << 20

    /// The system's wall clock in milliseconds since the Unix epoch.
    @Sendable public static func systemClock() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
