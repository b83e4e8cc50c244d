import Foundation
import Testing

/// The deterministic simulation of clients and server (Simulation/): a bounded number of
/// seeds on every `swift test`, more on demand, one seed with its trace by request, and every
/// seed that found a bug kept as a regression test.
///
/// ```
/// swift test --filter Simulation                                  # 200 seeds
/// HEARTH_SIM_SEEDS=10000 swift test --filter Simulation           # a long run
/// HEARTH_SIM_SEED=1234 HEARTH_SIM_STEPS=57 swift test --filter Simulation   # one seed, traced
/// ```
@Suite struct SimulationTests {
    static let chunks = 4

    /// The seeds this run covers: `HEARTH_SIM_SEED` alone, or `HEARTH_SIM_SEEDS` (default 200)
    /// from `HEARTH_SIM_FIRST_SEED` (default 1).
    static func seeds(chunk: Int) -> [UInt64] {
        if let one = SimRunner.environment("HEARTH_SIM_SEED").flatMap(UInt64.init) { return chunk == 0 ? [one] : [] }
        let count = SimRunner.environment("HEARTH_SIM_SEEDS").flatMap(UInt64.init) ?? 200
        let first = SimRunner.environment("HEARTH_SIM_FIRST_SEED").flatMap(UInt64.init) ?? 1
        return (0..<count).filter { Int($0) % chunks == chunk }.map { first + $0 }
    }

    @Test(arguments: 0..<SimulationTests.chunks)
    func simulatedSeeds(chunk: Int) {
        let traced = SimRunner.environment("HEARTH_SIM_SEED") != nil
        let started = Date()
        var totals = Simulation.Stats()
        var runs = 0, atLeastOnce = 0
        for seed in SimulationTests.seeds(chunk: chunk) {
            let outcome = SimRunner.run(SimRunner.configuration(seed: seed))
            runs += 1
            totals.steps += outcome.stats.steps
            totals.faults += outcome.stats.faults
            totals.drops += outcome.stats.drops
            totals.writes += outcome.stats.writes
            totals.duplicates += outcome.stats.duplicates
            totals.duplicatesChangingData += outcome.stats.duplicatesChangingData
            totals.deduplicated += outcome.stats.deduplicated
            totals.clientRestarts += outcome.stats.clientRestarts
            totals.serverRestarts += outcome.stats.serverRestarts
            totals.onDisconnects += outcome.stats.onDisconnects
            totals.onDisconnectRuns += outcome.stats.onDisconnectRuns
            totals.keepSynced += outcome.stats.keepSynced
            totals.tokens += outcome.stats.tokens
            totals.tokenOutages += outcome.stats.tokenOutages
            totals.writesPaused += outcome.stats.writesPaused
            totals.transactions += outcome.stats.transactions
            totals.transactionsCommitted += outcome.stats.transactionsCommitted
            totals.transactionsDisconnected += outcome.stats.transactionsDisconnected
            totals.transactionsMaxRetry += outcome.stats.transactionsMaxRetry
            if outcome.stats.finalDiffersFromExactlyOnce { atLeastOnce += 1 }
            if traced { print(SimRunner.report(outcome).replacingOccurrences(of: "failed after", with: "ran")) }
            if outcome.violation != nil {
                Issue.record(Comment(rawValue: SimRunner.report(SimRunner.shrink(outcome))))
            }
        }
        if runs > 0 {
            let seconds = Date().timeIntervalSince(started)
            print(
                "simulation chunk \(chunk): \(runs) seeds in \(String(format: "%.1f", seconds))s; totals: steps \(totals.steps), faults \(totals.faults), connection drops \(totals.drops), client restarts \(totals.clientRestarts), server restarts \(totals.serverRestarts), writes \(totals.writes), onDisconnect \(totals.onDisconnects) (ran \(totals.onDisconnectRuns)), keepSynced \(totals.keepSynced), tokens \(totals.tokens) (outages \(totals.tokenOutages), write pauses \(totals.writesPaused)), transactions \(totals.transactions) (committed \(totals.transactionsCommitted), disconnect \(totals.transactionsDisconnected), maxretry \(totals.transactionsMaxRetry)), re-applied writes \(totals.duplicates) (changing data \(totals.duplicatesChangingData)), re-sends deduplicated \(totals.deduplicated), runs whose final data differs from exactly-once \(atLeastOnce)"
            )
        }
    }
}

