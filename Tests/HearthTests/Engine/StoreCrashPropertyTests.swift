import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// Random operation sequences on a store over the simulated file system, with random crash
/// points and power cuts, checked against a model: the history of committed event batches.
///
/// After every crash and reopen the recovered state must be the fold of a prefix of that
/// history at least as long as everything acknowledged under `.full` (no holes, no
/// phantoms, no reordering), whether it came from a checkpoint plus a tail or from the log
/// alone — so checkpoint + tail replay == full replay == model.
@Suite struct StoreCrashPropertyTests {
    struct Workload {
        var rng: SeededRandom
        var writeIDs: [Int64] = []

        mutating func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }

        mutating func path() -> Path {
            Path(
                keys: (0..<Int(1 + rng.next() % 3)).map { _ in ChildKey(pick(["a", "b", "c", "1", "07", "ü", "x y"])) })
        }

        mutating func node() -> Node {
            switch rng.next() % 5 {
            case 0: return .number(Double(rng.next() % 100))
            case 1: return .string(String(repeating: pick(["s", "é", "😀"]), count: Int(rng.next() % 40)))
            case 2: return .bool(rng.next() % 2 == 0)
            case 3: return .empty
            default:
                return Node(
                    children: (0..<Int(1 + rng.next() % 4)).map { i in
                        (ChildKey("k\(i)"), Node.number(Double(rng.next() % 9)))
                    })
            }
        }

