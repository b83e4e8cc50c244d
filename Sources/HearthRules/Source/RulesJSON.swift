// RulesJSON: the rules file's JSON as Firebase reads it, every value tagged with its position.

/// A JSON value from the rules file, with the position of its first character. Strings also
/// keep the position of each decoded scalar, so that an error inside an expression points at
/// the exact column in the file even when the string holds escapes.
indirect enum RulesJSON {
    case null(SourcePosition)
    case bool(Bool, SourcePosition)
    case number(Double, SourcePosition)
    /// The decoded string and, for each of its scalars (plus one for its closing quote), the
    /// position in the file.
    case string(String, [SourcePosition])
    case array([RulesJSON], SourcePosition)
    /// Members in document order, a repeated key included (the compiler refuses it, where it
    /// knows the rule path); `keyPosition` is the key's opening quote.
    case object([(key: String, keyPosition: SourcePosition, value: RulesJSON)], SourcePosition)

    var position: SourcePosition {
        switch self {
        case let .null(p), let .bool(_, p), let .number(_, p), let .array(_, p), let .object(_, p): p
        case let .string(_, ps): ps[0]
        }
    }

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON parser for rules files as Firebase's server reads them (the CLI and the emulator send
/// the file's text unparsed): RFC 8259 plus `//` line and `/* */` block comments, line breaks
/// and tabs inside string values (so an expression can span lines, as Firebase's documentation
/// prints some), and a trailing comma after the last member of an object or array.
/// Iterative over arrays and objects would be overkill here: nesting is bounded by
/// ``maxDepth`` (rules paths cannot be deeper than Firebase's 32 levels anyway).
struct RulesJSONParser {
    static let maxDepth = 64

    private let source: SourceText
    private var i = 0

    init(source: SourceText) { self.source = source }

    private var s: [Unicode.Scalar] { source.scalars }

    private func fail(_ message: String, at index: Int? = nil) -> RulesError {
        let p = source.position(of: index ?? i)
        return .syntax(message: message, line: p.line, column: p.column)
    }

    /// Parses one complete document.
    mutating func parseDocument() throws(RulesError) -> RulesJSON {
        try skipTrivia()
        let value = try parseValue(depth: 0)
        try skipTrivia()
        if i < s.count { throw fail("unexpected '\(s[i])' after the JSON document") }
        return value
    }

    private mutating func skipTrivia() throws(RulesError) {
        while i < s.count {
            let c = s[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{FEFF}" {
                i += 1
            } else if c == "/", i + 1 < s.count, s[i + 1] == "/" {
                while i < s.count && s[i] != "\n" && s[i] != "\r" { i += 1 }
            } else if c == "/", i + 1 < s.count, s[i + 1] == "*" {
                let start = i
                i += 2
                while i + 1 < s.count && !(s[i] == "*" && s[i + 1] == "/") { i += 1 }
                if i + 1 >= s.count { throw fail("unterminated /* comment", at: start) }
                i += 2
            } else {
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(RulesError) -> RulesJSON {
        assert(depth <= Self.maxDepth, "arrays and objects refuse to nest past the limit before recursing")
        guard i < s.count else { throw fail("the file ended where a value was expected") }
        let start = source.position(of: i)
        switch s[i] {
        case "{": return try parseObject(depth: depth)
        case "[": return try parseArray(depth: depth)
        case "\"":
            let (text, positions) = try parseString(allowsLineBreaks: true)
            return .string(text, positions)
        case "t": try expectWord("true"); return .bool(true, start)
        case "f": try expectWord("false"); return .bool(false, start)
        case "n": try expectWord("null"); return .null(start)
        case "-", "0"..."9": return .number(try parseNumber(), start)
        default: throw fail("unexpected '\(s[i])' where a value was expected")
        }
    }

    private mutating func expectWord(_ word: String) throws(RulesError) {
        let start = i
        for w in word.unicodeScalars {
            guard i < s.count, s[i] == w else { throw fail("invalid literal (expected \(word))", at: start) }
            i += 1
        }
    }

    private mutating func parseNumber() throws(RulesError) -> Double {
        let start = i
        while i < s.count, "+-0123456789.eE".unicodeScalars.contains(s[i]) { i += 1 }
        let text = String(String.UnicodeScalarView(s[start..<i]))
        guard let d = Double(text), d.isFinite else { throw fail("malformed number \(text)", at: start) }
        return d
    }

    /// A string from its opening quote. `allowsLineBreaks`: a raw line feed, carriage return or
    /// tab is part of the value (a string value may span lines in Firebase's format; a key may
    /// not, and no key may hold a control character anyway). Other control characters are
    /// refused everywhere.
    private mutating func parseString(allowsLineBreaks: Bool) throws(RulesError) -> (String, [SourcePosition]) {
        // A string may span lines, so the end of the file can be far from where a missing
        // closing quote belongs: point at the opening one.
        let opening = i
        i += 1
        var out = String.UnicodeScalarView()
        var positions: [SourcePosition] = []
        while true {
            guard i < s.count else { throw fail("unterminated string", at: opening) }
            let c = s[i]
            let here = source.position(of: i)
            if c == "\"" {
                positions.append(here)
                i += 1
                return (String(out), positions)
            }
            if c.value < 0x20 && !(allowsLineBreaks && (c == "\n" || c == "\r" || c == "\t")) {
                throw fail(
                    c == "\n" || c == "\r"
                        ? "line break in a key (a key must be on one line)"
                        : "control character in a string (escape it)")
            }
            if c != "\\" {
                out.append(c)
                positions.append(here)
                i += 1
                continue
            }
            guard i + 1 < s.count else { throw fail("unterminated string", at: opening) }
            let e = s[i + 1]
            var decoded: Unicode.Scalar
            switch e {
            case "\"": decoded = "\""
            case "\\": decoded = "\\"
            case "/": decoded = "/"
            case "b": decoded = "\u{08}"
            case "f": decoded = "\u{0C}"
            case "n": decoded = "\n"
            case "r": decoded = "\r"
            case "t": decoded = "\t"
            case "u":
                var code = try hex4(at: i + 2)
                var length = 6
                if (0xD800...0xDBFF).contains(code) {
                    guard i + 7 < s.count, s[i + 6] == "\\", s[i + 7] == "u" else {
                        throw fail("lone UTF-16 surrogate in \\u escape")
                    }
                    let low = try hex4(at: i + 8)
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("mismatched UTF-16 surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    length = 12
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("lone UTF-16 surrogate in \\u escape") }
                out.append(scalar)
                positions.append(here)
                i += length
                continue
            default:
                throw fail("invalid escape \\\(e)")
            }
            out.append(decoded)
            positions.append(here)
            i += 2
        }
    }

    private func hex4(at index: Int) throws(RulesError) -> UInt32 {
        guard index + 4 <= s.count else { throw fail("\\u needs 4 hex digits", at: index) }
        var v: UInt32 = 0
        for k in index..<(index + 4) {
            guard let d = Int(String(s[k]), radix: 16) else { throw fail("\\u needs 4 hex digits", at: k) }
            v = v * 16 + UInt32(d)
        }
        return v
    }

    private mutating func parseArray(depth: Int) throws(RulesError) -> RulesJSON {
        let start = source.position(of: i)
        if depth >= Self.maxDepth { throw fail("nested deeper than \(Self.maxDepth) levels") }
        i += 1
        var items: [RulesJSON] = []
        try skipTrivia()
        if i < s.count, s[i] == "]" { i += 1; return .array(items, start) }
        while true {
            try skipTrivia()
            items.append(try parseValue(depth: depth + 1))
            try skipTrivia()
            guard i < s.count else { throw fail("unterminated array") }
            if s[i] == "]" { i += 1; return .array(items, start) }
            guard s[i] == "," else { throw fail("expected ',' or ']' in an array") }
            i += 1
            try skipTrivia()
            // A trailing comma: Firebase accepts `[a, b,]`.
            if i < s.count, s[i] == "]" { i += 1; return .array(items, start) }
        }
    }

    private mutating func parseObject(depth: Int) throws(RulesError) -> RulesJSON {
        let start = source.position(of: i)
        if depth >= Self.maxDepth { throw fail("nested deeper than \(Self.maxDepth) levels") }
        i += 1
        var members: [(key: String, keyPosition: SourcePosition, value: RulesJSON)] = []
        try skipTrivia()
        if i < s.count, s[i] == "}" { i += 1; return .object(members, start) }
        while true {
            try skipTrivia()
            guard i < s.count, s[i] == "\"" else { throw fail("expected a quoted key in an object") }
            let keyStart = i
            let (key, _) = try parseString(allowsLineBreaks: false)
            try skipTrivia()
            guard i < s.count, s[i] == ":" else { throw fail("expected ':' after the key \"\(key)\"") }
            i += 1
            try skipTrivia()
            let value = try parseValue(depth: depth + 1)
            members.append((key, source.position(of: keyStart), value))
            try skipTrivia()
            guard i < s.count else { throw fail("unterminated object") }
            if s[i] == "}" { i += 1; return .object(members, start) }
            guard s[i] == "," else { throw fail("expected ',' or '}' in an object") }
            i += 1
            try skipTrivia()
            // A trailing comma: Firebase accepts `{"a": 1,}`.
            if i < s.count, s[i] == "}" { i += 1; return .object(members, start) }
        }
    }
}
