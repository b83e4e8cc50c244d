#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress bar on stderr, drawn only when stderr is a terminal and the run has lasted long
/// enough to be worth one (half a second; `HEARTH_PROGRESS_DELAY_MS` overrides it, for tests),
/// redrawn at most ten times a second, and erased when done.
///
/// It never writes to stdout, and it never shares a line with anything else: ``Output`` erases
/// the bar before it writes results to a terminal stdout (or a message to stderr), and the next
/// update draws it again below them — so on a terminal where stdout and stderr are the same,
/// results and bar never mix, and piped output never carries a byte of it.
///
/// One run shows one bar, in phases (`verify: segments [####----] 40%`). The tool runs its
/// commands on one thread; the bar is used from that thread only.
final class Progress {
    /// The bar drawn on the terminal now, if any (the tool is single-threaded).
    nonisolated(unsafe) private static var shown: Progress?

    private let label: String
    private let enabled: Bool
    private let start: UInt64
    private let delay: UInt64
    private var lastDraw: UInt64 = 0
    private var drawn = false
    private var finished = false
    private var phaseName: String?
    private var total: UInt64 = 1
    private var done: UInt64 = 0

    /// A bar labelled `label` (the command's name).
    init(_ label: String) {
        self.label = label
        self.enabled = isatty(2) == 1
        self.start = Progress.now()
        if let text = getenv("HEARTH_PROGRESS_DELAY_MS").map({ String(cString: $0) }), let ms = UInt64(text) {
            delay = ms * 1_000_000
        } else {
            delay = 500_000_000
        }
    }

    /// Starts a phase of `total` units (named `name`, or unnamed), at 0.
    func phase(_ name: String?, total: Int) {
        phaseName = name
        self.total = UInt64(max(total, 1))
        done = 0
        lastDraw = 0  // show the new phase at the next update
    }

    /// Reports `done` of the phase's units finished.
    func update(_ done: Int) {
        self.done = UInt64(max(done, 0))
        guard enabled, !finished else { return }
        let t = Progress.now()
        guard t - start >= delay, lastDraw == 0 || t - lastDraw >= 100_000_000 else { return }
        lastDraw = t
        draw()
    }

    /// Erases the bar (for good: later updates draw nothing).
    func finish() {
        erase()
        finished = true
        if Progress.shown === self { Progress.shown = nil }
    }

    /// Called before results go to stdout or a message to stderr: erases the bar if one is on
    /// the terminal those bytes go to. The next update draws it again, below them.
    static func willWrite(fd: Int32) {
        guard let bar = shown, bar.drawn else { return }
        if fd == 2 || isatty(fd) == 1 {
            bar.erase()
            bar.lastDraw = 0
        }
    }

    private func draw() {
        let fraction = min(1, Double(done) / Double(total))
        let width = 24
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let name = phaseName.map { "\(label): \($0)" } ?? label
        Output.stderrRaw("\r\u{1B}[K\(name) [\(bar)] \(Int(fraction * 100))%")
        drawn = true
        Progress.shown = self
    }

    private func erase() {
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
