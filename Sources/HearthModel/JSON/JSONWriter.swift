// JSONWriter: compact RFC 8259 serialization of JSONValue.

extension JSONValue {
    /// The value as compact JSON text (no insignificant whitespace).
    ///
    /// - Numbers: a whole number with magnitude below 2^53 prints without a fraction
    ///   (`4`, `-12`; `-0.0` prints `0`); any other finite number prints Swift's shortest
    ///   round-tripping form (`4.5623`, `1e-07`, `1e+300`); NaN and ±infinity print `null`.
    /// - Strings: `"` and `\` are escaped, control characters U+0000–U+001F print as
    ///   `\b \f \n \r \t` or `\u00XX`; everything else (including non-ASCII, U+2028/U+2029)
    ///   is raw UTF-8.
    /// - Parameter sortKeys: If true, each object's members print in ascending order of their
    ///   keys' UTF-16 code units (JavaScript's default sort order); otherwise in stored order.
    public func serialized(sortKeys: Bool = false) -> String {
        var buffer: [UInt8] = []
        write(to: &buffer, sortKeys: sortKeys)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Appends the compact JSON text of this value (see ``serialized(sortKeys:)``) to `buffer`
    /// as UTF-8 bytes.
    ///
    /// The writer recurses once per nesting level of the value; values produced by the parser
    /// are bounded by its `maxDepth`.
    public func write(to buffer: inout [UInt8], sortKeys: Bool = false) {
        switch self {
        case .null:
            buffer.append(contentsOf: "null".utf8)
        case .bool(let b):
            buffer.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case .number(let d):
            JSONValue.writeNumber(d, to: &buffer)
        case .integer(let i):
            buffer.append(contentsOf: String(i).utf8)
        case .string(let s):
            JSONValue.writeString(s, to: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { buffer.append(UInt8(ascii: ",")) }
                element.write(to: &buffer, sortKeys: sortKeys)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members):
            let ordered = sortKeys ? JSONValue.sortedByUTF16(members) : members
            buffer.append(UInt8(ascii: "{"))
            for (i, member) in ordered.enumerated() {
                if i > 0 { buffer.append(UInt8(ascii: ",")) }
                JSONValue.writeString(member.key, to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                member.value.write(to: &buffer, sortKeys: sortKeys)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    /// Appends the compact JSON text of this value (see ``serialized(sortKeys:)``) to `string`.
    public func write(to string: inout String, sortKeys: Bool = false) {
        string.append(serialized(sortKeys: sortKeys))
    }

    /// `members` ordered by their keys' UTF-16 code units (JavaScript `Array.prototype.sort`
    /// order), not by Swift's `String <`.
    static func sortedByUTF16(_ members: [JSONMember]) -> [JSONMember] {
        members.sorted { $0.key.utf16.lexicographicallyPrecedes($1.key.utf16) }
    }

    /// 2^53: below this magnitude every whole `Double` is exactly an integer that prints as one.
    private static let exactIntegerLimit: Double = 9_007_199_254_740_992

    static func writeNumber(_ d: Double, to buffer: inout [UInt8]) {
        guard d.isFinite else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        guard d.magnitude < exactIntegerLimit, d.rounded(.towardZero) == d else {
            // The shortest round-tripping digits laid out as JavaScript lays them out
            // ("4.5623", "1e-7", "5e-324", "1.7976931348623157e+308", "12345678901234568"),
            // so Hearth's JSON and query identifiers match JSON.stringify's.
            buffer.append(contentsOf: javaScriptNumberText(d).utf8)
            return
        }
        // Exact conversion (|d| < 2^53); -0.0 becomes 0.
        var n = Int64(d)
        if n == 0 {
            buffer.append(UInt8(ascii: "0"))
            return
        }
        if n < 0 {
            buffer.append(UInt8(ascii: "-"))
            n = -n
        }
        let start = buffer.count
        while n > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(n % 10))
            n /= 10
        }
        buffer[start...].reverse()
    }

    static func writeString(_ s: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for i in bytes.indices {
                let byte = bytes[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                    continue
                }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                runStart = i + 1
                buffer.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
                case 0x08: buffer.append(UInt8(ascii: "b"))
                case 0x0C: buffer.append(UInt8(ascii: "f"))
                case 0x0A: buffer.append(UInt8(ascii: "n"))
                case 0x0D: buffer.append(UInt8(ascii: "r"))
                case 0x09: buffer.append(UInt8(ascii: "t"))
                default:
                    // byte < 0x20 here, so the high nibble is 0 or 1.
                    let low = byte & 0x0F
                    buffer.append(contentsOf: "u00".utf8)
                    buffer.append(UInt8(ascii: "0") + (byte >> 4))
                    buffer.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                }
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        buffer.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of the value, in stored member order (``serialized(sortKeys:)``).
    public var description: String { serialized() }
}
