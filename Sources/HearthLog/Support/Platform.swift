// Platform glue: the C library, a monotonic clock and little-endian byte helpers.
//
// Everything on disk is little-endian (FORMAT.md §1). These helpers are the only place where
// integers are turned into bytes or back, so the byte order cannot differ between writer and reader.
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

extension Duration {
    /// The duration in whole nanoseconds, clamped to `0...UInt64.max`.
    package var nanoseconds: UInt64 {
        let (s, atto) = components
        if s < 0 { return 0 }
        let ns = UInt64(s).multipliedReportingOverflow(by: 1_000_000_000)
        if ns.overflow { return .max }
        return ns.partialValue &+ UInt64(atto / 1_000_000_000)
    }
}

/// Appends little-endian integers and raw bytes to a growing buffer.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { append(v) }
    mutating func u32(_ v: UInt32) { append(v) }
    mutating func u64(_ v: UInt64) { append(v) }
    mutating func raw<C: Collection>(_ c: C) where C.Element == UInt8 { bytes.append(contentsOf: c) }
    mutating func zeros(_ n: Int) { bytes.append(contentsOf: repeatElement(0, count: n)) }

    private mutating func append<T: FixedWidthInteger>(_ v: T) {
        for i in 0 ..< MemoryLayout<T>.size { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }
}

extension Array where Element == UInt8 {
    /// Reads a little-endian integer at `offset`. The caller has checked the bounds
    /// (asserted here: a failure is a bug in the caller, never a consequence of bad input).
    func le<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "le read out of bounds")
        var v: T = 0
        for i in 0 ..< MemoryLayout<T>.size { v |= T(self[offset + i]) << (8 * i) }
        return v
    }

    /// Overwrites a little-endian `UInt32` at `offset` (used to patch a checksum into a header).
    mutating func putLE32(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count)
        for i in 0 ..< 4 { self[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) }
    }
}
