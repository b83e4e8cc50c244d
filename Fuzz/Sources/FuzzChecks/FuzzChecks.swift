// The entry points of Hearth's fuzz targets (Fuzz/README.md): `run(target:_:)` dispatches one input to
// its target's check, `initialize(target:)` writes the seed corpus; `check` reports a violated
// invariant. The checks are pure functions of the input bytes: every byte string is a valid input, and a
// violated invariant stops the process (fatalError), which libFuzzer reports as a finding.
// Fuzz/Sources/FuzzChecks is the one source of these checks: Tests/HearthTests/FuzzChecks/ holds a
// symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails when a
// copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting

public enum FuzzChecks {
    // MARK: - Reporting

    /// HEARTH_FUZZ_TRACE=1 prints what the recovery program does (to reproduce a finding).
    static let tracing = getenv("HEARTH_FUZZ_TRACE") != nil
    static func trace(_ message: @autoclosure () -> String) { if tracing {
            let line = Array("trace: \(message())\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        } }

    /// Reports a violated invariant (a finding).
    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() { fatalError("FUZZ FINDING: \(message())") }
    }


    // MARK: - Entry

    /// Called by the fuzzers' LLVMFuzzerInitialize: with HEARTH_FUZZ_WRITE_SEEDS=dir, writes the seed
    /// corpus of `target` into dir and exits.
    public static func initialize(target: String) {
        guard let dir = getenv("HEARTH_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return }
        let seeds: [(String, [UInt8])]
        switch target {
        case "FuzzDecode": seeds = decodeSeeds()
        case "FuzzRecovery": seeds = recoverySeeds()
        default: seeds = stateSeeds()
        }
        let fs = POSIXFileSystem()
        do {
            try fs.createDirectory(dir)
            for (name, bytes) in seeds {
                let f = try fs.open(dir + "/" + name, mode: .createTruncate)
                try f.write(bytes, at: 0)
                try f.close()
            }
        } catch {
            fatalError("cannot write seeds to \(dir): \(error)")
        }
        print("wrote \(seeds.count) seeds for \(target) to \(dir)")
        exit(0)
    }

    /// Runs the check of `target` ("FuzzDecode", "FuzzRecovery", "FuzzState") on one input.
    public static func run(target: String, _ bytes: [UInt8]) {
        switch target {
        case "FuzzDecode": decode(bytes)
        case "FuzzRecovery": recovery(bytes)
        case "FuzzState": state(bytes)
        default: fatalError("unknown fuzz target \(target)")
        }
    }
}
