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
        case "FuzzToken": seeds = tokenSeeds()
        case "FuzzWire": seeds = wireSeeds()
        case "FuzzREST": seeds = restSeeds()
        case "FuzzFrames": seeds = framesSeeds()
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

    /// Runs the check of `target` ("FuzzToken", "FuzzWire", "FuzzREST", "FuzzFrames") on one input.
    public static func run(target: String, _ bytes: [UInt8]) {
        switch target {
        case "FuzzToken": token(bytes)
        case "FuzzWire": wire(bytes)
        case "FuzzREST": rest(bytes)
        case "FuzzFrames": frames(bytes)
        default: fatalError("unknown fuzz target \(target)")
        }
    }

    /// Reads choices from the input; past its end every read is 0, so every input is valid.
    struct Input {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        mutating func u8() -> UInt8 {
            guard index < bytes.count else { return 0 }
            defer { index += 1 }
            return bytes[index]
        }
        /// A choice in 0..<n (n ≤ 256).
        mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(u8()) % n }
        mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
        mutating func u64() -> UInt64 { (0..<8).reduce(0) { acc, i in acc | UInt64(u8()) << (8 * UInt64(i)) } }
        /// Up to `n` bytes (fewer at the end of the input).
        mutating func take(_ n: Int) -> [UInt8] {
            let k = min(n, max(0, bytes.count - index))
            defer { index += k }
            return Array(bytes[index..<(index + k)])
        }
        mutating func rest() -> [UInt8] { take(bytes.count) }
    }

    /// `bytes` cut at every 0xFF, a byte UTF-8 never holds: the fields of an input (frames, or the
    /// parts of a request head), each text or visibly not.
    static func fields(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
    }
}