/// Seeds the simulator found something with, kept. A seed replays only with the workload
/// generator it was found with (``Simulation/Workload``); each test says what the seed shows.
@Suite struct SimulationRegressionTests {
    /// Seed 1, 52 steps: a client restart with a power cut, the store then refusing to reopen
    /// ("integer 2 must be encoded as a number") — found while the workload still wrote
    /// non-canonical `.integer` leaves; the store-level regression tests are
    /// `NodeCodecTests.smallIntegerLeafEncodesAsNumber` and `storeWithSmallIntegerWriteReopens`.
    /// Kept as a run with a client power-cut restart that must stay clean.
    @Test func seed1ClientRestartWithPowerCut() {
        var c = Simulation.Configuration(seed: 1)
        c.workload = .v1
        c.steps = 52
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
        #expect(o.stats.clientRestarts >= 1)
    }

    /// Seed 2, 19 steps: plain protocol v5 is at-least-once. Client 0 writes `/k/a = {x:0}` and
    /// goes offline 17 ms later: the write reaches the server (what a client sent before closing
    /// still arrives), which applies it and answers `ok` — on a connection the client no longer
    /// reads. Client 2 then writes `/k/a/x = 2`. When client 0 comes back it sends its
    /// unanswered write again (Firebase's `restoreState_`), and a server without exactly-once
    /// writes applies it a second time, undoing client 2's later write: the final data is not
    /// what applying each write once gives. The detector must see it.
    @Test func seed2ResentWriteAfterGoOfflineIsDetected() {
        var c = Simulation.Configuration(seed: 2)
        c.workload = .v1
        c.steps = 19
        c.exactlyOnceServer = false
        c.strictExactlyOnce = false
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
        #expect(o.stats.duplicates >= 1)
        #expect(o.stats.finalDiffersFromExactlyOnce)
    }

    /// The same seed with Hearth's exactly-once writes (the default): the re-sent write carries
    /// its writer and write id, the server recognises it and answers `ok` without applying it
    /// again, and client 2's later write stands.
    @Test func seed2ExactlyOnce() {
        var c = Simulation.Configuration(seed: 2)
        c.workload = .v1
        c.steps = 19
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
        #expect(o.stats.deduplicated >= 1)
        #expect(o.stats.duplicates == 0)
        #expect(!o.stats.finalDiffersFromExactlyOnce)
    }

    /// Found when exactly-once writes became the default (the 200 seeds, then seeds 201–2200):
    /// at quiescence a client's view missed the server's data. A re-send's `ok` (recognised,
    /// `{"seen":true}`) comes after the data of later writes — pushed when the client listened
    /// again — and the client, acknowledging it as Firebase does, wrote the write's old value
    /// into its server cache over that newer data (seed 41: `/k = 5` acked after the window
    /// `{b:5, list:…}` arrived; seed 155: `/k = "s0"` and `/k = null` over a listen at
    /// `/k/list`; seed 186: `/k/a = 5` under the leaf `"s2"`). A first fix reverted such writes
    /// locally instead; seed 2167 then showed a limit window refilled from stale cached children
    /// on that revert. The server now follows a `seen` ok with the current data of the
    /// connection's overlapping listens (`ServerCore.answerSeen`; server test
    /// `seenRefreshesListens`). Seeds 160 and 181 then showed that data sent at the written
    /// location under a leaf (`/k/a/y = null` where the server holds `/k/a = 0`) removed the leaf
    /// the ack had replaced: it is sent at the leaf. Seeds 1561, 1924 and 2077 (the long run)
    /// showed the write's value left in the cache outside a filtered listen's window, which the
    /// window alone does not correct: the written locations themselves are sent, untagged.
    @Test(
        arguments: [
            (41, 200), (137, 200), (155, 175), (178, 200), (186, 72), (2167, 200), (160, 193), (181, 197), (1561, 200),
            (1924, 187), (2077, 200),
        ] as [(UInt64, Int)])
    func resentWriteAckAfterNewerData(seed: UInt64, steps: Int) {
        var c = Simulation.Configuration(seed: seed)
        c.steps = steps
        c.workload = .v1  // found with the first workload generator
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
        #expect(o.stats.deduplicated >= 1)
    }

