// Engine scenarios: whole-store measurements that a micro-benchmark harness cannot express.
//
//   swift run -c release EngineScenarios [cacheFill|openAtCap|checkpointPause|viewsAtOpen|viewUpdate|inactiveWindows|all]
//
// 1. cacheFill: 50 MiB of realistic JSON through serverSet under the default 10 MiB cap —
//    the footprint during and after (it must stay near the cap), time, prune rounds.
// 2. openAtCap: a store at the cap holding 1,000 pending writes and 100 tracked queries —
//    time for open() to return, to the first read of one small location, and until the
//    whole cache is loaded (median of 7 cold reopenings; the OS page cache is warm).
// 3. checkpointPause: the commit latency a writer sees while a checkpoint of the full store
//    is written, against its latency with no checkpoint running.
// 4. viewsAtOpen: time from open() to a listener's first view (initial events delivered) and
//    until every tracked query's view is rebuilt.
// 5. viewUpdate: the cost of one server update under a listened view of 100,000 children.
// 6. pendingWrites: the cost of one more pending write (a user set on a sibling `chat/mNNNNNN`,
//    as an app offline for a day queues them) with 1,000, 10,000 and 100,000 already pending,
//    and the time from open() to the first read of a store holding that many.
// 7. inactiveWindows: the cost of one server update (a new message appended to `chat`) with
//    one active `limitToLast(50)` listener there and 0, 40 or 1,000 inactive tracked windows
//    beside it (an app that paged back through the chat, each page `endAt(k).limitToLast(50)`).
// 8. windowOfCachedList: a list of N children cached whole (a complete default query at its
//    location, inactive; a `ts`-ordered window tracked there, incomplete), reopened, then a listener's `limitToLast(50)` (by key, by child `ts`)
//    — open() to its initial events delivered.
import Foundation
import Hearth
import Workloads

func tempDirectory(_ name: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-scenario-\(name)-\(UUID().uuidString)").path
    return path
}

