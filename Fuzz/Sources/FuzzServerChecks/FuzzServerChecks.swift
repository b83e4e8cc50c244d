// The entry points of the fuzz targets whose checks need HearthServer (Fuzz/README.md):
// `run(target:_:)` dispatches one input to its target's check, `initialize(target:)` writes the seed
// corpus; `check` reports a violated invariant. As in FuzzChecks, every byte string is a valid input
// and a violated invariant stops the process (fatalError), which libFuzzer reports as a finding.
// Fuzz/Sources/FuzzServerChecks is the one source of these checks: Tests/HearthServerTests/FuzzChecks/
// holds a symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails
// when a copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
import Foundation

public enum FuzzServerChecks {
    /// Reports a violated invariant (a finding).
    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() { fatalError("FUZZ FINDING: \(message())") }
    }

    /// Called by the fuzzers' LLVMFuzzerInitialize: with HEARTH_FUZZ_WRITE_SEEDS=dir, writes the seed
    /// corpus of `target` into dir and exits.
    public static func initialize(target: String) {
        guard let dir = ProcessInfo.processInfo.environment["HEARTH_FUZZ_WRITE_SEEDS"] else { return }
        let seeds: [(String, [UInt8])]
        switch target {
        case "FuzzWire": seeds = wireSeeds()
        case "FuzzREST": seeds = restSeeds()
        default: fatalError("unknown fuzz target \(target)")
        }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for (name, bytes) in seeds {
                try Data(bytes).write(to: URL(fileURLWithPath: dir).appendingPathComponent(name))
            }
        } catch {
            fatalError("cannot write seeds to \(dir): \(error)")
        }
        print("wrote \(seeds.count) seeds for \(target) to \(dir)")
        exit(0)
    }

    /// Runs the check of `target` ("FuzzWire", "FuzzREST") on one input.
    public static func run(target: String, _ bytes: [UInt8]) {
        switch target {
        case "FuzzWire": wire(bytes)
        case "FuzzREST": rest(bytes)
        default: fatalError("unknown fuzz target \(target)")
        }
    }

    /// `bytes` cut at every 0xFF, a byte UTF-8 never holds: the fields of an input (frames, or the
    /// parts of a request head), each text or visibly not.
    static func fields(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
    }
}