        /// Builds one random batch against the store's current state.
        mutating func build(_ b: inout StoreBatch, state: StoreState) throws(StoreError) {
            for _ in 0..<Int(1 + rng.next() % 2) {
                switch rng.next() % 12 {
                case 0, 1: try b.applyServerOverwrite(node(), at: path())
                case 2:
                    try b.applyServerMerge(
                        [ChildUpdate(path: path(), node: node()), ChildUpdate(path: "z", node: node())], at: path())
                case 3: try b.saveWrite(.set(node()), at: path())
                case 4: try b.saveWrite(.update([ChildUpdate(path: path(), node: node())]), at: path())
                case 5:
                    if let w = state.pendingWrites.first,
                        b.events.allSatisfy({ $0 != .writeAcked(id: w.id) && $0 != .writeReverted(id: w.id) })
                    {
                        try b.ackWrite(w.id)
                        try b.applyServerOverwrite(node(), at: w.path)
                    }
                case 6:
                    if let w = state.pendingWrites.last,
                        b.events.allSatisfy({ $0 != .writeAcked(id: w.id) && $0 != .writeReverted(id: w.id) })
                    {
                        try b.revertWrite(w.id)
                    }
                case 7:
                    let query =
                        rng.next() % 2 == 0
                        ? QuerySpec.default
                        : (try? QuerySpec(orderBy: .value).limitToLast(Int(1 + rng.next() % 5))) ?? .default
                    try b.trackQuery(
                        at: QueryLocation(path: path(), query: query), complete: rng.next() % 2 == 0,
                        active: rng.next() % 2 == 0, keys: ["a", "k1"])
                case 8:
                    if let q = state.trackedQueries.values.min(by: { $0.id < $1.id }),
                        b.trackedQuery(at: q.location) != nil
                    {
                        try b.untrackQuery(at: q.location)
                    }
                case 9: try b.keepSynced(QueryLocation(path: path(), query: .default), rng.next() % 3 != 0)
                case 10:
                    if rng.next() % 2 == 0 {
                        b.saveAuth(AuthToken(token: "t\(rng.next() % 1000)", expiresAt: Int64(rng.next() % 1000)))
                    } else {
                        b.clearAuth()
                    }
                default:
                    let tx = try b.enqueueTransaction(
                        at: path(), functionName: "f", argument: node(), localResult: node())
                    if rng.next() % 2 == 0 { try b.updateTransaction(tx.id, retryCount: 1, status: .sent) }
                    let op = try b.queueOnDisconnect(pick([.remove, .cancel, .set(node())]), at: path())
                    if rng.next() % 2 == 0 { try b.ackOnDisconnect(op.id) }
                }
            }
        }
    }

    static func diff(_ a: StoreState, _ b: StoreState) -> String {
        var parts: [String] = []
        if a.serverCache != b.serverCache { parts.append("serverCache \(a.serverCache) vs \(b.serverCache)") }
        if a.pendingWrites != b.pendingWrites {
            parts.append("pendingWrites \(a.pendingWrites.map(\.id)) vs \(b.pendingWrites.map(\.id))")
        }
        if a.trackedQueries != b.trackedQueries {
            parts.append(
                "trackedQueries \(a.trackedQueries.values.sorted { $0.id < $1.id }) vs \(b.trackedQueries.values.sorted { $0.id < $1.id })"
            )
        }
        if a.pins != b.pins { parts.append("pins") }
        if a.auth != b.auth { parts.append("auth") }
        if a.transactions != b.transactions { parts.append("transactions") }
        if a.onDisconnect != b.onDisconnect { parts.append("onDisconnect") }
        if a.untracked != b.untracked { parts.append("untracked \(a.untrackedEntries) vs \(b.untrackedEntries)") }
        if a.lastWriteID != b.lastWriteID || a.lastQueryID != b.lastQueryID
            || a.lastTransactionID != b.lastTransactionID || a.lastOnDisconnectID != b.lastOnDisconnectID
        {
            parts.append("ids")
        }
        if a.serverTimeOffsetMs != b.serverTimeOffsetMs { parts.append("offset") }
        return parts.joined(separator: "; ")
    }

    static func fold(_ history: ArraySlice<[StoreEvent]>) -> StoreState {
        var s = StoreState()
        for batch in history { s.apply(batch) }
        return s
    }

    @Test(arguments: 0..<64)
    func recoveredStateIsAnAcknowledgedPrefix(seed: Int) throws {
        let fs = SimulatedFileSystem(seed: UInt64(seed))
        let clock = TestClock()
        var o = options(fs, clock: clock)
        o.checkpointMinimumBytes = 4096
        o.segmentSize = 8192
        var w = Workload(rng: SeededRandom(seed: UInt64(seed) &* 7919))
        var history: [[StoreEvent]] = []
        var acknowledged = 0  // history[..<acknowledged] is durable
        var store: Store? = try Store.open(directory: "/db", options: o)
        var crashes = 0
        // Times of reopens that returned but then crashed reading what open left encoded
        // (state() reads cache and pending-write chunks): each logged a session start if
        // queries were active, which may or may not have reached the disk.
        var unconfirmedStarts: [Int64] = []

        for step in 0..<160 {
            clock.advance(1)
            if store == nil {
                // Reopen after a crash; the open itself may hit a scheduled crash point.
                fs.powerCut(mode: w.pick(SimulatedFileSystem.PowerCutMode.all))
                if w.rng.next() % 4 == 0 { fs.crash(afterCalls: Int(1 + w.rng.next() % 30)) }
                var opened = false
                do {
                    let reopened = try Store.open(directory: "/db", options: o)
                    opened = true
                    let recovered = try reopened.state()
                    #expect(recovered.checkInvariants() == nil, "seed \(seed) step \(step)")
                    // Find the prefix the store recovered (plus an earlier unconfirmed session
                    // start, plus this session's start).
                    var matched: Int?
                    var matchedStart: Int64?
                    search: for length in stride(from: history.count, through: acknowledged, by: -1) {
                        for start in [nil] + unconfirmedStarts.map(Optional.some) {
                            var candidate = StoreCrashPropertyTests.fold(history[..<length])
                            if let start {
                                guard candidate.trackedQueries.values.contains(where: \.active) else { continue }
                                candidate.apply(.sessionStarted(at: start))
                            }
                            if candidate.trackedQueries.values.contains(where: \.active) {
                                candidate.apply(.sessionStarted(at: clock()))
                            }
                            if candidate == recovered {
                                matched = length
                                matchedStart = start
                                break search
                            }
                        }
                    }
                    unconfirmedStarts = []
                    guard let length = matched else {
                        var nearest = StoreCrashPropertyTests.fold(history[..<acknowledged])
                        if nearest.trackedQueries.values.contains(where: \.active) {
                            nearest.apply(.sessionStarted(at: clock()))
                        }
                        Issue.record(
                            "seed \(seed) step \(step): recovered state is not an acknowledged prefix (history \(history.count), acknowledged \(acknowledged)); differs from the acknowledged prefix in: \(StoreCrashPropertyTests.diff(nearest, recovered))"
                        )
                        return
                    }
                    history.removeLast(history.count - length)
                    if let matchedStart { history.append([.sessionStarted(at: matchedStart)]) }
                    if StoreCrashPropertyTests.fold(history[...]).trackedQueries.values.contains(where: \.active) {
                        history.append([.sessionStarted(at: clock())])
                    }
                    acknowledged = length
                    store = reopened
                } catch {
                    // Crashed during open: power-cut and try again next step. Any other
                    // failure to open after a power cut is a recovery bug.
                    if !fs.hasCrashed {
                        Issue.record("seed \(seed) step \(step): reopen failed without a crash: \(error)")
                        return
                    }
                    if opened { unconfirmedStarts.append(clock()) }
                    continue
                }
            }
            guard let s = store else { continue }
            if w.rng.next() % 20 == 0 || step == 80 {
                // Schedule a crash somewhere in the next few I/O calls.
                fs.crash(afterCalls: Int(1 + w.rng.next() % 12))
            }
            var inFlight: [StoreEvent] = []
            do {
                if w.rng.next() % 25 == 0 {
                    try s.compact()
                } else {
                    let state = try s.state()
                    let result = try s.commit { (b: inout StoreBatch) throws(StoreError) in
                        try w.build(&b, state: state)
                        // What the commit will log: the batch plus the tracked-key changes
                        // it records after the build.
                        var logged = b
                        logged.recordTrackedKeyChanges()
                        inFlight = logged.events
                    }
                    if !result.events.isEmpty {
                        history.append(result.events)
                        acknowledged = history.count
                    }
                }
            } catch {
                if fs.hasCrashed {
                    // The batch in flight may or may not have reached the disk.
                    if !inFlight.isEmpty { history.append(inFlight) }
                    crashes += 1
                    store = nil
                    continue
                }
                Issue.record("seed \(seed) step \(step): unexpected error \(error)")
                return
            }
            if step % 40 == 39 {
                // The live state always equals the model.
                #expect(try s.state() == StoreCrashPropertyTests.fold(history[...]), "seed \(seed) step \(step)")
            }
        }
        if let s = store {
            #expect(try s.state() == StoreCrashPropertyTests.fold(history[...]), "seed \(seed) end")
        }
        // print("crash-property seed \(seed): \(crashes) crashes, \(history.count) batches")
        #expect(crashes > 0, "seed \(seed) never crashed")
    }
}
