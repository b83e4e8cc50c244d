// JSONParser: the iterative RFC 8259 parser over one UTF-8 buffer — its state, the structure (values,
// arrays, objects, member keys), whitespace and literals. Numbers and strings are in JSONParser+Number
// and JSONParser+String.

/// The parser state over one UTF-8 buffer.
///
/// Invariant: `pos` is always in `0...bytes.count`; every read checks `pos < bytes.count`.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// True when the bytes come from a Swift `String` and are known to be valid UTF-8.
    let trustedUTF8: Bool
    var pos = 0
    /// Reused buffer for decoding strings that contain escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, trustedUTF8: Bool) {
        assert(maxDepth >= 0, "the depth limit is clamped to zero or more by JSONValue.parse")
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.trustedUTF8 = trustedUTF8
    }

    // MARK: Structure

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        var stack: [OpenContainer] = []
        var value: JSONValue

        nextValue: while true {
            assert(stack.count <= maxDepth, "no more than maxDepth containers are open")
            assert(pos <= bytes.count, "the position never passes the end of the input")
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
                assert(pos <= bytes.count, "a complete value ends at or before the end of the input")
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
}
