@_spi(HearthInternals) import HearthWire

/// The simulator's seeded choices: every decision of a run (workload, faults, delays) is drawn
/// from one of these, so a seed replays the same run.
struct SimRandom: RandomNumberGenerator {
    private var generator: SeededRandom

    init(seed: UInt64) { generator = SeededRandom(seed: seed) }

    /// 64 random bits.
    mutating func next() -> UInt64 { generator.next() }

    /// A uniform integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(generator.next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// A uniform duration in `range` (ms).
    mutating func ms(_ range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(generator.next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// A uniform double in [0, 1).
    mutating func unit() -> Double { Double(generator.next() >> 11) / Double(UInt64(1) << 53) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// One element of a non-empty array.
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Picks an index by weight (weights ≥ 0, not all zero).
    mutating func weighted(_ weights: [Double]) -> Int {
        var r = unit() * weights.reduce(0, +)
        for (i, w) in weights.enumerated() {
            if r < w { return i }
            r -= w
        }
        return weights.lastIndex(where: { $0 > 0 }) ?? weights.count - 1
    }
}
