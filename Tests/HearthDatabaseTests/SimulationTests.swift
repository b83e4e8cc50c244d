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
            totals.clientRestarts += outcome.stats.clientRestarts
            totals.serverRestarts += outcome.stats.serverRestarts
            if outcome.stats.finalDiffersFromExactlyOnce { atLeastOnce += 1 }
            if traced { print(SimRunner.report(outcome).replacingOccurrences(of: "failed after", with: "ran")) }
            if outcome.violation != nil {
                Issue.record(Comment(rawValue: SimRunner.report(SimRunner.shrink(outcome))))
            }
        }
        if runs > 0 {
            let seconds = Date().timeIntervalSince(started)
            print("simulation chunk \(chunk): \(runs) seeds in \(String(format: "%.1f", seconds))s; totals: steps \(totals.steps), faults \(totals.faults), connection drops \(totals.drops), client restarts \(totals.clientRestarts), server restarts \(totals.serverRestarts), writes \(totals.writes), re-applied writes \(totals.duplicates) (changing data \(totals.duplicatesChangingData)), runs whose final data differs from exactly-once \(atLeastOnce)")
        }
    }
}
