/// SplitMix64: a small, fast generator that is deterministic for a seed.
///
/// The protocol cores (server and client) draw push ids, session ids and reconnect jitter from
/// it, so that a simulator that fixes the seed replays them exactly; tests, fuzzers and
/// benchmarks draw from it so that a failure replays from the seed it names. The same seed
/// always yields the same sequence, on every platform.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The generator's whole state.
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed `Double` in [0, 1).
    public mutating func unitInterval() -> Double { Double(next() >> 11) * 0x1p-53 }
}