func ms(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

func mib(_ b: UInt64) -> String { String(format: "%.2f MiB", Double(b) / 1048576) }

let clock = ContinuousClock()

// MARK: - 1. Cache fill

func cacheFill() throws {
    let dir = tempDirectory("fill")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var options = Store.Options()
    options.durability = .batched()
    // HEARTH_SCENARIO_CAP_MIB / HEARTH_SCENARIO_FILL_MIB: a smaller cap or a longer fill makes
    // pruning work (50 MiB of this JSON compresses to about 4.4 MiB, under the default cap).
    let env = ProcessInfo.processInfo.environment
    if let cap = env["HEARTH_SCENARIO_CAP_MIB"].flatMap(Double.init) { options.cacheSizeBytes = Int(cap * 1048576) }
    let fillMiB = env["HEARTH_SCENARIO_FILL_MIB"].flatMap(Int.init) ?? 50
    let store = try Store.open(directory: dir, options: options)
    var workload = Workload()
    let writes = workload.writes(totalJSONBytes: fillMiB << 20)
    var maxFootprint: UInt64 = 0
    let start = clock.now
    for (i, w) in writes.enumerated() {
        try store.applyServerOverwrite(w.node, at: w.path)
        if i % 2000 == 0 { maxFootprint = max(maxFootprint, try store.stats().footprintBytes) }
    }
    let elapsed = clock.now - start
    let after = try store.stats()
    maxFootprint = max(maxFootprint, after.footprintBytes)
    let (_, compacted) = try store.compact()
    let final = try store.stats()
    print("cacheFill: \(writes.count) serverSet ops, \(fillMiB) MiB JSON, tier .batched(10 ms), cap \(mib(UInt64(options.cacheSizeBytes)))")
    print("  time \(String(format: "%.1f", ms(elapsed) / 1000)) s (\(String(format: "%.0f", Double(writes.count) / (ms(elapsed) / 1000))) ops/s)")
    print("  footprint: max sampled \(mib(maxFootprint)), at end \(mib(after.footprintBytes)), after compact \(mib(compacted))")
    print("  server cache kept \(mib(UInt64(final.serverCacheBytes))) raw, \(final.checkpointsWritten) checkpoints, \(final.pruneRounds) prune rounds, \(final.untrackedEntries) untracked entries")
    try store.close()
}

// MARK: - 2. Open at the cap

func openAtCap() throws {
    let dir = tempDirectory("open")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (fed, _) = try buildStoreAtCap(dir)
    print("  (built by feeding \(fed) MiB of JSON)")
    var opens: [Double] = [], firstReads: [Double] = [], loadedAll: [Double] = []
    var footprint: UInt64 = 0
    var counts = (0, 0)
    for _ in 0..<7 {
        let t0 = clock.now
        let store = try Store.open(directory: dir)
        let t1 = clock.now
        let value = try store.serverValue(at: smallLocation)
        let t2 = clock.now
        try store.waitUntilLoaded()
        let t3 = clock.now
        precondition(!value.isEmpty, "the read location must hold data")
        opens.append(ms(t1 - t0))
        firstReads.append(ms(t2 - t0))
        loadedAll.append(ms(t3 - t0))
        let stats = try store.stats()
        footprint = stats.footprintBytes
        counts = (stats.pendingWrites, stats.trackedQueries)
        try store.close()
    }
    print("openAtCap: footprint \(mib(footprint)), \(counts.0) pending writes, \(counts.1) tracked queries; medians of 7 reopenings")
    print(String(format: "  open() returns %.1f ms; first read of one small location %.1f ms; whole cache loaded %.1f ms", median(opens), median(firstReads), median(loadedAll)))
}

// MARK: - 3. Checkpoint pause

final class LatencyRecorder: @unchecked Sendable {
    let lock = NSLock()
    var samples: [(at: ContinuousClock.Instant, ms: Double)] = []
    var stop = false
}

func checkpointPause() throws {
    let dir = tempDirectory("pause")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (fed, _) = try buildStoreAtCap(dir)
    print("  (built by feeding \(fed) MiB of JSON)")
    var options = Store.Options()
    options.durability = .buffered
    options.checkpointMinimumBytes = 64 << 20  // only the explicit checkpoints below
    let store = try Store.open(directory: dir, options: options)
    try store.waitUntilLoaded()
    let recorder = LatencyRecorder()
    let writer = Thread {
        var i = 0
        while true {
            recorder.lock.lock()
            let stop = recorder.stop
            recorder.lock.unlock()
            if stop { break }
            let t0 = clock.now
            _ = try? store.applyServerOverwrite(.number(Double(i)), at: Path(keys: ["ticker", ChildKey("k\(i % 100)")]))
            let t1 = clock.now
            recorder.lock.lock()
            recorder.samples.append((t0, ms(t1 - t0)))
            recorder.lock.unlock()
            i += 1
        }
    }
    writer.start()
    Thread.sleep(forTimeInterval: 1.0)
    var windows: [(ContinuousClock.Instant, ContinuousClock.Instant)] = []
    for _ in 0..<5 {
        try store.applyServerOverwrite(.string("dirty"), at: "force/checkpoint")
        let c0 = clock.now
        try store.compact()
        windows.append((c0, clock.now))
        Thread.sleep(forTimeInterval: 0.5)
    }
    recorder.lock.lock()
    recorder.stop = true
    recorder.lock.unlock()
    Thread.sleep(forTimeInterval: 0.1)
    let samples = recorder.samples
    let during = samples.filter { s in windows.contains { s.at >= $0.0 && s.at <= $0.1 } }.map(\.ms)
    let outside = samples.filter { s in !windows.contains { s.at >= $0.0 && s.at <= $0.1 } }.map(\.ms)
    let checkpointMs = windows.map { ms($0.1 - $0.0) }
    let stats = try store.stats()
    print("checkpointPause: checkpoint of \(mib(stats.footprintBytes)) footprint, 5 checkpoints (median \(String(format: "%.0f", median(checkpointMs))) ms each), writer on .buffered")
    print(String(format: "  writer commit latency, no checkpoint: p50 %.3f ms, p99 %.3f ms, max %.1f ms (%d commits)", median(outside), percentile(outside, 0.99), outside.max() ?? .nan, outside.count))
    print(String(format: "  writer commit latency, during checkpoint: p50 %.3f ms, p99 %.3f ms, max %.1f ms (%d commits)", median(during), percentile(during, 0.99), during.max() ?? .nan, during.count))
    try store.close()
}

// MARK: - 4. Views after open

func viewsAtOpen() throws {
    let dir = tempDirectory("views")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let (fed, _) = try buildStoreAtCap(dir)
    print("  (built by feeding \(fed) MiB of JSON)")
    var firstView: [Double] = [], allViews: [Double] = []
    var views = 0
    for _ in 0..<7 {
        let t0 = clock.now
        let store = try Store.open(directory: dir)
        let query = try QuerySpec(orderBy: .child("ts")).limitToLast(50)
        final class Count: @unchecked Sendable { var n = 0 }
        let count = Count()
        _ = try store.addListener(at: "chats/room3/messages", query: query) { _ in count.n += 1 }
        store.waitForEventDelivery()
        let t1 = clock.now
        store.waitUntilViewsRebuilt()
        let t2 = clock.now
        precondition(count.n > 0, "the first view raised no events")
        firstView.append(ms(t1 - t0))
        allViews.append(ms(t2 - t0))
        views = store.viewCount
        try store.close()
    }
    print("viewsAtOpen: store at the cap, 100 tracked queries; medians of 7 reopenings, from the start of open()")
    print(String(format: "  first view (a listener's limitToLast(50) by child, initial events delivered) %.1f ms; all %d views rebuilt %.1f ms", median(firstView), views, median(allViews)))
}

// MARK: - 5. One server update under a view of 100,000 children

func viewUpdate() throws {
    let n = 100_000
    let pairs = (0..<n).map { i in (key: ChildKey("c\(100_000 + i)"), value: Node(children: [("score", .number(Double(i % 1000)))])) }
    let big = Node(children: pairs)
    var results: [String: Double] = [:]
    for listened in [false, true] {
        let dir = tempDirectory("update")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = Store.Options()
        options.durability = .buffered
        options.cacheSizeBytes = Store.maximumCacheSize
        options.checkpointMinimumBytes = 64 << 20
        let store = try Store.open(directory: dir, options: options)
        try store.applyServerOverwrite(big, at: "big")
        // The listener's view is the store's only one; without it the store keeps no view at all.
        if listened { try store.trackQuery(at: QueryLocation(path: "big", query: .default), complete: true, active: true) }
        final class Count: @unchecked Sendable { var n = 0 }
        let count = Count()
        if listened { _ = try store.addListener(at: "big") { _ in count.n += 1 } }
        precondition(store.viewCount == (listened ? 1 : 0))
        store.waitForEventDelivery()
        var latencies: [Double] = []
        for i in 0..<2000 {
            let key = ChildKey("c\(100_000 + (i * 7919) % n)")
            let t0 = clock.now
            try store.applyServerOverwrite(Node(children: [("score", .number(Double(5000 + i)))]), at: Path(keys: ["big", key]))
            latencies.append(ms(clock.now - t0) * 1000)
        }
        store.waitForEventDelivery()
        if listened { precondition(count.n >= 2 * 2000, "every update raises child_changed and value") }
        results[listened ? "with" : "without"] = median(latencies)
        try store.close()
    }
    print("viewUpdate: one server update of one child under a default view of 100,000 children (commit on .buffered; median of 2,000)")
    print(String(format: "  with a listened view: %.1f µs per commit (child_changed + value raised); without any view: %.1f µs; the view's share: %.1f µs", results["with"]!, results["without"]!, results["with"]! - results["without"]!))
}

// MARK: - 6. Pending writes at scale

func pendingWrites() throws {
    let env = ProcessInfo.processInfo.environment
    let scales = env["HEARTH_SCENARIO_PENDING"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1_000, 10_000, 100_000]
    print("pendingWrites: user sets on siblings chat/mNNNNNN, tier .buffered; per-write cost = median over the last 1,000 writes")
    for n in scales {
        let dir = tempDirectory("pending")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = Store.Options()
        options.durability = .buffered
        options.cacheSizeBytes = Store.maximumCacheSize
        let store = try Store.open(directory: dir, options: options)
        var perWrite: [Double] = []
        let start = clock.now
        for i in 0..<n {
            let node = Node(children: [("n", .number(Double(i))), ("t", .string("hello"))])
            let t0 = clock.now
            try store.saveWrite(.set(node), at: Path(keys: ["chat", ChildKey("m\(String(1_000_000 + i))")]))
            if i >= n - 1000 { perWrite.append(ms(clock.now - t0) * 1000) }
        }
        let total = ms(clock.now - start)
        // Close checkpoints a log tail of 64 KiB or more (what the next open would replay).
        let closeStart = clock.now
        try store.close()
        let closing = ms(clock.now - closeStart)
        // What the first reopen scans and replays: the live segments (the log after the last
        // checkpoint, plus any covered records still in a live segment).
        let live = liveLogBytes(dir)
        var opened: [Double] = [], firstRead: [Double] = []
        for _ in 0..<5 {
            let t0 = clock.now
            let reopened = try Store.open(directory: dir, options: options)
            opened.append(ms(clock.now - t0))
            _ = try reopened.value(at: "chat/m1000000")
            firstRead.append(ms(clock.now - t0))
            try reopened.close()
        }
        // The first reopen replays the log after the last checkpoint; when that is long, its
        // maintenance writes a checkpoint that the later reopens read instead.
        print(String(format: "  %7d pending: %.1f µs per write (median of the last 1,000), %.2f s for all; open() %.1f ms, open to first read %.1f ms (medians of 5; first reopen %.1f ms, live log before it %.0f KB; close %.1f ms)",
                     n, median(perWrite), total / 1000, median(opened), median(firstRead), firstRead[0], Double(live) / 1000, closing))
    }
}

/// The bytes of the segment files in a store directory.
func liveLogBytes(_ dir: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    return names.filter { $0.hasPrefix("seg-") && $0.hasSuffix(".log") }.reduce(0) { total, name in
        let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.size] as? Int) ?? 0
        return total + size
    }
}