    /// Found by the long run with exactly-once writes (seeds 201–2200), not fixed: after a client
    /// restart with a power cut, a filtered listen (`orderByKey limitToLast 3` at `/k`) shows a
    /// child (`b`) its persisted cache kept after the server removed it while the client held
    /// only filtered listens there; on reconnect the listen's hash (from the tracked keys)
    /// matches the server's window, so no data comes and the view built from the cache keeps
    /// `b`. No re-send of this client is involved; the same family as
    /// `filteredViewMissesChildren` (persisted cache vs. window after a restart).
    /// Since the merge with the grown simulator (workload v1 replays differently with writer
    /// ids drawn at open) this seed passes without a fix: kept as a run; the bug it found is not
    /// known to be gone.
    @Test
    func seed768StaleChildInFilteredViewAfterRestart() {
        var c = Simulation.Configuration(seed: 768)
        c.steps = 197
        c.workload = .v1  // found with the first workload generator
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
    }

    /// The checks can fail: a run whose model is tampered with after the fact is caught at
    /// quiescence.
    @Test func tamperedModelIsCaught() throws {
        let sim = try Simulation(Simulation.Configuration(seed: 3, steps: 30))
        #expect(sim.run() == nil)
        sim.checks.modelData = sim.checks.modelData.updating("k/tampered", with: SimWorkload.int(1))
        sim.checks.final(sim)
        #expect(sim.violations.contains { $0.contains("at quiescence the server holds") })
    }

    /// Found by the long run (seeds 1000…3999): at quiescence a client's default listen at
    /// `/k` still showed a leaf the client once wrote there (`5`, `true`) while the server held
    /// null. Seed 3026: client 2 sets `/k = 5`, then `/k/b = "s3"`, then removes `/k/b`; each
    /// acknowledged while its default listen got the server's data. The view applied the
    /// change below its leaf event cache child by child, and removing a child of a leaf keeps
    /// the leaf (Firebase's ViewProcessor does the same). Fixed in
    /// `ViewProcessor.generateEventCacheAfterServerEvent`; store-level repro in
    /// `LeafUnderChildWriteTests`.
    @Test(arguments: [(3026, 175), (2563, 179), (3079, 196), (3746, 177)] as [(UInt64, Int)])
    func staleLeafInDefaultView(seed: UInt64, steps: Int) {
        var c = Simulation.Configuration(seed: seed)
        c.workload = .v1
        c.steps = steps
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
    }

    /// Found by the long run: at quiescence a filtered listen at `/k` missed children the
    /// server's window held (seed 2072: `orderByKey startAt "d" limitToLast 3` showed null,
    /// the server's window `list`). The server had emptied the window (a tagged `d` of null);
    /// the view followed, the persisted cache kept the children (a window says nothing of
    /// children outside it); on reconnect the listen's hash was computed from the persisted
    /// children — matching the server's window again — so the server sent nothing and the view
    /// stayed empty. The hash now comes from the query's server cache by the persistence rules
    /// (tracked keys, which follow the view): `Database.cachedHash`.
    @Test(arguments: [1716, 1892, 2072, 2940, 3119] as [UInt64])
    func filteredViewMissesChildren(seed: UInt64) {
        var c = Simulation.Configuration(seed: seed)
        c.workload = .v1
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
    }

