// A `Duration` as whole nanoseconds, the unit the log's clock and sleeps take.

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
