// The workload driver: one workload against one engine per process, one JSON line of results
// on stdout. `run.sh` runs every workload × engine (repeatedly), `scripts/report.py` takes the
// medians, draws the chart and writes the table.
//
//   HearthBench WORKLOAD ENGINE --dir DIR [--phase build|measure] [--scale S] [--source DIR]
//
// Workloads: writes1, writes16, fill, coldOpen, query, prune (see README.md); fillStages (the
// fill's per-byte costs stage by stage, FillStages.swift; not in run.sh).
// Engines:   hearth-full, hearth-batched, hearth-batched-cap10, sqlite-full, sqlite-normal,
//            sqlite-batched, leveldb, leveldb-sync, floor.
import Engines
import Foundation
@_spi(HearthInternals) import Hearth
import Synchronization
import Workloads

// MARK: - Arguments and output

let args = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}
guard args.count >= 2 else {
    FileHandle.standardError.write("usage: HearthBench WORKLOAD ENGINE --dir DIR [--phase build|measure] [--scale S] [--source DIR]\n".data(using: .utf8)!)
    exit(2)
}
let workloadName = args[0]
let engineName = args[1]
let directory = option("--dir") ?? NSTemporaryDirectory() + "hearth-bench-\(UUID().uuidString)"
let phase = option("--phase") ?? "measure"
let scale = Double(option("--scale") ?? "1") ?? 1
let clock = ContinuousClock()
nonisolated(unsafe) var metrics: [String: Double] = [:]
nonisolated(unsafe) var notes: [String: String] = [:]

func elapsed(_ t0: ContinuousClock.Instant) -> Double { seconds(clock.now - t0) }

/// The CPU time the calling thread has used, in seconds.
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The calling thread's time on a CPU and waiting on a run queue, in seconds
/// (`/proc/thread-self/schedstat`; zeros where it cannot be read).
func threadSchedStat() -> (run: Double, wait: Double) {
    guard let text = try? String(contentsOfFile: "/proc/thread-self/schedstat", encoding: .utf8) else { return (0, 0) }
    let fields = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    guard fields.count >= 2 else { return (0, 0) }
    return (fields[0] / 1e9, fields[1] / 1e9)
}

/// The CPU time (user + system) every thread of this process has used, in seconds.
func processCPUSeconds() -> Double {
    var u = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
}

/// Peak resident memory of this process so far (ru_maxrss, KiB on Linux).
func peakRSS() -> Double {
    var u = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
    return Double(u.ru_maxrss) * 1024
}

/// Current resident memory (/proc/self/statm).
func currentRSS() -> Double {
    guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let parts = s.split(separator: " ")
    return parts.count > 1 ? (Double(parts[1]) ?? 0) * Double(sysconf(Int32(_SC_PAGESIZE))) : 0
}

func emit() {
    var members: [JSONMember] = [
        JSONMember(key: "workload", value: .string(workloadName)),
        JSONMember(key: "engine", value: .string(engineName)),
        JSONMember(key: "phase", value: .string(phase)),
    ]
    for (k, v) in metrics.sorted(by: { $0.key < $1.key }) where v.isFinite {
        members.append(JSONMember(key: k, value: .number(v)))
    }
    for (k, v) in notes.sorted(by: { $0.key < $1.key }) {
        members.append(JSONMember(key: k, value: .string(v)))
    }
    print(JSONValue.object(members).serialized())
}

// MARK: - Engines

func makeEngine(_ name: String, _ config: EngineConfig) throws -> any PersistenceEngine {
    var config = config
    switch name {
    case "hearth-full": return try HearthEngine(name: name, config: config, durability: .full)
    case "hearth-batched": return try HearthEngine(name: name, config: config, durability: .batched())
    case "hearth-batched-cap10":
        config.hearthCapBytes = 10 << 20
        return try HearthEngine(name: name, config: config, durability: .batched())
    case "hearth-buffered": return try HearthEngine(name: name, config: config, durability: .buffered)
    case "sqlite-full": return try SQLiteEngine(name: name, config: config, sync: .full, batchOps: 0)
    case "sqlite-normal": return try SQLiteEngine(name: name, config: config, sync: .normal, batchOps: 0)
    case "sqlite-batched": return try SQLiteEngine(name: name, config: config, sync: .normal, batchOps: 1000)
    case "leveldb": return try LevelDBEngine(name: name, config: config, sync: false)
    case "leveldb-sync": return try LevelDBEngine(name: name, config: config, sync: true)
    default: throw EngineError.corrupt("unknown engine \(name)")
    }
}