    /// Found by the v2 workload (seed 117, 195 steps): after a clean restart a client's
    /// `limitToFirst 3` view at `/k` showed `c`, which the server had deleted — the view took its
    /// server cache from the complete default view of a root listen the client had stopped
    /// (kept in the store, no longer fed), while the listen's hash came from the query's
    /// tracked keys (the server's window): they matched, the server sent nothing. The hash now
    /// describes the view's server cache (`Store.listenServerCache(for:)`); store-level repro in
    /// `ListenHashTests`.
    @Test func staleAncestorViewBehindMatchingHash() {
        var c = Simulation.Configuration(seed: 117)
        c.workload = .v2
        c.steps = 195
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
        #expect(o.stats.onDisconnectRuns >= 1)
    }

    /// Found by the v3 workload (seed 56, 169 steps): after a restart a pinned root query
    /// (`orderByChild x endAt 2 limitToFirst 2`) showed `k` as `{"b":1,"d":0}`, outside the
    /// server's window (`k/x` is 3): its view, rebuilt from the tracked keys, took the cache
    /// for the whole location, and a default listen's `k/b` (and a window's merge at `k`)
    /// completed `k` from nothing. Fixed in `View` (a cache of tracked keys stays filtered);
    /// store-level repro in `FilteredViewFromTrackedKeysTests`.
    @Test func unknownChildCompletedIntoAWindow() {
        var c = Simulation.Configuration(seed: 56)
        c.workload = .v3
        c.steps = 169
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
        #expect(o.stats.transactions >= 1)
    }

    /// Open — found by the long run of the v3 workload (seeds 1000…2999), not yet fixed: at
    /// quiescence a client's default view at `/k` (or `/`) still shows a child the server
    /// deleted. Seed 2092: client 2 sets `/k/d = 2`, then `/k/d/x = 5` (a write under a
    /// leaf), then `/k/d/x = null`, all acknowledged while its default listen at `/k` got the
    /// server's `k/d = 2`, `k/d/x = 5`, `k/d/x = null` interleaved with the acks; the view ends
    /// with `d: 2`, the server with no `d`. Same shape as the stale leaf of
    /// `staleLeafInDefaultView` (ViewProcessor, a child write under a leaf), with pending
    /// writes in between.
    ///
    /// Fixed for 2092 (`ViewProcessor.leafAbove`: a server change below a child the listeners
    /// see as a leaf recomputes the child whole; `LeafAboveServerChangeTests`). Seeds 1639 and
    /// 2545 do not reach their failure with exactly-once writes' interleavings (they pass, but
    /// do not show that their bug is gone); kept as runs.
    @Test(arguments: [(2092, 149), (1639, 199), (2545, 194)] as [(UInt64, Int)])
    func staleLeafAfterWritesUnderIt(seed: UInt64, steps: Int) {
        var c = Simulation.Configuration(seed: seed)
        c.workload = .v3
        c.steps = steps
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
    }

    /// Open — found by the same long run, not yet diagnosed: seed 2859 (194 steps), client 2's
    /// kept query `/k orderByChild x limitToLast 1` shows `b` with `x: {"x":5,"y":5}` (an
    /// earlier value of `b/x`), the server's window is `d`; `b` had since been set to `0` by
    /// another client, then client 2 wrote `/k/b/y` while only that filtered query was listened.
    /// Since exactly-once writes changed its interleaving this seed passes without a fix: kept as
    /// a run; the bug it found is not known to be gone.
    @Test
    func staleChildInKeptWindow() {
        var c = Simulation.Configuration(seed: 2859)
        c.workload = .v3
        c.steps = 194
        let o = SimRunner.run(c)
        #expect(o.violation == nil, Comment(rawValue: SimRunner.report(o)))
    }
}
