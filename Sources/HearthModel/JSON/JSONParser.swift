// JSONParser: a strict RFC 8259 parser working directly on UTF-8 bytes, and its typed errors.

/// Why a JSON text was rejected by ``JSONValue/parse(_:maxDepth:)``.
///
/// Offsets are zero-based byte offsets into the UTF-8 input.
public enum JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A byte that cannot appear here; `expected` says what could.
    case unexpectedCharacter(offset: Int, found: UInt8, expected: String)
    /// The input ended early; `expected` says what was still needed.
    case unexpectedEnd(expected: String)
    /// A malformed number starting at `offset` (leading zero, missing digits, `-` alone, ...).
    case invalidNumber(offset: Int)
    /// A well-formed number starting at `offset` whose magnitude overflows `Double` to infinity.
    case numberOutOfRange(offset: Int)
    /// A backslash escape at `offset` that RFC 8259 does not allow (or a `\u` without 4 hex digits).
    case invalidEscape(offset: Int)
    /// A `\u` escape at `offset` that is a lone or mismatched UTF-16 surrogate.
    case invalidUnicode(offset: Int)
    /// A byte sequence at `offset` inside a string that is not well-formed UTF-8.
    case invalidUTF8(offset: Int)
    /// An unescaped control character (U+0000–U+001F) at `offset` inside a string.
    case controlCharacterInString(offset: Int)
    /// An object key that exactly (byte-for-byte) repeats an earlier key of the same object.
    case duplicateKey(String, offset: Int)
    /// An array or object at `offset` nested deeper than `maxDepth`.
    case tooDeep(maxDepth: Int, offset: Int)
    /// Something other than whitespace at `offset`, after the complete top-level value.
    case trailingData(offset: Int)

    /// A human-readable explanation, including the byte offset.
    public var description: String {
        switch self {
        case let .unexpectedCharacter(offset, found, expected):
            return "JSON error at byte \(offset): expected \(expected) but found \(Self.describe(found))"
        case let .unexpectedEnd(expected):
            return "JSON error: the text ended early; expected \(expected)"
        case let .invalidNumber(offset):
            return "JSON error at byte \(offset): malformed number"
        case let .numberOutOfRange(offset):
            return "JSON error at byte \(offset): number is too large for a 64-bit double"
        case let .invalidEscape(offset):
            return "JSON error at byte \(offset): invalid escape sequence in string"
        case let .invalidUnicode(offset):
            return "JSON error at byte \(offset): lone or mismatched UTF-16 surrogate in \\u escape"
        case let .invalidUTF8(offset):
            return "JSON error at byte \(offset): invalid UTF-8 in string"
        case let .controlCharacterInString(offset):
            return "JSON error at byte \(offset): unescaped control character in string"
        case let .duplicateKey(key, offset):
            return "JSON error at byte \(offset): duplicate object key \"\(key)\""
        case let .tooDeep(maxDepth, offset):
            return "JSON error at byte \(offset): nesting deeper than the limit of \(maxDepth)"
        case let .trailingData(offset):
            return "JSON error at byte \(offset): unexpected data after the JSON value"
        }
    }

    /// The byte offset the error points at, or `nil` for ``unexpectedEnd(expected:)`` (which
    /// is at the end of the input).
    public var offset: Int? {
        switch self {
        case let .unexpectedCharacter(offset, _, _), let .invalidNumber(offset),
            let .numberOutOfRange(offset), let .invalidEscape(offset), let .invalidUnicode(offset),
            let .invalidUTF8(offset), let .controlCharacterInString(offset),
            let .duplicateKey(_, offset), let .tooDeep(_, offset), let .trailingData(offset):
            return offset
        case .unexpectedEnd:
            return nil
        }
    }

    /// The 1-based line and 1-based byte column of ``offset`` within `text` (the text that was
    /// parsed), for messages such as `line 3, column 7`. Lines end at `\n`. Returns `nil` when
    /// there is no offset or it lies outside `text`.
    public func lineAndColumn(in text: String) -> (line: Int, column: Int)? {
        guard let offset, offset >= 0, offset <= text.utf8.count else { return nil }
        var line = 1
        var lineStart = 0
        for (i, byte) in text.utf8.prefix(offset).enumerated() where byte == 0x0A {
            line += 1
            lineStart = i + 1
        }
        return (line, offset - lineStart + 1)
    }

    private static func describe(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        let code = "0x" + (hex.count < 2 ? "0" + hex : hex)
        if byte > 0x20 && byte < 0x7F {
            return "'\(Character(Unicode.Scalar(byte)))' (\(code))"
        }
        return "byte \(code)"
    }
}

