// Reading the node and event encoding back: bounds-checked little-endian integers, LEB128 varints
// and length-prefixed strings, each failure a `DecodeError` (FORMAT.md §"Encoding primitives").
// The writer half, `ByteWriter`, is HearthLog's (one writer serves the log headers and this encoding).
//
// Folder: NodeEncoding/ (was Codec/, issue 18) holds the node byte encoding and its reader, named
// apart from HearthLog's compression codec (deflate).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why bytes could not be decoded. Carries the byte offset within the decoded unit (a record
/// payload or a checkpoint section) and what was expected there.
public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Offset of the problem within the decoded bytes.
    public let offset: Int
    /// What was wrong.
    public let reason: String

    /// Creates an error at `offset` (within the decoded unit) saying what was wrong.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "malformed data at byte \(offset): \(reason)" }
}

/// Reads primitive values written by ``ByteWriter``. Every read is bounds-checked against the
/// input, so truncated or hostile bytes produce a ``DecodeError``, never a trap, and no length
/// field can make it allocate more than the input holds.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = start
        self.end = end ?? bytes.count
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset >= end }

    func fail(_ reason: String) -> DecodeError { DecodeError(offset: offset, reason: reason) }

    mutating func u8() throws(DecodeError) -> UInt8 {
        guard offset < end else { throw fail("unexpected end of data") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws(DecodeError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            if shift == 63 && b > 1 { throw fail("varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw fail("varint longer than 10 bytes") }
        }
    }

    /// A varint that must fit `Int` and be at most `limit`.
    mutating func count(limit: Int) throws(DecodeError) -> Int {
        let v = try varint()
        guard v <= UInt64(limit) else { throw fail("count \(v) exceeds limit \(limit)") }
        return Int(v)
    }

    mutating func zigzag() throws(DecodeError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    mutating func u32() throws(DecodeError) -> UInt32 {
        guard remaining >= 4 else { throw fail("unexpected end of data") }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * i) }
        offset += 4
        return v
    }

    mutating func u64() throws(DecodeError) -> UInt64 {
        guard remaining >= 8 else { throw fail("unexpected end of data") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * i) }
        offset += 8
        return v
    }

    mutating func double() throws(DecodeError) -> Double { Double(bitPattern: try u64()) }

    mutating func bool() throws(DecodeError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let b: throw fail("invalid boolean byte \(b)")
        }
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is an error, not a replacement.
    mutating func string() throws(DecodeError) -> String {
        // Bound the length by what is left *after* the length varint: `count(limit: remaining)`
        // evaluated `remaining` before the varint was consumed, so a length up to the varint's
        // own size past the end passed the check and the slice below trapped (or, with an
        // `end` before the array's end, read bytes beyond the unit).
        let n = try count(limit: Int.max)
        guard n <= remaining else { throw fail("string length \(n) exceeds remaining \(remaining) bytes") }
        let start = offset
        offset += n
        let decoded = bytes.withUnsafeBufferPointer { all in
            ByteReader.validString(UnsafeBufferPointer(rebasing: all[start..<(start + n)]))
        }
        guard let decoded else { throw DecodeError(offset: start, reason: "invalid UTF-8 in string") }
        return decoded
    }

    /// A length-prefixed UTF-8 string read as a child key, reusing a key of `recent` with the
    /// same bytes instead of making it again (NodeCodec: siblings' children share their keys).
    /// The same checks as ``string()``.
    mutating func key(_ recent: inout RecentKeys) throws(DecodeError) -> ChildKey {
        let n = try count(limit: Int.max)
        guard n <= remaining else { throw fail("string length \(n) exceeds remaining \(remaining) bytes") }
        let start = offset
        offset += n
        let found = bytes.withUnsafeBufferPointer { all -> ChildKey? in
            let buffer = UnsafeBufferPointer(rebasing: all[start..<(start + n)])
            guard n <= RecentKeys.longest else {
                return ByteReader.validString(buffer).map { ChildKey($0) }
            }
            guard recent.caching() else { return ByteReader.validString(buffer).map { ChildKey($0) } }
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

    /// `buffer` as a string when it is valid UTF-8.
    ///
    /// The plain decoder (it replaces what is invalid with U+FFFD), then a check that it
    /// replaced nothing: every replacement turns 1–3 invalid bytes into the 3 bytes of U+FFFD,
    /// so the result is byte for byte the input exactly when the input was valid UTF-8. One
    /// scan by the decoder plus a `memcmp`, where scanning for ASCII first (or the validating
    /// decoder, generic metadata on every call) cost another pass a byte at a time: strings
    /// were a quarter of decoding a cache (Benchmarks/README.md, item 34).
    static func validString(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
        let n = buffer.count
        var s = String(decoding: buffer, as: UTF8.self)
        let same = s.withUTF8 { made in
            made.count == n && (n == 0 || memcmp(made.baseAddress!, buffer.baseAddress!, n) == 0)
        }
        return same ? s : nil
    }

    /// Moves past `n` bytes (no slice made: for scanners that only skip).
    mutating func skip(_ n: Int) throws(DecodeError) {
        guard n >= 0, n <= remaining else { throw fail("length \(n) exceeds remaining \(remaining) bytes") }
        offset += n
    }

    mutating func raw(_ n: Int) throws(DecodeError) -> ArraySlice<UInt8> {
        guard n >= 0, n <= remaining else { throw fail("length \(n) exceeds remaining \(remaining) bytes") }
        defer { offset += n }
        return bytes[offset..<(offset + n)]
    }
}

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
