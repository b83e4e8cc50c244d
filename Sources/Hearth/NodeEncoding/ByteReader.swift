// Reading the node and event encoding back: bounds-checked little-endian integers, LEB128 varints
// and length-prefixed strings, each failure a `DecodeError` (FORMAT.md §"Encoding primitives").
// The writer half, `ByteWriter`, is HearthLog's (one writer serves the log headers and this encoding).
//
// Folder: NodeEncoding/ holds the node byte encoding and its reader, named apart from HearthLog's
// compression codec (deflate).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why bytes could not be decoded. Carries the byte offset within the decoded unit (a record
/// payload or a checkpoint section) and what was expected there.
@_spi(HearthInternals) public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
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

    /// `buffer` as a string when it is valid UTF-8.
    ///
    /// The plain decoder (it replaces what is invalid with U+FFFD), then a check that it
    /// replaced nothing: every replacement turns 1–3 invalid bytes into the 3 bytes of U+FFFD,
    /// so the result is byte for byte the input exactly when the input was valid UTF-8. One
    /// scan by the decoder plus a `memcmp`, where scanning for ASCII first (or the validating
    /// decoder, generic metadata on every call) costs another pass a byte at a time: with it,
    /// making strings was 23% of a cold open's instructions, whole-cache load included.
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
