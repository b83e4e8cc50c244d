// RegexSyntax: a `matches()` pattern → a tree, accepting exactly the subset Firebase documents
// and refusing everything else with the offending scalar's offset.

/// A parsed regular expression.
indirect enum RegexNode: Sendable, Hashable {
    /// One scalar, as written (case folding is the compiler's business).
    case scalar(Unicode.Scalar)
    /// A class, `.`, or `\d \w \s \D \W \S`.
    case set(ScalarSet)
    case sequence([RegexNode])
    case alternation([RegexNode])
    /// `*` `+` `?` `{n}` `{n,}` `{n,m}`; `max` is `nil` when unbounded.
    case repetition(RegexNode, min: Int, max: Int?)
}

/// A pattern refused at load: why, and the offset (in scalars) into the pattern.
struct RegexSyntaxError: Error, Hashable {
    let message: String
    let offset: Int
}

/// A whole pattern: its tree, and whether `^` and `$` anchor it.
///
/// The dialect is Firebase's (its "regular expressions" reference for `matches()`):
/// - `^` only as the pattern's first character and `$` only as its last (elsewhere, escape
///   them); with either, alternatives at the top level must be grouped, `^(a|b)$`, since
///   JavaScript would anchor only the first or last alternative of `^a|b$`;
/// - `.`, `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` (n ≤ m ≤ ``maxRepetition``), `( )`, `|`, classes
///   `[abc]` `[a-z]` `[^…]` (with `\d \w \s \D \W \S` and escapes inside), and outside classes
///   `\d \w \s \D \W \S`;
/// - `\` before any other character that is not a letter or digit matches that character
///   (`\.`, `\/`, `\\`, `\$`, `\{`); `]` and `}` alone match themselves, as in JavaScript.
///
/// Refused: an empty pattern, group, alternative or class; `(?…)`; a quantifier with nothing to
/// repeat or after another quantifier (`a**`, lazy `a+?`); a `{` that does not start a
/// repetition; escapes of letters and digits other than the six classes (`\b`, `\n`, `\1`,
/// `\u0041`: Firebase documents only literal escapes, JavaScript gives these other meanings);
/// a range with a class at an end or out of order.
struct RegexSyntax: Sendable, Hashable {
    let root: RegexNode
    let anchoredStart: Bool
    let anchoredEnd: Bool

    /// The largest bound of a counted repetition.
    static let maxRepetition = 1000

    /// Parses `pattern` with groups nested at most `maxDepth` deep, without recursion.
    init(_ pattern: [Unicode.Scalar], maxDepth: Int) throws(RegexSyntaxError) {
        var parser = RegexParser(s: pattern, maxDepth: maxDepth)
        (root, anchoredStart, anchoredEnd) = try parser.parse()
    }
}

private struct RegexParser {
    let s: [Unicode.Scalar]
    let maxDepth: Int
    var i = 0
    var end = 0

    /// One open group (the outermost is the pattern itself).
    struct Frame {
        let open: Int
        var alternatives: [RegexNode] = []
        var items: [RegexNode] = []
        /// Whether the last item already carries a quantifier.
        var quantified = false
    }

    init(s: [Unicode.Scalar], maxDepth: Int) {
        self.s = s
        self.maxDepth = maxDepth
    }

    func fail(_ message: String, at offset: Int) -> RegexSyntaxError {
        RegexSyntaxError(message: message, offset: offset)
    }

