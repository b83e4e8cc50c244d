// A key's rank: its kind and first bytes read once into numbers whose order agrees with the
// keys', so that most comparisons of keys held beside their ranks are of two integers.

extension ChildKey {
    /// A key's place as far as its kind and first bytes tell: integer keys first, by value; then
    /// the others by their first eight bytes, taken as a big-endian number. Two keys whose ranks
    /// differ are in the order of their ranks; equal ranks say nothing, and the keys are then
    /// compared in full (``compare(_:_:)``).
    ///
    /// What it is for: comparing two keys' strings reaches into two string objects, cold when
    /// the keys are many. The levels of a path trie hold their keys in key order with their
    /// ranks beside them, and search by rank.
    ///
    /// Why the ranks agree with the order: a string key sorts by UTF-16 code units, which
    /// agrees with its UTF-8 bytes except where a code point of U+E000…U+FFFF (lead byte 0xEE
    /// or 0xEF) meets a supplementary one (0xF0…0xF4, a surrogate pair in UTF-16, which sorts
    /// below U+E000) — ``compareUTF16(_:_:)``. So the rank stops at the first byte ≥ 0xEE and
    /// fills the rest with 0xFF: every key with the same bytes before it and a smaller byte
    /// there is below it in both orders, and every key that stops there too ties with it. A key
    /// shorter than eight bytes is filled with 0x00, below every byte that can follow, so a
    /// prefix ranks at or below the keys it begins.
    package struct Rank: Comparable, Sendable {
        /// 0 for an integer key, 1 for any other.
        package let kind: UInt8
        /// The integer's value shifted to be non-negative, or the string's first bytes.
        package let value: UInt64

        /// The rank of `key`.
        package init(_ key: ChildKey) {
            if let i = key.integerValue {
                kind = 0
                value = UInt64(Int64(i) - Int64(Int32.min))
                return
            }
            kind = 1
            // Native keys (every key ChildKey makes) are contiguous UTF-8: read in place.
            value =
                key.string.utf8.withContiguousStorageIfAvailable(Rank.leadingBytes)
                ?? Array(key.string.utf8.prefix(8)).withUnsafeBufferPointer(Rank.leadingBytes)
        }

        /// The first eight bytes as a big-endian number, stopped at the first byte ≥ 0xEE and
        /// filled with 0xFF after it, or with 0x00 past the end.
        private static func leadingBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var v: UInt64 = 0
            let n = Swift.min(8, bytes.count)
            var i = 0
            while i < n {
                let byte = bytes[i]
                // A stop: the bytes read so far, then 0xFF (i < 8: the shifts stay below 64,
                // and `<<` by 64 when i == 0 gives 0).
                if byte >= 0xEE { return v << (8 * (8 - i)) | UInt64.max >> (8 * i) }
                v = v << 8 | UInt64(byte)
                i += 1
            }
            // Past a short key's end: 0x00 (`<<` by 64 when the key is empty gives 0).
            return v << (8 * (8 - n))
        }

        package static func < (a: Rank, b: Rank) -> Bool { a.kind != b.kind ? a.kind < b.kind : a.value < b.value }
    }
}
