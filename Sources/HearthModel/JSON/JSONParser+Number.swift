// JSONParser+Number: the JSON number grammar and its conversion to an exact integer or a Double.

extension JSONParser {
    /// Parses `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `pos`. An integer
    /// literal beyond ±2^53 that fits in 64 bits stays exact (``JSONValue/integer(_:)``);
    /// every other number is the correctly rounded `Double`.
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        assert(
            pos < bytes.count && (bytes[pos] == UInt8(ascii: "-") || isDigit(bytes[pos])),
            "parseNumber starts at the '-' or digit its caller dispatched on")
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
        assert(i > start && i <= bytes.count, "a number is at least one byte and ends within the input")
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
}
