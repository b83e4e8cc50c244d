// The reference of FuzzRules' differential check: a recursive-descent parser of Firebase's subset and
// a backtracking matcher with JavaScript's rules, written apart from HearthRules' engine (which compiles
// to an automaton) and kept simple; fine on the short patterns and strings the check gives it.

extension FuzzRegexReference {
    struct Refused: Error {}
    struct TooLong: Error {}

    /// The backtracking's steps and recursion depth, shared by every continuation of one match;
    /// past either bound the match gives up (`nil`), which the check skips.
    final class Steps {
        var count = 0
        var depth = 0

        func take() throws {
            count += 1
            if count > 200_000 || depth > 1_000 { throw TooLong() }
        }
    }

    indirect enum Term {
        case scalar(Unicode.Scalar)
        /// Ranges of scalar values, complemented when `negated`.
        case set([ClosedRange<UInt32>], negated: Bool)
        case sequence([Term])
        case alternation([Term])
        case repetition(Term, min: Int, max: Int?)
    }

    struct Reference {
        let root: Term
        let anchoredStart: Bool
        let anchoredEnd: Bool
        let ignoresCase: Bool

        init(pattern: String, flags: String) throws {
            guard flags == "" || flags == "i" else { throw Refused() }
            ignoresCase = flags == "i"
            var parser = Parser(s: Array(pattern.unicodeScalars))
            (root, anchoredStart, anchoredEnd) = try parser.parse()
        }

        /// Whether the pattern matches somewhere in `s` (JavaScript's `test`), or `nil` when the
        /// backtracking took too many steps to say.
        func matches(_ s: [Unicode.Scalar]) -> Bool? {
            let steps = Steps()
            do {
                for start in anchoredStart ? [0] : Array(0...s.count) {
                    if try match(root, s, start, steps, { end in !anchoredEnd || end == s.count }) { return true }
                }
                return false
            } catch {
                return nil
            }
        }

        /// Whether `node` matches at `i` with the rest (`k`) matching after it.
        private func match(
            _ node: Term, _ s: [Unicode.Scalar], _ i: Int, _ steps: Steps, _ k: (Int) throws -> Bool
        ) throws -> Bool {
            try steps.take()
            steps.depth += 1
            defer { steps.depth -= 1 }
            switch node {
            case .scalar(let c):
                guard i < s.count, ignoresCase ? canonical(s[i]) == canonical(c) : s[i] == c else { return false }
                return try k(i + 1)
            case let .set(ranges, negated):
                guard i < s.count, inClass(s[i], ranges) != negated else { return false }
                return try k(i + 1)
            case .sequence(let items):
                return try sequence(items[...], s, i, steps, k)
            case .alternation(let branches):
                for branch in branches where try match(branch, s, i, steps, k) { return true }
                return false
            case let .repetition(operand, min, max):
                return try repetition(operand, min, max, 0, s, i, steps, k)
            }
        }

        private func sequence(
            _ items: ArraySlice<Term>, _ s: [Unicode.Scalar], _ i: Int, _ steps: Steps, _ k: (Int) throws -> Bool
        ) throws -> Bool {
            guard let first = items.first else { return try k(i) }
            return try match(first, s, i, steps) { j in try sequence(items.dropFirst(), s, j, steps, k) }
        }

        /// `operand` repeated between `min` and `max` times, `count` done so far; an iteration past
        /// the minimum that matches nothing fails (JavaScript's rule, which also ends ε-loops).
        private func repetition(
            _ operand: Term, _ min: Int, _ max: Int?, _ count: Int, _ s: [Unicode.Scalar], _ i: Int,
            _ steps: Steps, _ k: (Int) throws -> Bool
        ) throws -> Bool {
            if count >= min, try k(i) { return true }
            if let max, count >= max { return false }
            return try match(operand, s, i, steps) { j in
                if j == i && count >= min { return false }
                return try repetition(operand, min, max, count + 1, s, j, steps, k)
            }
        }

        /// Class membership; under `i`, whether the class holds any scalar of the same canonical
        /// form (every such scalar of the Basic Multilingual Plane, found by brute force).
        private func inClass(_ c: Unicode.Scalar, _ ranges: [ClosedRange<UInt32>]) -> Bool {
            let candidates = ignoresCase ? FuzzRegexReference.orbit(of: c) : [c.value]
            return candidates.contains { v in ranges.contains { $0.contains(v) } }
        }
    }

    /// JavaScript's Canonicalize without the `u` flag: the uppercase, if it is one scalar and does
    /// not take a non-ASCII scalar to ASCII.
    static func canonical(_ c: Unicode.Scalar) -> Unicode.Scalar {
        let upper = Array(String(Character(c)).uppercased().unicodeScalars)
        guard upper.count == 1, !(c.value >= 128 && upper[0].value < 128) else { return c }
        return upper[0]
    }

    /// The scalars (of the BMP) whose canonical form is that of a scalar of the alphabet or of a
    /// pattern literal, by canonical form; computed once.
    static let orbits: [UInt32: [UInt32]] = {
        var orbits: [UInt32: [UInt32]] = [:]
        for v in UInt32(0)...0xFFFF {
            guard let c = Unicode.Scalar(v) else { continue }
            orbits[canonical(c).value, default: []].append(v)
        }
        return orbits
    }()

    static func orbit(of c: Unicode.Scalar) -> [UInt32] {
        orbits[canonical(c).value] ?? [c.value]
    }

