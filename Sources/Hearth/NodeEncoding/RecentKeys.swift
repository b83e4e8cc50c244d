// Reusing the child keys a decode made: siblings' children share their keys (every chat message
// has an `author`, a `text` and a `ts`), and making a key — a string, validated, maybe allocated,
// then parsed as an integer key — costs more than finding it again.

import HearthModel

/// The short child keys one decode made most recently: a direct-mapped cache of 64, by a hash
/// of their bytes. Nodes of one kind repeat their children's keys (every chat message has an
/// `author`, a `text` and a `ts`); a key found here costs reading its bytes as two words and
/// comparing them, where making it costs a string (validated) and a parse as an integer key.
///
/// Only keys of at most 16 bytes are kept, as their length and bytes (two words, zero-padded):
/// equal entries are equal bytes, so a hit is never a wrong key. Longer keys (push ids are 20
/// bytes) are mostly unique, and would only evict.
struct RecentKeys {
    struct Entry {
        var length: Int
        var head: UInt64
        var tail: UInt64
        var key: ChildKey
    }

    static let slotCount = 64
    static let longest = 16
    /// Short keys made before the cache is: setting up and tearing down 64 entries costs
    /// about what making 5–10 keys does, more than a small node (a pending write replayed at
    /// open, ~20 keys) gains from it.
    static let keysBeforeCaching = 48
    /// Empty until ``keysBeforeCaching`` short keys were made.
    private var entries: ContiguousArray<Entry> = []
    private var uncached = 0

    /// Whether to look up and remember this short key (false for a decode's first
    /// ``keysBeforeCaching``).
    mutating func caching() -> Bool {
        if !entries.isEmpty { return true }
        if uncached < RecentKeys.keysBeforeCaching {
            uncached += 1
            return false
        }
        entries = ContiguousArray(
            repeating: Entry(length: -1, head: 0, tail: 0, key: ChildKey("")), count: RecentKeys.slotCount)
        return true
    }

    /// The first 8 bytes and the next 8 (at most 16 in all), little-endian, zero-padded.
    static func words(_ b: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        precondition(b.count <= longest)
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { raw in
            if let base = b.baseAddress, b.count > 0 { raw.baseAddress!.copyMemory(from: base, byteCount: b.count) }
        }
        return (UInt64(littleEndian: words.0), UInt64(littleEndian: words.1))
    }

    private static func slot(_ length: Int, _ head: UInt64, _ tail: UInt64) -> Int {
        let h = (head ^ (tail &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(truncatingIfNeeded: length)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: h >> 58)  // the top 6 bits: 0..<64
    }

    /// The key remembered with these bytes, if any (once ``caching()`` said yes).
    func key(length: Int, _ head: UInt64, _ tail: UInt64) -> ChildKey? {
        let e = entries[RecentKeys.slot(length, head, tail)]
        return e.length == length && e.head == head && e.tail == tail ? e.key : nil
    }

    /// Remembers `key`, whose UTF-8 bytes are `length` long and read as `head` and `tail`.
    mutating func remember(_ key: ChildKey, length: Int, _ head: UInt64, _ tail: UInt64) {
        entries[RecentKeys.slot(length, head, tail)] = Entry(length: length, head: head, tail: tail, key: key)
    }
}

extension ByteReader {
    /// A length-prefixed UTF-8 string read as a child key, reusing a key of `recent` with the
    /// same bytes instead of making it again (NodeCodec: siblings' children share their keys).
    /// The same checks as ``string()``.
    mutating func key(_ recent: inout RecentKeys) throws(DecodeError) -> ChildKey {
        let n = try count(limit: Int.max)
        guard n <= remaining else { throw fail("string length \(n) exceeds remaining \(remaining) bytes") }
        let start = offset
        try skip(n)
        let found = bytes.withUnsafeBufferPointer { all -> ChildKey? in
            let buffer = UnsafeBufferPointer(rebasing: all[start..<(start + n)])
            guard n <= RecentKeys.longest, recent.caching() else {
                return ByteReader.validString(buffer).map { ChildKey($0) }
            }
            let (head, tail) = RecentKeys.words(buffer)
            if let key = recent.key(length: n, head, tail) { return key }
            guard let string = ByteReader.validString(buffer) else { return nil }
            let key = ChildKey(string)
            recent.remember(key, length: n, head, tail)
            return key
        }
        guard let found else { throw DecodeError(offset: start, reason: "invalid UTF-8 in string") }
        return found
    }
}
