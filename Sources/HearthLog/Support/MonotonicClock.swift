// The monotonic clock and thread sleep of the C library (Glibc, Musl or Darwin), for timing
// group commits and waits in the log (and, `package`-visible, in the tools and tests above it).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on a monotonic clock (never goes backwards, unaffected by wall-clock changes).
package func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Sleeps the calling thread.
package func sleepNanos(_ ns: UInt64) {
    var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
    var rest = timespec()
    var rounds = 0
    // Resume after signal interruptions (bounded).
    while nanosleep(&ts, &rest) != 0, rounds < 1000 {
        ts = rest
        rounds += 1
    }
}