extension JSONValue {
    /// The default nesting limit for arrays and objects.
    public static let defaultMaxDepth = 512

    /// Parses a complete JSON text (RFC 8259, strict).
    ///
    /// Surrounding whitespace is allowed; anything else after the value is an error.
    /// Rejected: trailing commas, leading zeros, `+1`, `.5`, `1.`, NaN/Infinity, numbers that
    /// overflow `Double`, unescaped control characters, invalid escapes, lone surrogates,
    /// duplicate object keys (compared byte-for-byte), nesting deeper than `maxDepth`.
    ///
    /// The parser is iterative: it uses no recursion, so no input can overflow the stack.
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - maxDepth: How many arrays/objects may be nested (`[[1]]` has depth 2; scalars 0).
    ///     Parsing itself never recurses, but writing, comparing and freeing a value recurse
    ///     once per level, so keep this modest (the default suits Firebase's 32-level limit).
    /// - Throws: ``JSONError`` describing the first problem found.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            parse(buffer: buffer, maxDepth: maxDepth, trustedUTF8: true)
        }
        return try result.get()
    }

    /// Parses a complete JSON text given as UTF-8 bytes; see the `String` overload.
    ///
    /// Contiguous collections (`[UInt8]`, `String.UTF8View`, buffers, ...) are parsed in place;
    /// others are copied once. The bytes are validated as UTF-8.
    /// - Throws: ``JSONError`` describing the first problem found.
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer in
            parse(buffer: buffer, maxDepth: maxDepth, trustedUTF8: false)
        }) {
            return try result.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer in
            parse(buffer: buffer, maxDepth: maxDepth, trustedUTF8: false)
        }.get()
    }

    private static func parse(
        buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, trustedUTF8: Bool
    ) -> Result<JSONValue, JSONError> {
        var parser = JSONParser(bytes: buffer, maxDepth: max(0, maxDepth), trustedUTF8: trustedUTF8)
        return Result { () throws(JSONError) -> JSONValue in try parser.parseDocument() }
    }
}

/// A string compared and hashed by its exact UTF-8 bytes (for duplicate-key detection).
private struct ExactKey: Hashable {
    let string: String
    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }
    func hash(into hasher: inout Hasher) {
        JSONValue.hashExactly(string, into: &hasher)
    }
}

/// An array or object still being parsed.
private struct OpenContainer {
    /// Objects with at least this many members index their keys in a set; smaller ones scan.
    static let indexThreshold = 12

    let isObject: Bool
    var elements: [JSONValue] = []
    var members: [JSONMember] = []
    /// The key of the member whose value is being parsed (objects only).
    var pendingKey = ""
    /// Exact keys of `members`, built once the object is large enough.
    var keyIndex: Set<ExactKey>? = nil

    init(isObject: Bool) { self.isObject = isObject }

    func contains(key: String) -> Bool {
        if let keyIndex { return keyIndex.contains(ExactKey(string: key)) }
        return members.contains { $0.key.utf8.elementsEqual(key.utf8) }
    }

    mutating func addMember(_ value: JSONValue) {
        members.append(JSONMember(key: pendingKey, value: value))
        if keyIndex != nil {
            keyIndex?.insert(ExactKey(string: pendingKey))
        } else if members.count >= Self.indexThreshold {
            keyIndex = Set(members.map { ExactKey(string: $0.key) })
        }
    }
}

