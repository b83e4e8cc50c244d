// Token and Lexer: an expression string as tokens, each with its scalar offset.

/// One token of a rule expression.
enum Token: Equatable {
    case number(Double)
    case string(String)
    case identifier(String)
    /// A regular-expression literal `/pattern/flags`.
    case regex(pattern: String, flags: String)
    /// Punctuation or an operator: `( ) [ ] , . ? : ! + - * / % < <= > >= == != === !== && ||`.
    case symbol(String)
    case end
}

/// A token and the offset (in Unicode scalars) of its first character in the expression.
struct PositionedToken {
    let token: Token
    let offset: Int
}

/// An error found in an expression, at a scalar offset into it.
struct ExpressionError: Error {
    let message: String
    let offset: Int
}

/// Splits an expression into tokens. A `/` starts a regular-expression literal where an
/// operand is expected (at the start, after `(`, `,`, `[` or an operator) and is division
/// after an operand.
enum Lexer {
    static func tokens(_ text: String) throws(ExpressionError) -> [PositionedToken] {
        let s = Array(text.unicodeScalars)
        var out: [PositionedToken] = []
        var i = 0
        func operandExpected() -> Bool {
            guard let last = out.last?.token else { return true }
            switch last {
            case .number, .string, .identifier, .regex: return false
            case .symbol(let sym): return sym != ")" && sym != "]"
            case .end: return true
            }
        }
        while i < s.count {
            let c = s[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" { i += 1; continue }
            let start = i
            if c.properties.isAlphabetic || c == "_" || c == "$" {
                while i < s.count,
                    s[i].properties.isAlphabetic || s[i].properties.numericType != nil
                        || s[i] == "_" || s[i] == "$"
                { i += 1 }
                out.append(
                    PositionedToken(token: .identifier(String(String.UnicodeScalarView(s[start..<i]))), offset: start))
                continue
            }
            if ("0"..."9").contains(c) || (c == "." && i + 1 < s.count && ("0"..."9").contains(s[i + 1])) {
                while i < s.count, ("0"..."9").contains(s[i]) || s[i] == "." { i += 1 }
                if i < s.count, s[i] == "e" || s[i] == "E" {
                    i += 1
                    if i < s.count, s[i] == "+" || s[i] == "-" { i += 1 }
                    while i < s.count, ("0"..."9").contains(s[i]) { i += 1 }
                }
                let text = String(String.UnicodeScalarView(s[start..<i]))
                guard let d = Double(text), d.isFinite else {
                    throw ExpressionError(message: "malformed number \(text)", offset: start)
                }
                out.append(PositionedToken(token: .number(d), offset: start))
                continue
            }
            if c == "'" || c == "\"" {
                i += 1
                var value = String.UnicodeScalarView()
                while true {
                    guard i < s.count else {
                        throw ExpressionError(message: "unterminated string literal", offset: start)
                    }
                    let d = s[i]
                    if d == c { i += 1; break }
                    if d == "\\" {
                        guard i + 1 < s.count else {
                            throw ExpressionError(message: "unterminated string literal", offset: start)
                        }
                        switch s[i + 1] {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "r": value.append("\r")
                        default: value.append(s[i + 1])
                        }
                        i += 2
                        continue
                    }
                    value.append(d)
                    i += 1
                }
                out.append(PositionedToken(token: .string(String(value)), offset: start))
                continue
            }
            if c == "/" && operandExpected() {
                i += 1
                var pattern = String.UnicodeScalarView()
                var inClass = false
                while true {
                    // A regular expression literal ends on its line, whichever line break the
                    // rules file uses.
                    guard i < s.count, s[i] != "\n", s[i] != "\r" else {
                        throw ExpressionError(message: "unterminated regular expression", offset: start)
                    }
                    let d = s[i]
                    if d == "\\", i + 1 < s.count {
                        pattern.append(d); pattern.append(s[i + 1]); i += 2; continue
                    }
                    if d == "[" { inClass = true } else if d == "]" { inClass = false }
                    if d == "/" && !inClass { i += 1; break }
                    pattern.append(d)
                    i += 1
                }
                let flagsStart = i
                while i < s.count, s[i].properties.isAlphabetic { i += 1 }
                let flags = String(String.UnicodeScalarView(s[flagsStart..<i]))
                out.append(PositionedToken(token: .regex(pattern: String(pattern), flags: flags), offset: start))
                continue
            }
            let rest = String(String.UnicodeScalarView(s[i..<min(i + 3, s.count)]))
            var matched: String?
            for sym in [
                "===", "!==", "==", "!=", "<=", ">=", "&&", "||",
                "(", ")", "[", "]", ",", ".", "?", ":", "!", "+", "-", "*", "/", "%", "<", ">",
            ]
            where rest.hasPrefix(sym) {
                matched = sym
                break
            }
            guard let sym = matched else {
                let message =
                    c == "="
                    ? "assignment '=' is not allowed (compare with === or ==)"
                    : "unexpected character '\(c)'"
                throw ExpressionError(message: message, offset: start)
            }
            out.append(PositionedToken(token: .symbol(sym), offset: start))
            i += sym.unicodeScalars.count
        }
        out.append(PositionedToken(token: .end, offset: s.count))
        return out
    }
}
