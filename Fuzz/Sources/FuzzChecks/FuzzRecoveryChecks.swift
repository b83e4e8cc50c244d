// The FuzzRecovery check: a program of commits, faults, crashes and power cuts against a store on a
// simulated file system; every reopen recovers exactly the durable prefix of the model's history; and
// its seeds.
// Fuzz/Sources/FuzzChecks is the one source of these checks: Tests/HearthTests/FuzzChecks/ holds a
// symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails when a
// copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting

extension FuzzChecks {
    // MARK: - 2. Recovery

    /// One step of the model's history: an event batch and the LSN it has (or would have).
    struct Entry {
        var events: [StoreEvent]
        var lsn: LSN
    }

    /// The input is a program: operations with arguments, tiers, crash points, faults, power cuts.
    /// After every crash the store must reopen, and its state must be the fold of the history
    /// through the recovered LSN, which must cover everything acknowledged as durable.
    public static func recovery(_ input: [UInt8]) {
        var s = Source(input)
        let fs = SimulatedFileSystem(seed: UInt64(s.u8()))
        let clock = Clock()
        let tiers: [Durability] = [.full, .batched(interval: .milliseconds(1)), .buffered]
        let options = storeOptions(fs, clock, durability: s.pick(tiers))
        var history: [Entry] = []
        var durable: LSN = 0  // everything through this LSN was acknowledged as durable
        var store: Store?
        do { store = try Store.open(directory: directory, options: options) } catch {
            fatalError("FUZZ FINDING: cannot create a store: \(error)")
        }
        var steps = 0
        while !s.isAtEnd, steps < 64 {
            steps += 1
            clock.advance(1)
            guard let live = store else { break }
            var failed = false
            var inFlight: Entry?
            let lastBefore = live.lastLSN
            let op = s.below(16)
            defer { trace("step \(steps) op \(op) lastLSN \(lastBefore)→\(live.lastLSN) durable \(durable) failed \(failed) crashed \(fs.hasCrashed) history \(history.count)") }
            switch op {
            case 0...6:
                let tier: Durability? = s.below(4) == 3 ? nil : tiers[s.below(3)]
                let state: StoreState
                do { state = try live.state() } catch { fatalError("FUZZ FINDING: state() of a live store failed: \(error)") }
                var built: [StoreEvent] = []
                do {
                    let r = try live.commit(durability: tier) { (b: inout StoreBatch) throws(StoreError) in
                        build(&b, &s, state)
                        // What the commit logs: the batch plus the tracked-key changes it
                        // records after the build.
                        var logged = b
                        logged.recordTrackedKeyChanges()
                        built = logged.events
                    }
                    trace("commit tier \(String(describing: tier)) lsn \(r.lsn) events \(r.events.count)")
                    if !r.events.isEmpty {
                        check(r.lsn == lastBefore + 1, "commit got LSN \(r.lsn) after \(lastBefore)")
                        check(r.lsn > durable, "LSN \(r.lsn) reused (durable through \(durable))")
                        history.append(Entry(events: r.events, lsn: r.lsn))
                        if (tier ?? options.durability) == .full { durable = r.lsn }
                    }
                } catch {
                    trace("commit failed: \(error)")
                    failed = true
                    if !built.isEmpty { inFlight = Entry(events: built, lsn: lastBefore + 1) }
                }
            case 7:
                do {
                    try live.compact()
                    durable = live.lastLSN
                } catch { failed = true }
            case 8:
                do {
                    try live.waitUntilDurable(live.lastLSN)
                    durable = live.lastLSN
                } catch { failed = true }
            case 9:
                let n = 1 + s.below(40)
                trace("crash after \(n) calls")
                fs.crash(afterCalls: n)
            case 10:
                injectFault(fs, &s)
            case 11:
                failed = true  // the process dies now
            case 12:
                do {
                    try live.close()
                    durable = live.lastLSN
                } catch { }
                failed = true
            default:
                clock.advance(Int64(s.below(100)))
            }
            if let e = inFlight { history.append(e) }
            // A crash inside work whose errors are not reported (inline maintenance after a commit)
            // kills the process all the same.
            if failed || fs.hasCrashed {
                store = nil
                reopen(fs, &s, clock, options, &history, &durable, &store)
            }
        }
        if let live = store {
            // Disarm what the program left armed; the store has not failed yet, so it must close.
            fs.crash(afterCalls: nil)
            fs.clearFaults()
            let state: StoreState
            do { state = try live.state() } catch { fatalError("FUZZ FINDING: state() failed at the end: \(error)") }
            let model = fold(history.map(\.events))
            check(state == model, "live state differs from the model: \(diff(model, state))")
            // A clean close makes everything durable; a power cut after it loses nothing. (It
            // fails if inline maintenance poisoned the log; then nothing more is durable.)
            do {
                try live.close()
                durable = history.last?.lsn ?? durable
            } catch {
                trace("final close failed: \(error)")
            }
            store = nil
            var s2 = Source([])
            reopen(fs, &s2, clock, options, &history, &durable, &store)
            try? store?.close()
        }
    }

    static func injectFault(_ fs: SimulatedFileSystem, _ s: inout Source) {
        let op: FileOperation = s.pick([.write, .sync, .create, .rename, .syncDirectory, .truncate, .open, .unlink, .read])
        let code: FileSystemError.Code = s.bool() ? .ioError : .noSpace
        let sticky = s.below(4) == 0, skip = s.below(4)
        trace("fault \(op) \(code) sticky \(sticky) skip \(skip)")
        fs.injectFault(op, code, sticky: sticky, skip: skip)
    }