/// `pendingOpen DIR [REPS]`: builds a store of N pending writes in DIR (the first of
/// HEARTH_SCENARIO_PENDING, default 100,000) unless DIR holds one, then reopens it REPS times
/// (default 20) and prints open() and open → first read: a loop to profile open alone.
func pendingOpen() throws {
    let args = Array(CommandLine.arguments.dropFirst(2))
    guard let dir = args.first else { throw StoreError.invalidOption("pendingOpen needs a directory") }
    let reps = args.dropFirst().first.flatMap(Int.init) ?? 20
    let n = ProcessInfo.processInfo.environment["HEARTH_SCENARIO_PENDING"].flatMap { $0.split(separator: ",").first.flatMap { Int($0) } } ?? 100_000
    var options = Store.Options()
    options.durability = .buffered
    options.cacheSizeBytes = Store.maximumCacheSize
    if !FileManager.default.fileExists(atPath: dir) {
        let store = try Store.open(directory: dir, options: options)
        for i in 0..<n {
            let node = Node(children: [("n", .number(Double(i))), ("t", .string("hello"))])
            try store.saveWrite(.set(node), at: Path(keys: ["chat", ChildKey("m\(String(1_000_000 + i))")]))
        }
        try store.close()
    }
    var opened: [Double] = [], firstRead: [Double] = []
    for _ in 0..<reps {
        let t0 = clock.now
        let reopened = try Store.open(directory: dir, options: options)
        opened.append(ms(clock.now - t0))
        _ = try reopened.value(at: "chat/m1000000")
        firstRead.append(ms(clock.now - t0))
        try reopened.close()
    }
    print(String(format: "pendingOpen: open() %.1f ms, open to first read %.1f ms (medians of %d)", median(opened), median(firstRead), reps))
}