    mutating func parse() throws(RegexSyntaxError) -> (RegexNode, Bool, Bool) {
        let anchoredStart = !s.isEmpty && s[0] == "^"
        i = anchoredStart ? 1 : 0
        end = s.count
        var anchoredEnd = false
        if end > i, s[end - 1] == "$" {
            var backslashes = 0
            while end - 2 - backslashes >= 0, s[end - 2 - backslashes] == "\\" { backslashes += 1 }
            if backslashes % 2 == 0 {
                anchoredEnd = true
                end -= 1
            }
        }
        if i == end { throw fail("empty regular expression", at: 0) }
        var frames = [Frame(open: -1)]
        var topLevelBar: Int?
        while i < end {
            let c = s[i]
            let at = i
            i += 1
            switch c {
            case "(":
                if i < end, s[i] == "?" {
                    throw fail(
                        "(?…) groups are not in Firebase's regular expressions (escape a literal '(' as \\()", at: at)
                }
                if frames.count > maxDepth {
                    throw fail("groups nested deeper than \(maxDepth) levels", at: at)
                }
                frames.append(Frame(open: at))
            case ")":
                guard frames.count > 1 else { throw fail("unmatched ')' (escape a literal one as \\))", at: at) }
                let frame = frames.removeLast()
                append(try finish(frame, at: at), to: &frames[frames.count - 1])
            case "|":
                try endAlternative(&frames[frames.count - 1], at: at)
                if frames.count == 1, topLevelBar == nil { topLevelBar = at }
            case "*": try quantify(&frames[frames.count - 1], 0, nil, at: at)
            case "+": try quantify(&frames[frames.count - 1], 1, nil, at: at)
            case "?": try quantify(&frames[frames.count - 1], 0, 1, at: at)
            case "{":
                let (min, max) = try repetitionBounds(at: at)
                try quantify(&frames[frames.count - 1], min, max, at: at)
            case "^":
                throw fail("'^' anchors only as the pattern's first character (escape a literal one as \\^)", at: at)
            case "$":
                throw fail("'$' anchors only as the pattern's last character (escape a literal one as \\$)", at: at)
            case ".": append(.set(.dot), to: &frames[frames.count - 1])
            case "[": append(.set(try characterClass(at: at)), to: &frames[frames.count - 1])
            case "\\":
                let node: RegexNode
                switch try escape(at: at) {
                case .scalar(let scalar): node = .scalar(scalar)
                case .set(let ranges, let negated): node = .set(ScalarSet(ranges, negated: negated))
                }
                append(node, to: &frames[frames.count - 1])
            default:
                append(.scalar(c), to: &frames[frames.count - 1])
            }
        }
        if frames.count > 1 { throw fail("unterminated group: '(' is never closed", at: frames[frames.count - 1].open) }
        if let bar = topLevelBar, anchoredStart || anchoredEnd {
            throw fail(
                "with ^ or $, put the alternatives in a group, like ^(a|b)$ (JavaScript would anchor only the first or last)",
                at: bar)
        }
        return (try finish(frames[0], at: end), anchoredStart, anchoredEnd)
    }

    func append(_ node: RegexNode, to frame: inout Frame) {
        frame.items.append(node)
        frame.quantified = false
    }

    func endAlternative(_ frame: inout Frame, at offset: Int) throws(RegexSyntaxError) {
        guard !frame.items.isEmpty else {
            throw fail("empty alternative: '|' needs a pattern on each side", at: offset)
        }
        frame.alternatives.append(frame.items.count == 1 ? frame.items[0] : .sequence(frame.items))
        frame.items = []
    }

    /// The frame's node, once its closing `)` (or the pattern's end) is at `offset`.
    func finish(_ frame: Frame, at offset: Int) throws(RegexSyntaxError) -> RegexNode {
        if frame.items.isEmpty && frame.alternatives.isEmpty {
            throw fail(frame.open < 0 ? "empty regular expression" : "empty group ()", at: max(frame.open, 0))
        }
        var frame = frame
        try endAlternative(&frame, at: offset)
        return frame.alternatives.count == 1 ? frame.alternatives[0] : .alternation(frame.alternatives)
    }

    func quantify(_ frame: inout Frame, _ min: Int, _ max: Int?, at offset: Int) throws(RegexSyntaxError) {
        guard let last = frame.items.last else {
            throw fail("'\(s[offset])' has nothing to repeat (escape a literal one as \\\(s[offset]))", at: offset)
        }
        if frame.quantified {
            throw fail("a quantifier cannot follow another (lazy quantifiers like +? are not supported)", at: offset)
        }
        frame.items[frame.items.count - 1] = .repetition(last, min: min, max: max)
        frame.quantified = true
    }