    /// Kills the process (no more I/O from it), cuts the power, reopens (possibly crashing or
    /// failing on a fault during the open, then retrying), and checks the recovered state.
    static func reopen(_ fs: SimulatedFileSystem, _ s: inout Source, _ clock: Clock, _ options: Store.Options,
                       _ history: inout [Entry], _ durable: inout LSN, _ store: inout Store?) {
        fs.crash(afterCalls: 0)
        store = nil
        let modes = SimulatedFileSystem.PowerCutMode.all
        var failedOpens = 0
        var reopened: Store?
        for attempt in 0..<4 {
            let mode = modes[s.below(modes.count)]
            trace("power cut \(mode)")
            fs.powerCut(mode: mode)
            if attempt < 3 {
                switch s.below(6) {
                case 0: fs.crash(afterCalls: 1 + s.below(30))
                case 1: injectFault(fs, &s)
                default: break
                }
            }
            do {
                reopened = try Store.open(directory: directory, options: options)
                break
            } catch {
                trace("open failed: \(error)")
                check(attempt < 3, "reopen without crash point or fault failed: \(error)")
                failedOpens += 1
            }
        }
        guard let live = reopened else { fatalError("unreachable") }
        let recovered = live.recovery.lastLSN
        let state: StoreState
        do { state = try live.state() } catch { fatalError("FUZZ FINDING: state() after reopen failed: \(error)") }
        check(state.checkInvariants() == nil, "recovered state breaks an invariant: \(state.checkInvariants() ?? "")")
        check(recovered >= durable, "acknowledged LSN \(durable) lost: recovered through \(recovered)")
        let lastKnown = history.last?.lsn ?? 0
        check(recovered <= lastKnown + (failedOpens > 0 ? 1 : 0), "phantom records: recovered through \(recovered), history ends at \(lastKnown)")

        // Candidate histories through `recovered`: the history itself, or — when an earlier open
        // attempt may have committed its sessionStarted before failing — that instead of the last entry.
        let session = [StoreEvent.sessionStarted(at: clock.value)]
        let kept = Array(history.prefix { $0.lsn <= recovered })
        var candidates: [[Entry]] = []
        if kept.last?.lsn ?? 0 == recovered, kept.count == history.prefix(while: { $0.lsn <= recovered }).count {
            candidates.append(kept)
        }
        if failedOpens > 0, recovered > durable {
            let base = Array(history.prefix { $0.lsn < recovered })
            if base.last?.lsn ?? 0 == recovered - 1 { candidates.append(base + [Entry(events: session, lsn: recovered)]) }
        }
        var matched: [Entry]?
        for c in candidates {
            var model = fold(c.map(\.events))
            if model.trackedQueries.values.contains(where: \.active) { model.apply(session) }
            if model == state { matched = c; break }
        }
        guard var newHistory = matched else {
            var model = fold(kept.map(\.events))
            if model.trackedQueries.values.contains(where: \.active) { model.apply(session) }
            fatalError("FUZZ FINDING: recovered state (through LSN \(recovered), durable \(durable), history to \(lastKnown), failed opens \(failedOpens)) is not the model's: \(diff(model, state))")
        }
        if live.lastLSN == recovered + 1 {
            newHistory.append(Entry(events: session, lsn: recovered + 1))
        } else {
            check(live.lastLSN == recovered, "store lastLSN \(live.lastLSN) after recovering \(recovered)")
        }
        check(fold(newHistory.map(\.events)) == state, "state after open is not the model's")
        history = newHistory
        durable = recovered
        store = live
    }

    /// Adds 1–2 mutations chosen by the input to a batch (skipping any the batch rejects).
    static func build(_ b: inout StoreBatch, _ s: inout Source, _ state: StoreState) {
        for _ in 0...s.below(2) {
            switch s.below(12) {
            case 0, 1: try? b.applyServerOverwrite(node(&s), at: path(&s))
            case 2: try? b.applyServerMerge(children(&s), at: path(&s))
            case 3: _ = try? b.saveWrite(.set(node(&s)), at: nonRootPath(&s))
            case 4: _ = try? b.saveWrite(.update(children(&s)), at: path(&s))
            case 5:
                if let w = state.pendingWrites.first {
                    try? b.ackWrite(w.id)
                    try? b.applyServerOverwrite(node(&s), at: w.path)
                }
            case 6: if let w = state.pendingWrites.last { try? b.revertWrite(w.id) }
            case 7: _ = try? b.trackQuery(at: location(&s), complete: s.bool(), active: s.bool(), keys: s.bool() ? ["a", "k1"] : nil)
            case 8:
                if let q = state.trackedQueries.values.min(by: { $0.id < $1.id }) { try? b.untrackQuery(at: q.location) }
            case 9: try? b.keepSynced(location(&s), s.bool())
            case 10:
                if s.bool() { b.saveAuth(AuthToken(token: "t\(s.u8())", expiresAt: Int64(s.u8()))) } else { b.clearAuth() }
            default:
                if let tx = try? b.enqueueTransaction(at: path(&s), functionName: "f", argument: node(&s), localResult: node(&s)), s.bool() {
                    _ = try? b.updateTransaction(tx.id, retryCount: 1, status: .sent)
                }
                if let op = try? b.queueOnDisconnect(s.pick([.remove, .cancel, .set(.number(1))]), at: path(&s)), s.bool() {
                    try? b.ackOnDisconnect(op.id)
                }
            }
        }
        if s.below(8) == 0 {
            // A large, compressible value: rolls segments and triggers checkpoints.
            try? b.applyServerOverwrite(.string(String(repeating: "x", count: 200 * (1 + s.below(20)))), at: path(&s))
        }
    }

    static func recoverySeeds() -> [(String, [UInt8])] {
        var rng = SeededRandom(seed: 42)
        return (0..<16).map { i in
            let n = 40 + Int(rng.next() % 400)
            return ("program-\(i)", (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }
}