    /// The subset's grammar, by recursive descent.
    struct Parser {
        let s: [Unicode.Scalar]
        var i = 0
        var depth = 0

        mutating func parse() throws -> (Term, Bool, Bool) {
            let start = s.first == "^"
            if start { i = 1 }
            let (node, branches) = try alternation(top: true)
            var end = false
            if i < s.count {
                guard s[i] == "$", i == s.count - 1 else { throw Refused() }
                end = true
            }
            if (start || end) && branches > 1 { throw Refused() }
            return (node, start, end)
        }

        mutating func alternation(top: Bool) throws -> (Term, Int) {
            var branches = [try sequence(top: top)]
            while i < s.count, s[i] == "|" {
                i += 1
                branches.append(try sequence(top: top))
            }
            return (branches.count == 1 ? branches[0] : .alternation(branches), branches.count)
        }

        mutating func sequence(top: Bool) throws -> Term {
            var items: [Term] = []
            while i < s.count, s[i] != "|", s[i] != ")", !(top && s[i] == "$" && i == s.count - 1) {
                var item = try atom()
                if let (min, max) = try quantifier() {
                    item = .repetition(item, min: min, max: max)
                    if i < s.count, "*+?{".unicodeScalars.contains(s[i]) { throw Refused() }
                }
                items.append(item)
            }
            guard !items.isEmpty else { throw Refused() }
            return items.count == 1 ? items[0] : .sequence(items)
        }

        mutating func atom() throws -> Term {
            let c = s[i]
            i += 1
            switch c {
            case "(":
                guard i < s.count, s[i] != "?", depth < 64 else { throw Refused() }
                depth += 1
                let (node, _) = try alternation(top: false)
                guard i < s.count, s[i] == ")" else { throw Refused() }
                i += 1
                depth -= 1
                return node
            case "[": return try characterClass()
            case ".": return .set([0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029], negated: true)
            case "\\":
                let (ranges, negated, scalar) = try escape()
                return scalar.map(Term.scalar) ?? .set(ranges, negated: negated)
            case "*", "+", "?", "{", "^", "$": throw Refused()
            default: return .scalar(c)
            }
        }

        /// After a `\`: a class (ranges, negated) or a literal scalar.
        mutating func escape() throws -> ([ClosedRange<UInt32>], Bool, Unicode.Scalar?) {
            guard i < s.count else { throw Refused() }
            let c = s[i]
            i += 1
            let digit: [ClosedRange<UInt32>] = [48...57]
            let word: [ClosedRange<UInt32>] = [48...57, 65...90, 95...95, 97...122]
            let space: [ClosedRange<UInt32>] = [
                9...13, 32...32, 160...160, 5760...5760, 8192...8202, 8232...8233, 8239...8239, 8287...8287,
                12288...12288, 65279...65279,
            ]
            switch c {
            case "d": return (digit, false, nil)
            case "D": return (digit, true, nil)
            case "w": return (word, false, nil)
            case "W": return (word, true, nil)
            case "s": return (space, false, nil)
            case "S": return (space, true, nil)
            default:
                if c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)) {
                    throw Refused()
                }
                return ([], false, c)
            }
        }

        mutating func quantifier() throws -> (Int, Int?)? {
            guard i < s.count else { return nil }
            switch s[i] {
            case "*": i += 1; return (0, nil)
            case "+": i += 1; return (1, nil)
            case "?": i += 1; return (0, 1)
            case "{":
                i += 1
                guard let min = number() else { throw Refused() }
                var max: Int? = min
                if i < s.count, s[i] == "," {
                    i += 1
                    max = number()
                }
                guard i < s.count, s[i] == "}" else { throw Refused() }
                i += 1
                guard min <= 1000, (max ?? min) <= 1000, (max ?? min) >= min else { throw Refused() }
                return (min, max)
            default: return nil
            }
        }

        mutating func number() -> Int? {
            var digits = ""
            while i < s.count, ("0"..."9").contains(s[i]) {
                if digits.count < 9 { digits.unicodeScalars.append(s[i]) }
                i += 1
            }
            return Int(digits)
        }

        mutating func characterClass() throws -> Term {
            let negated = i < s.count && s[i] == "^"
            if negated { i += 1 }
            guard i < s.count, s[i] != "]" else { throw Refused() }
            var ranges: [ClosedRange<UInt32>] = []
            while i < s.count, s[i] != "]" {
                let low = try classAtom()
                if i + 1 < s.count, s[i] == "-", s[i + 1] != "]" {
                    i += 1
                    let high = try classAtom()
                    guard case .scalar(let a) = low, case .scalar(let b) = high, a.value <= b.value else {
                        throw Refused()
                    }
                    ranges.append(a.value...b.value)
                } else if case .scalar(let a) = low {
                    ranges.append(a.value...a.value)
                } else if case let .set(r, negated) = low {
                    ranges += negated ? complement(r) : r
                }
            }
            guard i < s.count else { throw Refused() }
            i += 1
            return .set(ranges, negated: negated)
        }

        mutating func classAtom() throws -> Term {
            let c = s[i]
            i += 1
            guard c == "\\" else { return .scalar(c) }
            let (ranges, negated, scalar) = try escape()
            return scalar.map(Term.scalar) ?? .set(ranges, negated: negated)
        }

        func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
            var out: [ClosedRange<UInt32>] = []
            var next: UInt32 = 0
            for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
                next = max(next, r.upperBound + 1)
            }
            out.append(next...0x10FFFF)
            return out
        }
    }
}