/// The fast variant of an engine's family, used to build stores that are then measured.
func builderName(_ name: String) -> String {
    if name.hasPrefix("hearth") { return "hearth-buffered" }
    if name.hasPrefix("sqlite") { return "sqlite-batched" }
    return "leveldb"
}

/// The size of the data as compact JSON.
func jsonBytes(_ node: Node) -> Int { node.plainJSONString().utf8.count }

// MARK: - Workload data

/// The realistic stream as server operations: score tables arrive as merges of their entries,
/// chat messages and profiles as overwrites.
enum ServerOp {
    case overwrite(Path, Node, Int)
    case merge(Path, [(path: Path, node: Node)], Int)
}

func serverOps(seed: UInt64, bytes: Int) -> [ServerOp] {
    var w = Workload(seed: seed)
    return w.writes(totalJSONBytes: bytes).map { x in
        if x.path.keys.first?.string == "scores" {
            return .merge(x.path, x.node.children.map { (Path(keys: [$0.key]), $0.value) }, x.json.utf8.count)
        }
        return .overwrite(x.path, x.node, x.json.utf8.count)
    }
}

func apply(_ op: ServerOp, _ engine: any PersistenceEngine) throws {
    switch op {
    case .overwrite(let p, let n, _): try engine.serverOverwrite(n, at: p)
    case .merge(let p, let c, _): try engine.serverMerge(c, at: p)
    }
}

// MARK: - 1. Durable pending writes

final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    func add(_ xs: [Double]) { lock.withLock { values += xs } }
    func all() -> [Double] { lock.withLock { values } }
}

/// Runs `lists.count` writer threads, each calling `write` on its list's items in order, then
/// `done`; returns every call's latency in seconds.
func runWriters<Item>(_ lists: [[Item]], write: @escaping @Sendable (Item) throws -> Void, done: @escaping @Sendable () -> Void = {}) -> [Double] {
    let results = Collector()
    let group = DispatchGroup()
    for list in lists {
        nonisolated(unsafe) let list = list
        group.enter()
        let thread = Thread {
            var local: [Double] = []
            let clock = ContinuousClock()
            for item in list {
                let s = clock.now
                try! write(item)
                local.append(seconds(clock.now - s))
            }
            done()
            results.add(local)
            group.leave()
        }
        thread.start()
    }
    group.wait()
    return results.all()
}