// MARK: - 7. Server updates beside inactive tracked windows

func inactiveWindows() throws {
    let env = ProcessInfo.processInfo.environment
    let counts = env["HEARTH_SCENARIO_WINDOWS"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [0, 40, 1_000]
    let messages = 2_000
    let updates = 500
    func key(_ i: Int) -> ChildKey { ChildKey("m\(1_000_000 + i)") }
    func message(_ i: Int) -> Node { Node(children: [("text", .string("message \(i)")), ("ts", .number(Double(i)))]) }
    print("inactiveWindows: one server update (a new message in chat) beside one active limitToLast(50) listener (commit on .buffered; median of \(updates))")
    for windows in counts {
        let dir = tempDirectory("windows")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = Store.Options()
        options.durability = .buffered
        options.cacheSizeBytes = Store.maximumCacheSize
        options.checkpointMinimumBytes = 64 << 20
        options.maxInactiveQueries = 100_000
        let store = try Store.open(directory: dir, options: options)
        try store.applyServerOverwrite(Node(children: (0..<messages).map { (key($0), message($0)) }), at: "chat")
        // The pages: windows ending at every other message, tracked complete and inactive.
        for w in 0..<windows {
            let end = key(messages - 1 - (w * 2) % (messages - 100))
            let page = try QuerySpec(orderBy: .key).endAt(.string(end.description)).limitToLast(50)
            try store.trackQuery(at: QueryLocation(path: "chat", query: page), complete: true, active: false)
        }
        let live = try QuerySpec(orderBy: .key).limitToLast(50)
        try store.trackQuery(at: QueryLocation(path: "chat", query: live), complete: true, active: true)
        final class Count: @unchecked Sendable { var n = 0 }
        let count = Count()
        _ = try store.addListener(at: "chat", query: live) { _ in count.n += 1 }
        store.waitForEventDelivery()
        let views = store.viewCount
        var latencies: [Double] = []
        for i in 0..<updates {
            let n = messages + i
            let t0 = clock.now
            try store.applyServerOverwrite(message(n), at: Path(keys: ["chat", key(n)]))
            latencies.append(ms(clock.now - t0) * 1000)
        }
        store.waitForEventDelivery()
        precondition(count.n >= 3 * updates, "every update raises child_removed, child_added and value")
        print(String(format: "  %5d inactive windows: %8.1f µs per update (%d views)", windows, median(latencies), views))
        try store.close()
    }
}

// MARK: - 8. A window of a large cached list, cold

/// `windowOfCachedList`: N children (HEARTH_SCENARIO_WINDOW, default 1,000,10,000,100,000) at
/// `chat/messages`, cached whole under a complete default query and checkpointed; then 7
/// reopenings per order, each to a `limitToLast(50)` listener's initial events delivered.
func windowOfCachedList() throws {
    let env = ProcessInfo.processInfo.environment
    let scales = env["HEARTH_SCENARIO_WINDOW"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1_000, 10_000, 100_000]
    let location: Path = "chat/messages"
    print("windowOfCachedList: N children cached complete at \(location), reopened; open() to a limitToLast(50) listener's initial events (medians of 7)")
    for n in scales {
        let dir = tempDirectory("window")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = Store.Options()
        options.durability = .buffered
        options.cacheSizeBytes = Store.maximumCacheSize
        do {
            let store = try Store.open(directory: dir, options: options)
            let pairs = (0..<n).map { i in
                (key: ChildKey("m\(1_000_000 + i)"),
                 value: Node(children: [("text", .string("message number \(i) of the chat")), ("ts", .number(Double(n - i)))]))
            }
            try store.applyServerOverwrite(Node(children: pairs), at: location)
            try store.trackQuery(at: QueryLocation(path: location, query: .default), complete: true, active: false)
            // The app showed the list in `ts` order once before its data came (a tracked,
            // incomplete window): the store knows the ordering when it checkpoints.
            // HEARTH_SCENARIO_WINDOW_UNSEEN=1: the ordering's first use is the measured one.
            if env["HEARTH_SCENARIO_WINDOW_UNSEEN"] != "1" {
                let shown = try QuerySpec(orderBy: .child("ts")).limitToLast(50)
                try store.trackQuery(at: QueryLocation(path: location, query: shown), complete: false, active: false)
            }
            try store.compact()
            try store.close()
        }
        var results: [String] = []
        for (name, query) in [("key", try QuerySpec(orderBy: .key).limitToLast(50)), ("child ts", try QuerySpec(orderBy: .child("ts")).limitToLast(50))] {
            var firstEvents: [Double] = []
            for _ in 0..<7 {
                final class Count: @unchecked Sendable { var n = 0 }
                let count = Count()
                let t0 = clock.now
                let store = try Store.open(directory: dir, options: options)
                _ = try store.addListener(at: location, query: query) { _ in count.n += 1 }
                store.waitForEventDelivery()
                firstEvents.append(ms(clock.now - t0))
                precondition(count.n == 51, "50 child_added and value")
                try store.close()
            }
            results.append(String(format: "by %@ %.1f ms", name, median(firstEvents)))
        }
        print(String(format: "  %7d children: ", n) + results.joined(separator: ", "))
    }
}

let which = CommandLine.arguments.dropFirst().first ?? "all"
do {
    if which == "cacheFill" || which == "all" { try cacheFill() }
    if which == "openAtCap" || which == "all" { try openAtCap() }
    if which == "checkpointPause" || which == "all" { try checkpointPause() }
    if which == "viewsAtOpen" || which == "all" { try viewsAtOpen() }
    if which == "viewUpdate" || which == "all" { try viewUpdate() }
    if which == "pendingWrites" || which == "all" { try pendingWrites() }
    if which == "pendingOpen" { try pendingOpen() }
    if which == "inactiveWindows" || which == "all" { try inactiveWindows() }
    if which == "windowOfCachedList" || which == "all" { try windowOfCachedList() }
} catch {
    print("error: \(error)")
    exit(1)
}
