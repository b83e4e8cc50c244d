#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress bar on stderr, drawn only when stderr is a terminal and the run has lasted
/// long enough to be worth one (half a second); redrawn at most ten times a second and
/// erased when done. Never writes to stdout, so it cannot disturb piped output.
final class Progress {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private let start: UInt64
    private var lastDraw: UInt64 = 0
    private var drawn = false

    init(_ label: String, total: Int) {
        self.label = label
        self.total = max(total, 1)
        self.enabled = isatty(2) == 1
        self.start = Progress.now()
    }

    /// Reports `done` of `total` units finished.
    func update(_ done: Int) {
        guard enabled else { return }
        let t = Progress.now()
        guard t - start >= 500_000_000, t - lastDraw >= 100_000_000 else { return }
        lastDraw = t
        drawn = true
        let fraction = min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        Output.stderrRaw("\r\(label) [\(bar)] \(Int(fraction * 100))% (\(done)/\(total))")
    }

    /// Erases the bar.
    func finish() {
        guard enabled, drawn else { return }
        Output.stderrRaw("\r\u{1B}[K")
        drawn = false
    }

    private static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