func durableWrites(writers: Int) throws {
    let perWriter = Int((writers == 1 ? 1000.0 : 100.0) * scale)
    var w = Workload(seed: 11)
    let items: [[(Path, Node, String)]] = (0..<writers).map { _ in
        (0..<perWriter).map { _ in
            let x = w.next()
            return (Path(keys: [ChildKey("outbox")] + x.path.keys), x.node, x.json)
        }
    }
    let logical = items.joined().reduce(0) { $0 + $1.2.utf8.count }
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    // The floor's records (the same bytes as LevelDB's write record, the JSON) and its file,
    // preallocated and synced before the timed part.
    let floorRecords = items.map { $0.map { Array(#"{"path":"\#($0.0)","o":\#($0.2)}"#.utf8) } }
    let floorLog = engineName == "floor"
        ? try GroupCommitFloor(file: directory + "/floor.log", capacity: floorRecords.joined().reduce(0) { $0 + $1.count }, writers: writers)
        : nil
    let rssBase = currentRSS()
    var latencies: [Double] = []
    var closeSeconds = 0.0
    let cpu0 = processCPUSeconds()
    let t0 = clock.now
    if let floorLog {
        latencies = runWriters(floorRecords, write: { try floorLog.commit($0) }, done: { floorLog.finish() })
        metrics["groups"] = Double(floorLog.groups)
    } else {
        let engine = try makeEngine(engineName, EngineConfig(directory: directory))
        // Part of `seconds`, as the close is.
        metrics["openMs"] = elapsed(t0) * 1000
        let lock = NSLock()
        let concurrent = engine.supportsConcurrentWriters
        nonisolated(unsafe) let e = engine
        latencies = runWriters(items) { (path, node, _) in
            if concurrent {
                _ = try e.saveWrite(node, at: path)
            } else {
                try lock.withLock { _ = try e.saveWrite(node, at: path) }
            }
        }
        let c0 = clock.now
        try engine.flush()
        try engine.close()
        closeSeconds = elapsed(c0)
        if let hearth = engine as? HearthEngine {
            // The group commit's gathers, and those that ended at their limit (one sync's time)
            // with fewer committers queued than the last group released.
            let (gathers, timeouts) = hearth.store.groupCommitGathers
            metrics["gathers"] = Double(gathers)
            metrics["gatherTimeouts"] = Double(timeouts)
        }
    }
    let total = elapsed(t0)
    // Every thread's CPU over the timed part (the writers', the engine's own, the group commit's).
    metrics["cpuSeconds"] = processCPUSeconds() - cpu0
    // The flush and close after the last write returned: part of `seconds`.
    metrics["closeSeconds"] = closeSeconds
    metrics["closeMs"] = engineName == "floor" ? nil : closeSeconds * 1000
    metrics["peakRSSBytes"] = peakRSS()
    metrics["rssBaseBytes"] = rssBase
    metrics["ops"] = Double(latencies.count)
    metrics["seconds"] = total
    metrics["opsPerSec"] = Double(latencies.count) / total
    metrics["p50Ms"] = percentile(latencies, 0.5) * 1000
    metrics["p99Ms"] = percentile(latencies, 0.99) * 1000
    metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
    metrics["logicalBytes"] = Double(logical)
    metrics["writers"] = Double(writers)
    if engineName != "floor" {
        // Not part of `seconds`: the next session's open and its load of the pending writes, so
        // that work an engine moves from close to the next open is seen (LevelDB replays its
        // log at open; Hearth checkpoints a long tail at close).
        let r0 = clock.now
        let engine = try makeEngine(engineName, EngineConfig(directory: directory))
        try engine.loadStartupState()
        metrics["reopenMs"] = elapsed(r0) * 1000
        try engine.close()
    }
    try? FileManager.default.removeItem(atPath: directory)
}

// MARK: - 2. Cache fill

func cacheFill() throws {
    let ops = serverOps(seed: 20261121, bytes: Int(50.0 * scale * 1048576))
    let logicalIn = ops.reduce(0) { n, op in
        switch op { case .overwrite(_, _, let b), .merge(_, _, let b): n + b }
    }
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let rssBase = currentRSS()
    metrics["rssBaseBytes"] = rssBase
    metrics["jsonBytesIn"] = Double(logicalIn)
    if engineName == "floor" {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(logicalIn + 1024)
        var records: [[UInt8]] = []
        for op in ops {
            let json: String
            switch op {
            case .overwrite(_, let n, _): json = n.plainJSONString()
            case .merge(_, let c, _): json = Node(children: c.map { ($0.path.keys[0], $0.node) }).plainJSONString()
            }
            records.append(Array(json.utf8))
            bytes += records.last!
        }
        let t0 = clock.now
        let lat = try Floor.append(records, file: directory + "/floor.log")
        let appendSeconds = elapsed(t0)
        let (pieces, deflateSeconds) = Floor.deflate(bytes)
        let inflateSeconds = Floor.inflate(pieces)
        let compressed = pieces.reduce(0) { $0 + $1.0.count }
        metrics["peakRSSBytes"] = peakRSS()
        metrics["ops"] = Double(records.count)
        metrics["seconds"] = appendSeconds
        metrics["opsPerSec"] = Double(records.count) / appendSeconds
        metrics["mbPerSec"] = Double(bytes.count) / 1048576 / appendSeconds
        metrics["p50Ms"] = percentile(lat, 0.5) * 1000
        metrics["p99Ms"] = percentile(lat, 0.99) * 1000
        metrics["deflateMBPerSec"] = Double(bytes.count) / 1048576 / deflateSeconds
        metrics["inflateMBPerSec"] = Double(bytes.count) / 1048576 / inflateSeconds
        metrics["deflateRatio"] = Double(compressed) / Double(bytes.count)
        metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
        metrics["logicalBytes"] = Double(bytes.count)
        try? FileManager.default.removeItem(atPath: directory)
        return
    }
    let engine = try makeEngine(engineName, EngineConfig(directory: directory))
    var latencies: [Double] = []
    latencies.reserveCapacity(ops.count)
    let threadStats = ProcessInfo.processInfo.environment["HEARTH_BENCH_THREAD_CPU"] == "1"
    let cpu0 = threadCPUSeconds()
    let processCPU0 = processCPUSeconds()
    let sched0 = threadSchedStat()
    let t0 = clock.now
    for op in ops {
        let s = clock.now
        try apply(op, engine)
        latencies.append(elapsed(s))
    }
    try engine.flush()
    let applySeconds = elapsed(t0)
    // Off by default: HEARTH_BENCH_THREAD_CPU=1 adds the CPU the applying thread used (for
    // Hearth: the commits, without the maintenance queue's), the whole process's CPU over the
    // same span (every thread: on two cores, whether both were busy), the applying thread's
    // time on a CPU and runnable but waiting for one (/proc/thread-self/schedstat: the rest
    // of the span it was blocked — on backpressure, a lock, I/O) and the bytes on disk before
    // close.
    if threadStats {
        metrics["applyThreadCPUSeconds"] = threadCPUSeconds() - cpu0
        metrics["applyProcessCPUSeconds"] = processCPUSeconds() - processCPU0
        let sched1 = threadSchedStat()
        metrics["applyThreadRunSeconds"] = sched1.run - sched0.run
        metrics["applyThreadRunQueueSeconds"] = sched1.wait - sched0.wait
        metrics["bytesOnDiskBeforeClose"] = Double(bytesOnDisk(directory))
    }
    // Off by default (it loads the whole cache): HEARTH_BENCH_STATS=1 adds the checkpoints and
    // pruning rounds the fill's maintenance ran, and how many commits waited for it.
    if ProcessInfo.processInfo.environment["HEARTH_BENCH_STATS"] == "1", let hearth = engine as? HearthEngine {
        let stats = try hearth.store.stats()
        metrics["checkpointsWritten"] = Double(stats.checkpointsWritten)
        metrics["pruneRounds"] = Double(stats.pruneRounds)
        metrics["backpressureWaits"] = Double(hearth.store.backpressureWaitCount)
        let chunks = hearth.store.checkpointChunkCounts
        metrics["checkpointChunksCopied"] = Double(chunks.copied)
        metrics["checkpointChunksEncoded"] = Double(chunks.encoded)
        metrics["checkpointRawBytesCopied"] = Double(chunks.copiedRawBytes)
        metrics["checkpointRawBytesEncoded"] = Double(chunks.encodedRawBytes)
    }
    let c0 = clock.now
    try engine.close()
    metrics["closeSeconds"] = elapsed(c0)
    metrics["peakRSSBytes"] = peakRSS()
    metrics["ops"] = Double(ops.count)
    metrics["seconds"] = applySeconds
    metrics["opsPerSec"] = Double(ops.count) / applySeconds
    metrics["mbPerSec"] = Double(logicalIn) / 1048576 / applySeconds
    metrics["p50Ms"] = percentile(latencies, 0.5) * 1000
    metrics["p99Ms"] = percentile(latencies, 0.99) * 1000
    metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
    // The logical size of what the engine holds now (Hearth under a 10 MiB cap holds less).
    let reopened = try makeEngine(builderName(engineName), EngineConfig(directory: directory))
    metrics["logicalBytes"] = Double(jsonBytes(try reopened.read(.root)))
    try reopened.close()
    try? FileManager.default.removeItem(atPath: directory)
}

// MARK: - 3. Cold open at the cap


/// Hearth's store at its 10 MiB cap: realistic data fed until LRU pruning holds the footprint
/// at the cap, 100 tracked queries (40 filtered limitToLast(50) windows over chat rooms with
/// their tracked keys, 60 profiles), 1,000 pending writes.
func buildHearthAtCap(_ dir: String) throws {
    let (fed, footprint) = try buildStoreAtCap(dir)
    notes["fedMiB"] = "\(fed)"
    metrics["hearthFootprint"] = Double(footprint)
}

/// The same content into a baseline: the server cache (one overwrite per location two levels
/// down), the same tracked queries and keys, the same pending writes.
func copyHearthContent(from source: String, into engine: any PersistenceEngine) throws -> Int {
    let tmp = NSTemporaryDirectory() + "hearth-bench-copy-\(UUID().uuidString)"
    try FileManager.default.copyItem(atPath: source, toPath: tmp)
    defer { try? FileManager.default.removeItem(atPath: tmp) }
    var options = Store.Options()
    options.cacheSizeBytes = Store.maximumCacheSize
    options.backgroundMaintenance = false
    let store = try Store.open(directory: tmp, options: options)
    let state = try store.state()
    try store.close()
    var logical = 0
    for (k1, c1) in state.serverCache.children {
        for (k2, c2) in c1.children {
            try engine.serverOverwrite(c2, at: Path(keys: [k1, k2]))
        }
    }
    logical += jsonBytes(state.serverCache)
    for q in state.trackedQueries.values.sorted(by: { $0.id < $1.id }) {
        try engine.trackQuery(TrackedQueryDef(id: q.id, path: q.path, query: q.query, complete: q.complete, active: q.active,
                                              lastUse: q.lastUse, keys: q.keys.map { Array($0).sorted { ChildKey.compare($0, $1) < 0 } }))
    }
    for w in state.pendingWrites {
        guard case .set(let n) = w.operation else { continue }
        _ = try engine.saveWrite(n, at: w.path)
        logical += jsonBytes(n)
    }
    try engine.flush()
    return logical
}

func coldOpen() throws {
    if phase == "build" {
        try? FileManager.default.removeItem(atPath: directory)
        if engineName.hasPrefix("hearth") {
            try buildHearthAtCap(directory)
            let engine = try makeEngine("hearth-buffered", EngineConfig(directory: directory))
            metrics["logicalBytes"] = Double(try copyLogical(engine as! HearthEngine))
            try engine.close()
        } else if engineName == "floor" {
            // The logical content as deflated 64 KiB chunks in one file.
            let engine = try makeEngine("hearth-buffered", EngineConfig(directory: option("--source")!))
            let h = engine as! HearthEngine
            let json = Array(try h.store.state().serverCache.plainJSONString().utf8)
            try engine.close()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let (pieces, _) = Floor.deflate(json)
            var file = Data()
            var index = ""
            for (p, raw) in pieces { file.append(contentsOf: p); index += "\(p.count) \(raw)\n" }
            try file.write(to: URL(fileURLWithPath: directory + "/floor.z"))
            try index.write(toFile: directory + "/floor.index", atomically: true, encoding: .utf8)
            metrics["logicalBytes"] = Double(json.count)
        } else {
            let engine = try makeEngine(builderName(engineName), EngineConfig(directory: directory))
            metrics["logicalBytes"] = Double(try copyHearthContent(from: option("--source")!, into: engine))
            try engine.close()
        }
        metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
        return
    }
    if engineName == "floor" {
        // Read every compressed chunk and inflate it: the least "load everything" could cost.
        let t0 = clock.now
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/floor.z"))
        let index = try String(contentsOfFile: directory + "/floor.index", encoding: .utf8)
        var pieces: [([UInt8], Int)] = []
        var offset = 0
        for line in index.split(separator: "\n") {
            let f = line.split(separator: " ").compactMap { Int($0) }
            pieces.append((Array(data[offset..<(offset + f[0])]), f[1]))
            offset += f[0]
        }
        let firstPiece = elapsed(t0) + Floor.inflate([pieces[0]])
        _ = Floor.inflate(pieces)
        metrics["firstReadMs"] = firstPiece * 1000
        metrics["viewsMs"] = elapsed(t0) * 1000
        metrics["peakRSSBytes"] = peakRSS()
        metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
        return
    }
    var config = EngineConfig(directory: directory)
    config.hearthCapBytes = 10 << 20
    let t0 = clock.now
    let engine = try makeEngine(engineName, config)
    metrics["openMs"] = elapsed(t0) * 1000
    try engine.loadStartupState()
    let value = try engine.read(smallLocation)
    metrics["firstReadMs"] = elapsed(t0) * 1000
    precondition(!value.isEmpty, "the small location must hold data")
    let views = try engine.rebuildViews()
    metrics["viewsMs"] = elapsed(t0) * 1000
    metrics["views"] = Double(views)
    // The peak of open, first read and every view: what an app pays at launch.
    metrics["peakRSSBytes"] = peakRSS()
    if let h = engine as? HearthEngine, option("--whole-load") == "checkpoint" {
        // What a checkpoint after open costs, in time and memory (issue 47 item 3): a server
        // write inside one location, then `compact()` — the checkpoint a maintenance pass writes.
        try h.store.applyServerOverwrite(.string("checkpointed"), at: smallLocation.child("bio"))
        let t = clock.now
        try h.store.compact()
        metrics["checkpointMs"] = elapsed(t) * 1000
        metrics["peakRSSCheckpointBytes"] = peakRSS()
    } else if let h = engine as? HearthEngine, let mode = option("--whole-load"), mode.hasPrefix("stat") {
        // What `stats()` and `state()` cost after open (issue 47 item 3): `stats` (the cache's
        // size from the checkpoint's chunk table), `state-location` (one location's state, its
        // chunks read), `state` (the whole state: the whole cache materialised).
        let t = clock.now
        switch mode {
        case "stats": metrics["serverCacheBytes"] = Double(try h.store.stats().serverCacheBytes)
        case "state-location":
            metrics["locationBytes"] = Double(jsonBytes(try h.store.state(at: smallLocation).serverCache.child(at: smallLocation)))
        default: metrics["stateBytes"] = Double(jsonBytes(try h.store.state().serverCache))
        }
        metrics["wholeLoadMs"] = elapsed(t) * 1000
        metrics["peakRSSWholeLoadBytes"] = peakRSS()
    } else if let h = engine as? HearthEngine, option("--whole-load") != "skip" {
        // For the analysis (`--whole-load skip` leaves it out, for a heap profile of the
        // open alone): what loading the whole cache (which nothing at open needs: reads
        // and views decode the chunks they need; pruning, a checkpoint or `state()` would)
        // costs on top, in time and memory.
        try h.store.waitUntilLoaded()
        metrics["loadedMs"] = elapsed(t0) * 1000
        metrics["peakRSSLoadedBytes"] = peakRSS()
    }
    try engine.close()
    metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
}

func copyLogical(_ h: HearthEngine) throws -> Int {
    let s = try h.store.state()
    return jsonBytes(s.serverCache) + s.pendingWrites.reduce(0) { n, w in
        if case .set(let node) = w.operation { return n + jsonBytes(node) }
        return n
    }
}

// MARK: - 4. Query window

let bigPath: Path = "chats/big/messages"

func queryDef(keys: [ChildKey]?) throws -> TrackedQueryDef {
    TrackedQueryDef(id: 1, path: bigPath, query: try QuerySpec(orderBy: .key).limitToLast(50), complete: true, active: false, lastUse: 1, keys: keys)
}

func queryWorkload() throws {
    let children = Int(100_000 * scale)
    if phase == "build" {
        try? FileManager.default.removeItem(atPath: directory)
        let engine = try makeEngine(builderName(engineName), EngineConfig(directory: directory))
        var w = Workload(seed: 3)
        var all: [(key: ChildKey, value: Node)] = []
        var batch: [(path: Path, node: Node)] = []
        var logical = 0
        // Chat messages, written as server merges of 1,000 children.
        while all.count < children {
            var x = w.next()
            while x.path.keys.first?.string != "chats" { x = w.next() }
            let key = x.path.keys.last!
            all.append((key, x.node))
            batch.append((Path(keys: [key]), x.node))
            logical += x.json.utf8.count
            if batch.count == 1000 || all.count == children {
                try engine.serverMerge(batch, at: bigPath)
                batch = []
            }
        }
        let node = Node(children: all)
        let q = try queryDef(keys: nil)
        try engine.trackQuery(try queryDef(keys: q.query.window(of: node).keys))
        try engine.flush()
        try engine.close()
        metrics["logicalBytes"] = Double(logical)
        metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
        return
    }
    let q = try queryDef(keys: nil)
    let t0 = clock.now
    let engine = try makeEngine(engineName, EngineConfig(directory: directory))
    try engine.loadStartupState()
    let window = try engine.queryWindow(q)
    metrics["coldMs"] = elapsed(t0) * 1000
    precondition(window.entries.count == 50, "the window must hold 50 children, got \(window.entries.count)")
    var warm: [Double] = []
    for _ in 0..<10 {
        let s = clock.now
        _ = try engine.queryWindow(q)
        warm.append(elapsed(s))
    }
    metrics["warmP50Ms"] = percentile(warm, 0.5) * 1000
    metrics["warmP99Ms"] = percentile(warm, 0.99) * 1000
    metrics["peakRSSBytes"] = peakRSS()
    try engine.close()
    metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
}

// MARK: - 5. Pruning 20% of a full cache

/// 61 complete default queries (40 chat rooms, 20 score tables, the profiles), inactive, last
/// used in creation order, covering ~10 MiB of JSON.
func pruneBuild() throws {
    try? FileManager.default.removeItem(atPath: directory)
    var config = EngineConfig(directory: directory)
    config.logicalClock = true
    let engine = try makeEngine(builderName(engineName), config)
    var paths: [Path] = (0..<40).map { Path(keys: ["chats", ChildKey("room\($0)")]) }
    paths += (0..<20).map { Path(keys: ["scores", ChildKey("game\($0)")]) }
    paths.append("profiles")
    for (i, p) in paths.enumerated() {
        try engine.trackQuery(TrackedQueryDef(id: Int64(i + 1), path: p, query: .default, complete: true, active: false, lastUse: Int64(i + 1)))
    }
    for op in serverOps(seed: 5, bytes: Int(10.0 * scale * 1048576)) { try apply(op, engine) }
    try engine.flush()
    metrics["logicalBytes"] = Double(jsonBytes(try engine.read(.root)))
    try engine.close()
    if engineName.hasPrefix("hearth"), let h = try makeEngine("hearth-buffered", EngineConfig(directory: directory)) as? HearthEngine {
        try h.store.compact()  // the full cache as a checkpoint, the state an app would leave
        try h.close()
    }
    metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
}

func pruneMeasure() throws {
    var config = EngineConfig(directory: directory)
    config.hearthPruneFraction = 0.2
    if engineName.hasPrefix("hearth"), let share = option("--cap-share").flatMap({ Double($0) }) {
        // Pruned to a size instead (issue 47 item 3): a cap of this share of the store's bytes
        // on disk, and no limit on inactive queries.
        config.hearthCapBytes = Int(share * Double(bytesOnDisk(directory)))
        config.hearthPruneFraction = nil
    }
    metrics["bytesBefore"] = Double(bytesOnDisk(directory))
    let t0 = clock.now
    let engine = try makeEngine(engineName, config)
    try engine.loadStartupState()
    // The prune needs no whole cache: an app prunes a store opened as it is. `--whole-load load`
    // loads it first, as this workload did before prunes were computed without it.
    if let h = engine as? HearthEngine, option("--whole-load") == "load" { try h.store.waitUntilLoaded() }
    metrics["loadMs"] = elapsed(t0) * 1000
    let t1 = clock.now
    let outcome = try engine.pruneFraction(0.2)
    try engine.flush()
    metrics["pruneMs"] = elapsed(t1) * 1000
    metrics["openToPrunedMs"] = elapsed(t0) * 1000
    metrics["queriesRemoved"] = Double(outcome.queriesRemoved)
    metrics["peakRSSBytes"] = peakRSS()
    try engine.close()
    metrics["bytesOnDisk"] = Double(bytesOnDisk(directory))
    let reopened = try makeEngine(builderName(engineName), EngineConfig(directory: directory))
    metrics["logicalBytes"] = Double(jsonBytes(try reopened.read(.root)))
    try reopened.close()
}

// MARK: - Main

do {
    switch workloadName {
    case "writes1": try durableWrites(writers: 1)
    case "writes16": try durableWrites(writers: 16)
    case "fill": try cacheFill()
    case "fillStages": try fillStages()
    case "coldOpen": try coldOpen()
    case "query": try queryWorkload()
    case "prune": if phase == "build" { try pruneBuild() } else { try pruneMeasure() }
    default: throw EngineError.corrupt("unknown workload \(workloadName)")
    }
    emit()
} catch {
    FileHandle.standardError.write("HearthBench \(workloadName) \(engineName): error: \(error)\n".data(using: .utf8)!)
    exit(1)
}
