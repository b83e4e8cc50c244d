import Foundation

/// Runs seeds, shrinks a failure to its shortest failing prefix, and words the report.
///
/// Environment (read by ``SimulationTests``):
/// - `HEARTH_SIM_SEED=n` runs seed `n` alone and prints its trace (with `HEARTH_SIM_STEPS`);
/// - `HEARTH_SIM_SEEDS=N` runs `N` seeds (default 200) from `HEARTH_SIM_FIRST_SEED` (default 1);
/// - `HEARTH_SIM_STEPS=n` steps per seed (default 200);
/// - `HEARTH_SIM_STRICT=0` tolerates writes applied twice (strict is the default);
/// - `HEARTH_SIM_PLAIN_V5=1` runs the server without exactly-once writes (and not strict):
///   Firebase's at-least-once protocol, to compare;
/// - `HEARTH_SIM_WIRE=1` puts every protocol message into the trace;
/// - `HEARTH_SIM_WORKLOAD=1` uses the first workload generator (``Simulation/Workload/v1``).
enum SimRunner {
    struct Outcome {
        let configuration: Simulation.Configuration
        let violation: String?
        let stats: Simulation.Stats
        let trace: [String]
    }

    static func environment(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

    static func configuration(seed: UInt64) -> Simulation.Configuration {
        var c = Simulation.Configuration(seed: seed)
        if let s = environment("HEARTH_SIM_STEPS").flatMap(Int.init) { c.steps = s }
        c.exactlyOnceServer = environment("HEARTH_SIM_PLAIN_V5") != "1"
        c.strictExactlyOnce = c.exactlyOnceServer && environment("HEARTH_SIM_STRICT") != "0"
        c.traceWire = environment("HEARTH_SIM_WIRE") == "1"
        if environment("HEARTH_SIM_WORKLOAD") == "1" { c.workload = .v1 }
        return c
    }

    static func run(_ configuration: Simulation.Configuration) -> Outcome {
        do {
            let sim = try Simulation(configuration)
            let violation = sim.run()
            return Outcome(configuration: configuration, violation: violation, stats: sim.stats, trace: sim.trace)
        } catch {
            return Outcome(configuration: configuration, violation: "setup failed: \(error)", stats: .init(), trace: [])
        }
    }

    /// The shortest prefix of the run's steps that still fails (a violation during the steps
    /// fails at exactly that step; one found at quiescence is searched for).
    static func shrink(_ failed: Outcome) -> Outcome {
        var best = failed
        var c = failed.configuration
        if failed.stats.steps < c.steps {
            c.steps = failed.stats.steps
            return run(c)
        }
        var lo = 1, hi = c.steps
        while lo < hi {
            let mid = (lo + hi) / 2
            c.steps = mid
            let o = run(c)
            if o.violation != nil {
                best = o
                hi = mid
            } else {
                lo = mid + 1
            }
        }
        return best
    }

    /// The report of a failure: the seed, the one command that reruns it, the violation and the
    /// trace.
    static func report(_ o: Outcome) -> String {
        let c = o.configuration
        var s = "simulation seed \(c.seed) failed after \(o.stats.steps) steps: \(o.violation ?? "?")\n"
        s +=
            "rerun: HEARTH_SIM_SEED=\(c.seed) HEARTH_SIM_STEPS=\(c.steps)\(c.exactlyOnceServer ? (c.strictExactlyOnce ? "" : " HEARTH_SIM_STRICT=0") : " HEARTH_SIM_PLAIN_V5=1")\(c.workload == .v1 ? " HEARTH_SIM_WORKLOAD=1" : "") swift test --filter Simulation\n"
        s += "stats: \(o.stats)\ntrace:\n"
        s += o.trace.joined(separator: "\n")
        return s
    }
}