    /// `{n}`, `{n,}` or `{n,m}` after the `{` at `open`; `i` is past the `{`.
    mutating func repetitionBounds(at open: Int) throws(RegexSyntaxError) -> (Int, Int?) {
        let bad = fail("'{' must start a repetition {n}, {n,} or {n,m} (escape a literal one as \\{)", at: open)
        guard let min = number() else { throw bad }
        var max: Int? = min
        if i < end, s[i] == "," {
            i += 1
            max = number()
        }
        guard i < end, s[i] == "}" else { throw bad }
        i += 1
        if let max, max < min {
            throw fail("the repetition {\(min),\(max)} has its bounds out of order", at: open)
        }
        if min > RegexSyntax.maxRepetition || (max ?? 0) > RegexSyntax.maxRepetition {
            throw fail("a repetition bound is over \(RegexSyntax.maxRepetition)", at: open)
        }
        return (min, max)
    }

    /// The decimal number at `i`, if any (capped, so a long run of digits cannot overflow).
    mutating func number() -> Int? {
        var value: Int?
        while i < end, let digit = asciiDigit(s[i]) {
            value = min((value ?? 0) * 10 + digit, 1_000_000)
            i += 1
        }
        return value
    }

    func asciiDigit(_ c: Unicode.Scalar) -> Int? {
        (0x30...0x39).contains(c.value) ? Int(c.value - 0x30) : nil
    }

    enum Escape {
        case scalar(Unicode.Scalar)
        case set([ClosedRange<UInt32>], negated: Bool)
    }

    /// The escape whose `\` is at `at`; `i` is past the `\`.
    mutating func escape(at: Int) throws(RegexSyntaxError) -> Escape {
        guard i < end else { throw fail("the pattern ends with a lone '\\'", at: at) }
        let c = s[i]
        i += 1
        switch c {
        case "d": return .set(ScalarSet.digits, negated: false)
        case "w": return .set(ScalarSet.word, negated: false)
        case "s": return .set(ScalarSet.space, negated: false)
        case "D": return .set(ScalarSet.digits, negated: true)
        case "W": return .set(ScalarSet.word, negated: true)
        case "S": return .set(ScalarSet.space, negated: true)
        default:
            if c.isASCII, c.properties.isAlphabetic || asciiDigit(c) != nil {
                throw fail(
                    "\\\(c) is not in Firebase's regular expressions (only \\d \\w \\s \\D \\W \\S, and \\ before punctuation)",
                    at: at)
            }
            return .scalar(c)
        }
    }

    /// The class whose `[` is at `open`; `i` is past the `[`.
    mutating func characterClass(at open: Int) throws(RegexSyntaxError) -> ScalarSet {
        var negated = false
        if i < end, s[i] == "^" {
            negated = true
            i += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        if i < end, s[i] == "]" { throw fail("empty class [] (escape a literal ']' as \\])", at: open) }
        while true {
            guard i < end else { throw fail("unterminated class: '[' is never closed", at: open) }
            if s[i] == "]" {
                i += 1
                return ScalarSet(ranges, negated: negated)
            }
            let lowAt = i
            let low = try classAtom()
            guard i + 1 < end, s[i] == "-", s[i + 1] != "]" else {
                ranges += low.ranges
                continue
            }
            i += 1
            let highAt = i
            let high = try classAtom()
            guard case .scalar(let a) = low.escape, case .scalar(let b) = high.escape else {
                throw fail("a range cannot have a class (\\d \\w \\s …) at an end", at: lowAt)
            }
            guard a.value <= b.value else {
                throw fail("the range \(a)-\(b) is out of order", at: highAt)
            }
            ranges.append(a.value...b.value)
        }
    }

    /// One member of a class: a scalar, an escaped scalar, or a class escape.
    mutating func classAtom() throws(RegexSyntaxError) -> (escape: Escape, ranges: [ClosedRange<UInt32>]) {
        let at = i
        let c = s[i]
        i += 1
        let atom: Escape = c == "\\" ? try escape(at: at) : .scalar(c)
        switch atom {
        case .scalar(let scalar): return (atom, [scalar.value...scalar.value])
        case .set(let ranges, let negated):
            return (atom, negated ? ScalarSet.complement(ScalarSet.normalized(ranges)) : ranges)
        }
    }
}