/// The parser state over one UTF-8 buffer.
///
/// Invariant: `pos` is always in `0...bytes.count`; every read checks `pos < bytes.count`.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// True when the bytes come from a Swift `String` and are known to be valid UTF-8.
    let trustedUTF8: Bool
    var pos = 0
    /// Reused buffer for decoding strings that contain escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, trustedUTF8: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.trustedUTF8 = trustedUTF8
    }

    // MARK: Structure

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        var stack: [OpenContainer] = []
        var value: JSONValue

        nextValue: while true {
            skipWhitespace()
            guard pos < bytes.count else { throw .unexpectedEnd(expected: "a value") }
            let byte = bytes[pos]
            switch byte {
            case UInt8(ascii: "{"):
                guard stack.count < maxDepth else { throw .tooDeep(maxDepth: maxDepth, offset: pos) }
                pos += 1
                skipWhitespace()
                if pos < bytes.count && bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    value = .object([])
                } else {
                    var container = OpenContainer(isObject: true)
                    try parseMemberKey(into: &container)
                    stack.append(container)
                    continue nextValue
                }
            case UInt8(ascii: "["):
                guard stack.count < maxDepth else { throw .tooDeep(maxDepth: maxDepth, offset: pos) }
                pos += 1
                skipWhitespace()
                if pos < bytes.count && bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    value = .array([])
                } else {
                    stack.append(OpenContainer(isObject: false))
                    continue nextValue
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            default:
                throw .unexpectedCharacter(offset: pos, found: byte, expected: "a value")
            }

            // `value` is complete: attach it to the innermost open container, closing
            // containers as long as their closing bracket follows.
            while true {
                guard !stack.isEmpty else {
                    skipWhitespace()
                    if pos < bytes.count { throw .trailingData(offset: pos) }
                    return value
                }
                let top = stack.count - 1
                let isObject = stack[top].isObject
                if isObject {
                    stack[top].addMember(value)
                } else {
                    stack[top].elements.append(value)
                }
                skipWhitespace()
                let expected = isObject ? "',' or '}'" : "',' or ']'"
                guard pos < bytes.count else { throw .unexpectedEnd(expected: expected) }
                let byte = bytes[pos]
                if byte == UInt8(ascii: ",") {
                    pos += 1
                    if isObject {
                        skipWhitespace()
                        try parseMemberKey(into: &stack[top])
                    }
                    continue nextValue
                }
                guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw .unexpectedCharacter(offset: pos, found: byte, expected: expected)
                }
                pos += 1
                let closed = stack.removeLast()
                value = isObject ? .object(closed.members) : .array(closed.elements)
            }
        }
    }

    /// Parses `"key" :` at `pos` (whitespace before it already skipped), rejecting a key that
    /// `container` already holds.
    mutating func parseMemberKey(into container: inout OpenContainer) throws(JSONError) {
        guard pos < bytes.count else { throw .unexpectedEnd(expected: "a string key") }
        guard bytes[pos] == UInt8(ascii: "\"") else {
            throw .unexpectedCharacter(offset: pos, found: bytes[pos], expected: "a string key")
        }
        let keyOffset = pos
        let key = try parseString()
        if container.contains(key: key) { throw .duplicateKey(key, offset: keyOffset) }
        container.pendingKey = key
        skipWhitespace()
        guard pos < bytes.count else { throw .unexpectedEnd(expected: "':'") }
        guard bytes[pos] == UInt8(ascii: ":") else {
            throw .unexpectedCharacter(offset: pos, found: bytes[pos], expected: "':'")
        }
        pos += 1
    }

    mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let expected = "'\(literal)'"
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        for i in 0..<count {
            guard pos < bytes.count else { throw .unexpectedEnd(expected: expected) }
            guard bytes[pos] == start[i] else {
                throw .unexpectedCharacter(offset: pos, found: bytes[pos], expected: expected)
            }
            pos += 1
        }
    }

    // MARK: Numbers

    /// Parses `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `pos`. An integer
    /// literal beyond ±2^53 that fits in 64 bits stays exact (``JSONValue/integer(_:)``);
    /// every other number is the correctly rounded `Double`.
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = pos
        var i = pos
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let integerStart = i
        guard i < bytes.count, isDigit(bytes[i]) else { throw .invalidNumber(offset: start) }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count && isDigit(bytes[i]) { throw .invalidNumber(offset: start) }
        } else {
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        let integerDigits = i - integerStart
        var isInteger = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let fractionStart = i
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
            if i == fractionStart { throw .invalidNumber(offset: start) }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) {
                i += 1
            }
            let exponentStart = i
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
            if i == exponentStart { throw .invalidNumber(offset: start) }
        }
        pos = i

        // Fast path: up to 15 digits fit exactly in both Int64 and Double.
        if isInteger && integerDigits <= 15 {
            var magnitude: Int64 = 0
            for j in integerStart..<i { magnitude = magnitude &* 10 &+ Int64(bytes[j] &- 0x30) }
            let d = Double(magnitude)
            return .number(negative ? -d : d)
        }
        // The grammar was checked above, so the stdlib's conversions only ever see plain
        // decimal text.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger, let exact = Int64(text) { return .integer(exactly: exact) }
        guard let d = Double(text) else { throw .invalidNumber(offset: start) }
        guard d.isFinite else { throw .numberOutOfRange(offset: start) }
        return .number(d)
    }

    @inline(__always)
    func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    // MARK: Strings

    /// Parses a string whose opening quote is at `pos`.
    mutating func parseString() throws(JSONError) -> String {
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
