/// Reconnect delays, Firebase's (firebase-js-sdk `core/PersistentConnection.ts`,
/// `onRealtimeDisconnect_`): the delay starts at 1 s and grows ×1.3 per failed attempt up to
/// 30 s; the wait actually used is a uniformly random fraction of what is left of it since the
/// last attempt (full jitter, so a server restart is not met by every client at once); a
/// connection that stayed up for 30 s resets it to 1 s. A pure policy: times in, delays out.
struct Backoff: Sendable {
    static let minimumDelayMs: Double = 1_000
    static let maximumDelayMs: Double = 30_000
    static let multiplier = 1.3
    /// A connection up at least this long resets the delay.
    static let resetAfterMs: Int64 = 30_000

    private(set) var delayMs: Double = Backoff.minimumDelayMs
    private var lastAttempt: Int64?
    private var lastEstablished: Int64?

    /// A connection attempt starts now.
    mutating func attempted(at now: Int64) { lastAttempt = now }

    /// A connection was established now.
    mutating func established(at now: Int64) { lastEstablished = now }

    /// The connection ended now; returns how long to wait before the next attempt, given a
    /// random draw in [0, 1).
    mutating func nextWait(now: Int64, random: Double) -> Int64 {
        if let up = lastEstablished {
            if now - up > Backoff.resetAfterMs { delayMs = Backoff.minimumDelayMs }
            lastEstablished = nil
        }
        let sinceAttempt = Double(now - (lastAttempt ?? now))
        let wait = max(0, delayMs - sinceAttempt) * random
        delayMs = min(Backoff.maximumDelayMs, delayMs * Backoff.multiplier)
        assert(wait >= 0 && wait <= Backoff.maximumDelayMs)
        return Int64(wait)
    }

    /// The app asked to go online: the next attempt is immediate and the delay starts over.
    mutating func reset() {
        delayMs = Backoff.minimumDelayMs
        lastEstablished = nil
    }
}
