// Sorting many keys into Firebase key order: each key's first bytes read once into a number
// whose order agrees with the keys', so that most comparisons are of two integers.

extension ChildKey {
    /// `keys` in Firebase key order (``compare(_:_:)``): the same array as `keys.sorted()`.
    ///
    /// `sorted()` compares two keys' strings at every step — reaching into two string objects,
    /// cold when the keys are many: a checkpoint sorts every level of the untracked entries
    /// this way (~100,000 push ids in a 50 MiB fill, Benchmarks/README.md item 41). Here each
    /// key is read once, into a rank: integer keys first, by value; then the others by their
    /// first eight bytes, taken as a big-endian number. Two keys whose ranks differ are in the
    /// order of their ranks; equal ranks are compared in full.
    ///
    /// Why the ranks agree with the order: a string key sorts by UTF-16 code units, which
    /// agrees with its UTF-8 bytes except where a code point of U+E000…U+FFFF (lead byte 0xEE
    /// or 0xEF) meets a supplementary one (0xF0…0xF4, a surrogate pair in UTF-16, which sorts
    /// below U+E000) — ``compareUTF16(_:_:)``. So the rank stops at the first byte ≥ 0xEE and
    /// fills the rest with 0xFF: every key with the same bytes before it and a smaller byte
    /// there is below it in both orders, and every key that stops there too ties with it. A key
    /// shorter than eight bytes is filled with 0x00, below every byte that can follow, so a
    /// prefix ranks at or below the keys it begins.
    package static func sortedInKeyOrder<C: Collection>(_ keys: C) -> [ChildKey] where C.Element == ChildKey {
        var ranked: [(rank: Rank, key: ChildKey)] = []
        ranked.reserveCapacity(keys.count)
        for key in keys { ranked.append((Rank(key), key)) }
        ranked.sort { a, b in
            if a.rank != b.rank { return a.rank < b.rank }
            return compare(a.key, b.key) < 0
        }
        return ranked.map(\.key)
    }

    /// A key's place as far as its kind and first bytes tell (``sortedInKeyOrder(_:)``).
    struct Rank: Comparable {
        /// 0 for an integer key, 1 for any other.
        let kind: UInt8
        /// The integer's value shifted to be non-negative, or the string's first bytes.
        let value: UInt64

        init(_ key: ChildKey) {
            if let i = key.integerValue {
                kind = 0
                value = UInt64(Int64(i) - Int64(Int32.min))
                return
            }
            kind = 1
            var v: UInt64 = 0
            var filled = 0
            var stopped = false
            for byte in key.string.utf8.prefix(8) {
                if byte >= 0xEE {
                    stopped = true
                    break
                }
                v = v << 8 | UInt64(byte)
                filled += 1
            }
            // The rest: 0xFF after a stop, 0x00 past a short key's end.
            while filled < 8 {
                v = v << 8 | (stopped ? 0xFF : 0x00)
                filled += 1
            }
            value = v
        }

        static func < (a: Rank, b: Rank) -> Bool { a.kind != b.kind ? a.kind < b.kind : a.value < b.value }
    }
}
