// The regular expressions of `matches()`: Firebase's documented subset, matched as
// JavaScript's `RegExp.test` would, and everything outside it refused at load with its column.
import HearthModel
import Testing

@testable import HearthRules

/// One pattern against one input.
struct RegexRow: Sendable, CustomTestStringConvertible {
    let pattern: String
    var flags = ""
    let input: String
    let matches: Bool
    var testDescription: String { "/\(pattern)/\(flags) on \"\(input)\" → \(matches)" }
}

/// Compiles `/pattern/flags` as a rule would (default limits) and runs it with a large budget.
func regexMatches(_ pattern: String, _ flags: String = "", _ input: String) throws -> Bool {
    let limits = RulesSet.Limits()
    let regex = try RuleRegex(
        pattern: pattern, flags: flags, maxDepth: limits.maxExpressionDepth, maxStates: limits.maxRegexStates)
    var budget = StepBudget(limit: .max)
    return try regex.matches(input, budget: &budget)
}

/// Firebase's "regular expressions" reference, example by example.
let documentedRegexRows: [RegexRow] = [
    RegexRow(pattern: "a", input: "ba", matches: true),
    RegexRow(pattern: "^a", input: "ba", matches: false),
    RegexRow(pattern: "a", input: "ab", matches: true),
    RegexRow(pattern: "a$", input: "ab", matches: false),
    RegexRow(pattern: "^a*$", input: "", matches: true),
    RegexRow(pattern: "^a*$", input: "aaa", matches: true),
    RegexRow(pattern: "^a*$", input: "b", matches: false),
    RegexRow(pattern: "^a+$", input: "a", matches: true),
    RegexRow(pattern: "^a+$", input: "aaa", matches: true),
    RegexRow(pattern: "^a+$", input: "", matches: false),
    RegexRow(pattern: "^a?$", input: "", matches: true),
    RegexRow(pattern: "^a?$", input: "a", matches: true),
    RegexRow(pattern: "^a?$", input: "aa", matches: false),
    RegexRow(pattern: "........", input: "Firebase", matches: true),
    RegexRow(pattern: "(ab)*", input: "abab", matches: true),
    RegexRow(pattern: "a|bc", input: "ac", matches: true),
    RegexRow(pattern: "a|bc", input: "bc", matches: true),
    RegexRow(pattern: "[ABCDEF]", input: "xBx", matches: true),
    RegexRow(pattern: "[ABCDEF]", input: "xyz", matches: false),
    RegexRow(pattern: "[0-9A-F]+", input: "7F3A", matches: true),
    RegexRow(pattern: "^[0-9A-F]+$", input: "7G", matches: false),
    RegexRow(pattern: "[^0-9]", input: "123", matches: false),
    RegexRow(pattern: "[^0-9]", input: "12a", matches: true),
    RegexRow(pattern: "yes", flags: "i", input: "YES", matches: true),
    RegexRow(pattern: #"\\"#, input: #"a\b"#, matches: true),
    // The date, e-mail and URL examples of the usage section.
    RegexRow(
        pattern: #"^(19|20)[0-9][0-9][-\/. ](0[1-9]|1[012])[-\/. ](0[1-9]|[12][0-9]|3[01])$"#, input: "2024-02-29",
        matches: true),
    RegexRow(
        pattern: #"^(19|20)[0-9][0-9][-\/. ](0[1-9]|1[012])[-\/. ](0[1-9]|[12][0-9]|3[01])$"#, input: "2024/13/01",
        matches: false),
    RegexRow(
        pattern: #"^(19|20)[0-9][0-9][-\/. ](0[1-9]|1[012])[-\/. ](0[1-9]|[12][0-9]|3[01])$"#, input: "1899.01.01",
        matches: false),
    RegexRow(
        pattern: #"^[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,4}$"#, flags: "i", input: "alice@example.com", matches: true),
    RegexRow(pattern: #"^[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,4}$"#, flags: "i", input: "alice@example", matches: false),
    RegexRow(pattern: #"^[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,4}$"#, flags: "i", input: "a@b.museums", matches: false),
    RegexRow(
        pattern: #"^(ht|f)tp(s?):\/\/[0-9a-zA-Z]([-.\w]*[0-9a-zA-Z])*(\/?)([a-zA-Z0-9\-\.\?\,\'\/\\\+&=%\$#_]*)?$"#,
        input: "https://example.com/a?b=1&c=%20", matches: true),
    RegexRow(
        pattern: #"^(ht|f)tp(s?):\/\/[0-9a-zA-Z]([-.\w]*[0-9a-zA-Z])*(\/?)([a-zA-Z0-9\-\.\?\,\'\/\\\+&=%\$#_]*)?$"#,
        input: "https://exa mple.com", matches: false),
]

/// The rest of the dialect: what each construct means, JavaScript's way.
let semanticRegexRows: [RegexRow] = [
    // Anchors: only the ends of the string; `$` not before a final newline (JavaScript).
    RegexRow(pattern: "^ab$", input: "ab", matches: true),
    RegexRow(pattern: "^ab$", input: "abab", matches: false),
    RegexRow(pattern: "b$", input: "ab\n", matches: false),
    RegexRow(pattern: "^b", input: "a\nb", matches: false),
    // `.` is one scalar but no line terminator.
    RegexRow(pattern: "^.$", input: "😀", matches: true),
    RegexRow(pattern: "^..$", input: "😀", matches: false),
    RegexRow(pattern: "^.$", input: "\n", matches: false),
    RegexRow(pattern: "^.$", input: "\u{2028}", matches: false),
    RegexRow(pattern: "^.$", input: "\t", matches: true),
    // Classes: ranges, negation, escapes inside, `-` at the ends, a class escape inside.
    RegexRow(pattern: "^[a-c]+$", input: "abcabc", matches: true),
    RegexRow(pattern: "^[a-c]+$", input: "abcd", matches: false),
    RegexRow(pattern: "^[-a]+$", input: "-a-", matches: true),
    RegexRow(pattern: "^[a-]+$", input: "a-", matches: true),
    RegexRow(pattern: #"^[\]\\]+$"#, input: #"]\"#, matches: true),
    RegexRow(pattern: #"^[\d_]+$"#, input: "4_2", matches: true),
    RegexRow(pattern: #"^[^\d]+$"#, input: "abc", matches: true),
    RegexRow(pattern: #"^[^\d]+$"#, input: "ab1", matches: false),
    RegexRow(pattern: #"^[\D]+$"#, input: "ab", matches: true),
    RegexRow(pattern: "^[^a]$", input: "\n", matches: true),
    RegexRow(pattern: "^[é-ë]$", input: "ê", matches: true),
    // \d \w \s are JavaScript's: ASCII digits and word characters, Unicode spaces.
    RegexRow(pattern: #"^\d+$"#, input: "0123456789", matches: true),
    RegexRow(pattern: #"\d"#, input: "٣", matches: false),
    RegexRow(pattern: #"^\w+$"#, input: "a_Z9", matches: true),
    RegexRow(pattern: #"\w"#, input: "é", matches: false),
    RegexRow(pattern: #"^\s+$"#, input: " \t\n\u{A0}\u{2003}\u{FEFF}", matches: true),
    RegexRow(pattern: #"\s"#, input: "\u{85}", matches: false),
    RegexRow(pattern: #"^\S\W\D$"#, input: "x-y", matches: true),
    // Escaped punctuation is literal; `]` and `}` alone are literal.
    RegexRow(pattern: #"^\.\*\+\?\(\)\[\{\|\^\$\/$"#, input: ".*+?()[{|^$/", matches: true),
    RegexRow(pattern: #"\{foo}"#, input: "{foo}", matches: true),
    RegexRow(pattern: "^a]$", input: "a]", matches: true),
    // Alternation and groups.
    RegexRow(pattern: "^(cat|dog)s?$", input: "dogs", matches: true),
    RegexRow(pattern: "^(cat|dog)s?$", input: "cow", matches: false),
    RegexRow(pattern: "^((a|b)(c|d))+$", input: "adbcac", matches: true),
    RegexRow(pattern: "^(a*)*$", input: "aaa", matches: true),
    RegexRow(pattern: "^(a*)+b$", input: "aaab", matches: true),
    RegexRow(pattern: "^(a|ab)(c|bcd)(d*)$", input: "abcd", matches: true),
    // Counted repetition.
    RegexRow(pattern: "^a{3}$", input: "aaa", matches: true),
    RegexRow(pattern: "^a{3}$", input: "aa", matches: false),
    RegexRow(pattern: "^a{2,}$", input: "aaaaa", matches: true),
    RegexRow(pattern: "^a{2,}$", input: "a", matches: false),
    RegexRow(pattern: "^a{2,3}$", input: "aaaa", matches: false),
    RegexRow(pattern: "^(ab){1,2}$", input: "abab", matches: true),
    RegexRow(pattern: "^a{0}b$", input: "b", matches: true),
    RegexRow(pattern: "^x{0,0}$", input: "", matches: true),
    // Ignore case: JavaScript's canonical uppercase, classes included.
    RegexRow(pattern: "^[a-z]+$", flags: "i", input: "MiXeD", matches: true),
    RegexRow(pattern: "^[^a-z]$", flags: "i", input: "Q", matches: false),
    RegexRow(pattern: "^é$", flags: "i", input: "É", matches: true),
    RegexRow(pattern: "^σ$", flags: "i", input: "ς", matches: true),
    RegexRow(pattern: "^[σ]$", flags: "i", input: "Σ", matches: true),
    RegexRow(pattern: "^k$", flags: "i", input: "\u{212A}", matches: false),
    RegexRow(pattern: "^s$", flags: "i", input: "ſ", matches: false),
    RegexRow(pattern: #"^\w$"#, flags: "i", input: "ſ", matches: false),
    RegexRow(pattern: "^ß$", flags: "i", input: "SS", matches: false),
    RegexRow(pattern: "^abc$", input: "ABC", matches: false),
]

/// A `matches()` literal refused at load: the message, and the text (as it is in the file, with
/// backslashes doubled) its column points at.
func badRegex(_ literal: String, message: String, pointsAt: String) -> BadExpression {
    // The expression sits in a JSON string: its backslashes are escaped there.
    BadExpression(
        expression: "data.val().matches(\(literal.replacing("\\", with: "\\\\")))", message: message, pointsAt: pointsAt
    )
}

let badRegexes: [BadExpression] = [
    badRegex("/a/g", message: "flag 'g'", pointsAt: "g)"),
    badRegex("/a/ii", message: "flag i is given twice", pointsAt: "i)"),
    badRegex("/a^b/", message: "'^' anchors only as the pattern's first", pointsAt: "^b"),
    badRegex("/(^foo$|bar)/", message: "'^' anchors only", pointsAt: "^foo"),
    badRegex("/a$b/", message: "'$' anchors only as the pattern's last", pointsAt: "$b"),
    badRegex("/^a|b$/", message: "put the alternatives in a group", pointsAt: "|b$"),
    badRegex("/^(foo|)$/", message: "empty alternative", pointsAt: ")$"),
    badRegex("/a||b/", message: "empty alternative", pointsAt: "|b"),
    badRegex("/()/", message: "empty group", pointsAt: "()/"),
    badRegex("/^$/", message: "empty regular expression", pointsAt: "^$"),
    badRegex("/(a/", message: "unterminated group", pointsAt: "(a"),
    badRegex("/a)/", message: "unmatched ')'", pointsAt: ")/"),
    badRegex("/(?:a)/", message: "(?…) groups", pointsAt: "(?"),
    badRegex("/*a/", message: "'*' has nothing to repeat", pointsAt: "*a"),
    badRegex("/(+a)/", message: "'+' has nothing to repeat", pointsAt: "+a"),
    badRegex("/a**/", message: "cannot follow another", pointsAt: "*/"),
    badRegex("/a+?/", message: "lazy quantifiers", pointsAt: "?/"),
    badRegex("/a{2/", message: "'{' must start a repetition", pointsAt: "{2"),
    badRegex("/a{,2}/", message: "'{' must start a repetition", pointsAt: "{,2"),
    badRegex("/a{x}/", message: "'{' must start a repetition", pointsAt: "{x"),
    badRegex("/a{3,2}/", message: "bounds out of order", pointsAt: "{3,2"),
    badRegex("/a{1001}/", message: "over 1000", pointsAt: "{1001"),
    badRegex("/a{99999999999999999999}/", message: "over 1000", pointsAt: "{999"),
    badRegex(#"/\bword/"#, message: "\\b is not in Firebase's regular expressions", pointsAt: "\\\\bword"),
    badRegex(#"/a\n/"#, message: "\\n is not in", pointsAt: "\\\\n"),
    badRegex(#"/(a)\1/"#, message: "\\1 is not in", pointsAt: "\\\\1"),
    badRegex("/[]/", message: "empty class", pointsAt: "[]"),
    badRegex("/[^]/", message: "empty class", pointsAt: "[^]"),
    badRegex("/[abc/", message: "unterminated regular expression", pointsAt: "/[abc"),
    badRegex("/[z-a]/", message: "out of order", pointsAt: "a]"),
    badRegex(#"/[\d-z]/"#, message: "a range cannot have a class", pointsAt: "\\\\d-z"),
    badRegex(#"/[\b]/"#, message: "\\b is not in", pointsAt: "\\\\b]"),
    badRegex("/(a{100}){100}/", message: "needs more than 5000 states", pointsAt: "/(a{100}"),
]

@Suite struct RegexTests {
    @Test(arguments: documentedRegexRows + semanticRegexRows)
    func matchesAsJavaScriptWould(_ row: RegexRow) throws {
        #expect(try regexMatches(row.pattern, row.flags, row.input) == row.matches)
    }

    /// The same patterns through a whole rules file and a request.
    @Test(arguments: documentedRegexRows)
    func matchesInARule(_ row: RegexRow) throws {
        let literal = "/\(row.pattern)/\(row.flags)"
        let rules = try RulesSet.parse(source: oneRule(".read", "data.val().matches(\(literal))"))
        let data = Node.empty.updating("t", with: .string(row.input))
        let decision = rules.canRead(path: "t", auth: nil, root: data, now: 0)
        #expect(decision.isAllowed == row.matches, "\(decision)")
    }

    @Test(arguments: badRegexes)
    func outsideTheSubsetIsRefusedAtLoad(_ bad: BadExpression) throws {
        try checkRefusal(bad)
    }

    /// Counted repetition is expanded into states: the biggest accepted patterns compile to at
    /// most the limit, and a larger limit takes a larger pattern.
    @Test func theStateLimitIsTheExpandedSize() throws {
        var limits = RulesSet.Limits()
        limits.maxRegexStates = 20
        let rule = { (pattern: String) in oneRule(".read", "data.val().matches(/\(pattern)/)") }
        _ = try RulesSet.parse(source: rule("^a{18}$"), limits: limits)  // 18 + match
        #expect(throws: RulesError.self) { try RulesSet.parse(source: rule("^a{20}$"), limits: limits) }
        limits.maxRegexStates = 10_000
        _ = try RulesSet.parse(source: rule("(a{100}){99}"), limits: limits)
    }
}
