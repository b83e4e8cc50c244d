// Hearth through its public API: the real `Store`.
import Foundation
import Hearth
import Synchronization

/// A clock that ticks once per call (workload 5: last-use order = creation order).
final class LogicalClock: Sendable {
    let value = Atomic<Int64>(1_700_000_000_000)
    func next() -> Int64 { value.add(1, ordering: .relaxed).newValue }
}

public final class HearthEngine: PersistenceEngine, @unchecked Sendable {
    public let name: String
    public var supportsConcurrentWriters: Bool { true }
    public let store: Store
    /// The driver's query ids → Hearth's query locations.
    private let locations = Mutex<[Int64: QueryLocation]>([:])

    /// Opens a store. `durability`: `.full` (durable tier), `.batched()` (10 ms group window).
    public init(name: String, config: EngineConfig, durability: Durability) throws {
        self.name = name
        var options = Store.Options()
        options.durability = durability
        options.cacheSizeBytes = config.hearthCapBytes
        // Off by default (the store's default level): HEARTH_BENCH_LOG_LEVEL=0…9 sets the zlib
        // level of log records, to measure the trade (Benchmarks/README.md).
        if let level = ProcessInfo.processInfo.environment["HEARTH_BENCH_LOG_LEVEL"].flatMap({ Int32($0) }) {
            options.logCompressionLevel = level
        }
        // Likewise HEARTH_BENCH_CHECKPOINT_LEVEL=1…9 for checkpoint cache chunks, and
        // HEARTH_BENCH_WRITE_LEVEL=1…9 for pending-write chunks.
        if let level = ProcessInfo.processInfo.environment["HEARTH_BENCH_CHECKPOINT_LEVEL"].flatMap({ Int32($0) }) {
            options.compressionLevel = level
        }
        if let level = ProcessInfo.processInfo.environment["HEARTH_BENCH_WRITE_LEVEL"].flatMap({ Int32($0) }) {
            options.pendingWriteCompressionLevel = level
        }
        if config.logicalClock {
            let clock = LogicalClock()
            options.clock = { clock.next() }
        }
        if let fraction = config.hearthPruneFraction {
            // Open pruning exactly one LRU round: the store prunes when more inactive queries
            // than `maxInactiveQueries` are tracked, the round taking max(20%, the excess).
            let inactive = try HearthEngine.inactiveQueryCount(config.directory)
            options.maxInactiveQueries = max(1, inactive - Int((Double(inactive) * fraction).rounded(.up)))
        }
        store = try Store.open(directory: config.directory, options: options)
        queriesAtOpen = store.trackedQueries().count
    }

    private var queriesAtOpen = 0

    /// Counts the inactive tracked queries of a closed store (opened with maintenance off).
    static func inactiveQueryCount(_ directory: String) throws -> Int {
        var options = Store.Options()
        options.backgroundMaintenance = false
        options.cacheSizeBytes = Store.maximumCacheSize
        let s = try Store.open(directory: directory, options: options)
        defer { try? s.close() }
        return s.trackedQueries().count { !$0.active }
    }

    public func saveWrite(_ node: Node, at path: Path) throws -> Int64 {
        try store.saveWrite(.set(node), at: path)
    }

    public func removeWrite(_ id: Int64) throws {
        try store.ackWrite(id)
    }

    public func serverOverwrite(_ node: Node, at path: Path) throws {
        try store.applyServerOverwrite(node, at: path)
    }

    public func serverMerge(_ children: [(path: Path, node: Node)], at path: Path) throws {
        try store.applyServerMerge(children.map { ChildUpdate(path: $0.path, node: $0.node) }, at: path)
    }

    public func trackQuery(_ q: TrackedQueryDef) throws {
        let location = QueryLocation(path: q.path, query: q.query)
        locations.withLock { $0[q.id] = location }
        try store.trackQuery(at: location, complete: q.complete, active: q.active, keys: q.keys.map { Set($0) })
    }

    public func setTrackedKeys(_ keys: [ChildKey], queryID: Int64) throws {
        guard let location = locations.withLock({ $0[queryID] }) else { return }
        try store.trackQuery(at: location, keys: Set(keys))
    }

    public func loadStartupState() throws {
        // Store.open already read the pending writes and tracked queries (the checkpoint
        // directory and the log after it); the server cache is decoded chunk
        // by chunk as reads and views need it.
    }

    public func read(_ path: Path) throws -> Node {
        try store.serverValue(at: path)
    }

    public func queryWindow(_ q: TrackedQueryDef) throws -> QueryWindow {
        try store.query(q.query, at: q.path).window
    }

    /// What an app re-attaching its listeners at launch costs, as the baselines count it: every
    /// pin's view rebuilt (the store starts this in the background when it opens; this waits
    /// for it), then every tracked query's window answered from the cache. The store keeps no
    /// view for a tracked query no one listens to, so without the windows this would measure
    /// nothing the baselines do.
    public func rebuildViews() throws -> Int {
        store.waitUntilViewsRebuilt()
        let tracked = store.trackedQueries()
        for q in tracked { _ = try store.query(q.location.query, at: q.location.path).window }
        return tracked.count
    }

    /// Workload 5: the engine was opened with `hearthPruneFraction`, so the maintenance that
    /// open scheduled prunes one LRU round and writes a checkpoint; `compact()` waits for it (its
    /// own checkpoint is then a no-op). Call after `rebuildViews()`/`waitUntilLoaded()`.
    public func pruneFraction(_ fraction: Double) throws -> PruneOutcome {
        try store.compact()
        return PruneOutcome(queriesRemoved: queriesAtOpen - store.trackedQueries().count, rowsOrKeysDeleted: 0)
    }

    public func flush() throws {}

    public func close() throws { try store.close() }
}
