// JSONParser+String: JSON strings — the no-escape fast path, escapes and surrogate pairs, and UTF-8
// validation of raw bytes.

extension JSONParser {
    /// Parses a string whose opening quote is at `pos`.
    mutating func parseString() throws(JSONError) -> String {
        assert(pos < bytes.count && bytes[pos] == UInt8(ascii: "\""), "parseString starts at the opening quote")
        pos += 1
        let start = pos
        var i = pos
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                pos = i + 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .controlCharacterInString(offset: i) }
            if byte < 0x80 || trustedUTF8 {
                i += 1
            } else {
                i = try validateUTF8Sequence(at: i)
            }
        }
        guard i < bytes.count else { throw .unexpectedEnd(expected: "'\"' to close the string") }

        // Slow path: decode escapes into `scratch`.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                pos = i + 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                i = try decodeEscape(at: i)
            } else if byte < 0x20 {
                throw .controlCharacterInString(offset: i)
            } else if byte < 0x80 || trustedUTF8 {
                scratch.append(byte)
                i += 1
            } else {
                let end = try validateUTF8Sequence(at: i)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<end]))
                i = end
            }
        }
        throw .unexpectedEnd(expected: "'\"' to close the string")
    }

    /// Decodes the escape whose backslash is at `i` into `scratch`; returns the index after it.
    mutating func decodeEscape(at i: Int) throws(JSONError) -> Int {
        guard i + 1 < bytes.count else { throw .unexpectedEnd(expected: "an escape sequence") }
        let decoded: UInt8
        switch bytes[i + 1] {
        case UInt8(ascii: "\""): decoded = 0x22
        case UInt8(ascii: "\\"): decoded = 0x5C
        case UInt8(ascii: "/"): decoded = 0x2F
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"):
            let unit = try hex4(at: i + 2, escapeOffset: i)
            var scalarValue = UInt32(unit)
            var end = i + 6
            if (0xDC00...0xDFFF).contains(unit) { throw .invalidUnicode(offset: i) }
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed immediately by an escaped low surrogate.
                guard end + 1 < bytes.count,
                    bytes[end] == UInt8(ascii: "\\"), bytes[end + 1] == UInt8(ascii: "u")
                else { throw .invalidUnicode(offset: i) }
                let low = try hex4(at: end + 2, escapeOffset: end)
                guard (0xDC00...0xDFFF).contains(low) else { throw .invalidUnicode(offset: i) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                end += 6
            }
            appendUTF8(scalarValue)
            return end
        default:
            throw .invalidEscape(offset: i)
        }
        scratch.append(decoded)
        return i + 2
    }

    /// Appends the UTF-8 encoding of `scalar`, a Unicode scalar value (not a surrogate,
    /// at most U+10FFFF — guaranteed by the caller's surrogate handling).
    mutating func appendUTF8(_ scalar: UInt32) {
        assert(scalar <= 0x10FFFF && !(0xD800...0xDFFF).contains(scalar), "appendUTF8 is given a Unicode scalar value")
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | ((scalar >> 18) & 0x07)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// Reads four hex digits at `at` (the `XXXX` of a `\uXXXX` starting at `escapeOffset`).
    func hex4(at start: Int, escapeOffset: Int) throws(JSONError) -> UInt16 {
        var value: UInt16 = 0
        for j in start..<(start + 4) {
            guard j < bytes.count else { throw .unexpectedEnd(expected: "four hex digits after '\\u'") }
            let byte = bytes[j]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalidEscape(offset: escapeOffset)
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Validates the multi-byte UTF-8 sequence starting at `i` (lead byte ≥ 0x80) per
    /// Unicode Table 3-7 (no overlongs, no surrogates, nothing above U+10FFFF); returns the
    /// index after it.
    func validateUTF8Sequence(at i: Int) throws(JSONError) -> Int {
        assert(i < bytes.count && bytes[i] >= 0x80, "validateUTF8Sequence starts at a non-ASCII lead byte")
        let lead = bytes[i]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw .invalidUTF8(offset: i)
        }
        guard i + length <= bytes.count, secondRange.contains(bytes[i + 1]) else {
            throw .invalidUTF8(offset: i)
        }
        for j in (i + 2)..<(i + length) where bytes[j] & 0xC0 != 0x80 {
            throw .invalidUTF8(offset: i)
        }
        return i + length
    }
}
