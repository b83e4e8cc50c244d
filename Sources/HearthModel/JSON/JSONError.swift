// JSONError: why a JSON text was rejected, with the byte offset of the problem and its line and column.

/// Why a JSON text was rejected by `JSONValue.parse(_:maxDepth:)`.
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
