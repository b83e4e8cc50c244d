/// Firebase push ids: 20 characters, the first 8 the creation time in milliseconds (base 64,
/// most significant first), the last 12 random — and, for ids made in the same millisecond,
/// the previous id's random part plus one, so ids from one generator sort in creation order
/// (firebase-js-sdk `core/util/NextPushId.ts`).
///
/// The alphabet `-0-9A-Z_a-z` is in ASCII order, so ids sort by time as strings and as keys.
package struct PushIDGenerator: Sendable {
    /// The 64 characters, in ASCII order.
    package static let alphabet: [Character] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    private var lastTime: Int64 = -1
    private var lastRandom: [Int] = Array(repeating: 0, count: 12)

    /// A generator with no history.
    package init() {}

    /// The next id for time `now` (ms since the epoch), drawing randomness from `generator`.
    package mutating func next(now: Int64, using generator: inout some RandomNumberGenerator) -> String {
        let duplicate = now == lastTime
        lastTime = now
        var chars = [Character](repeating: "-", count: 20)
        var t = now
        for i in stride(from: 7, through: 0, by: -1) {
            chars[i] = PushIDGenerator.alphabet[Int(t & 63)]
            t >>= 6
        }
        if !duplicate {
            for i in 0..<12 { lastRandom[i] = Int(generator.next() & 63) }
        } else {
            // Increment the random part, carrying; 64^12 ids per millisecond before a wrap.
            var i = 11
            while i >= 0 && lastRandom[i] == 63 {
                lastRandom[i] = 0
                i -= 1
            }
            if i >= 0 { lastRandom[i] += 1 }
        }
        for i in 0..<12 { chars[8 + i] = PushIDGenerator.alphabet[lastRandom[i]] }
        return String(chars)
    }
}
