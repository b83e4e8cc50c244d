// FuzzRules' differential check of `matches()`: patterns built from the input's bytes (always in
// Firebase's subset) or taken as text (anything), run through a whole rules file, against a simple
// backtracking reference written apart from HearthRules' engine — its own parser of the same subset
// and JavaScript's matching rules — on short strings. Both must refuse the same patterns and, for the
// rest, agree on every string.
import HearthModel
import HearthRules

enum FuzzRegexReference {
    /// The scalars strings are made of: both cases, letters whose case is special in JavaScript (the
    /// Kelvin sign, long s), a non-ASCII letter pair, digits, punctuation, a space and a newline.
    static let alphabet: [Unicode.Scalar] = [
        "a", "b", "A", "B", "k", "K", "\u{212A}", "s", "S", "\u{17F}", "é", "É", "0", "1", "-", ".", "/", " ",
        "\n", "_", "😀", "]",
    ]

    // MARK: - Patterns

    /// A pattern of the subset: `^`/`$` only at the ends (with top-level alternatives grouped),
    /// groups, alternation, classes, escapes and small counted repetitions.
    static func pattern(_ input: inout FuzzRulesInput) -> String {
        let start = input.chance(30), end = input.chance(30)
        var body = alternation(&input, depth: 0)
        if (start || end) && body.count > 1 { body = ["(" + body.joined(separator: "|") + ")"] }
        return (start ? "^" : "") + body.joined(separator: "|") + (end ? "$" : "")
    }

    private static func alternation(_ input: inout FuzzRulesInput, depth: Int) -> [String] {
        (0...input.int(depth < 2 ? 3 : 1)).map { _ in
            (0...input.int(3)).map { _ in piece(&input, depth: depth) }.joined()
        }
    }

    private static func piece(_ input: inout FuzzRulesInput, depth: Int) -> String {
        let atom: String
        switch input.int(depth < 3 ? 7 : 5) {
        case 0: atom = literal(&input)
        case 1: atom = "."
        case 2: atom = input.pick(["\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "\\.", "\\/", "\\-", "\\$", "\\\\", "]"])
        case 3, 4: atom = characterClass(&input)
        default: atom = "(" + alternation(&input, depth: depth + 1).joined(separator: "|") + ")"
        }
        guard input.chance(40) else { return atom }
        let n = input.int(4)
        return atom + input.pick(["*", "+", "?", "{\(n)}", "{\(n),}", "{\(n),\(n + input.int(3))}"])
    }

    /// A literal scalar (`-` only outside a class, where it cannot make a range).
    private static func literal(_ input: inout FuzzRulesInput, inClass: Bool = false) -> String {
        input.pick(["a", "b", "A", "k", "K", "s", "ſ", "é", "É", "0", " ", "😀", "\u{212A}", inClass ? "_" : "-"])
    }

    private static func characterClass(_ input: inout FuzzRulesInput) -> String {
        var items = ""
        for _ in 0...input.int(3) {
            switch input.int(4) {
            case 0: items += literal(&input, inClass: true)
            case 1: items += input.pick(["a-z", "A-Z", "0-9", "a-c", "é-ë", "K-k", "\\]-a", " --"])
            case 2: items += input.pick(["\\d", "\\w", "\\s", "\\D", "\\W", "\\S"])
            default: items += input.pick(["\\]", "\\\\", "\\-", ".", "$", "|", "(", "/", "["])
            }
        }
        return "[" + (input.chance(30) ? "^" : "") + items + "]"
    }

    /// Pattern text from the bytes, over the characters that matter to the parser (no `/` or
    /// newline, which end the literal before the regular-expression parser sees them).
    static func text(_ input: inout FuzzRulesInput) -> String {
        let characters: [Unicode.Scalar] = [
            "a", "b", "A", "é", "(", ")", "[", "]", "{", "}", "|", "*", "+", "?", "^", "$", ".", "\\", "-", ",", "1",
            "2", "0", "d", "w", "s", "D", "S", "W", "n", "b", " ", "K",
        ]
        var out = String.UnicodeScalarView()
        for _ in 0..<input.int(25) { out.append(input.pick(characters)) }
        return String(out)
    }

    // MARK: - The differential check

    static func differential(generated input: inout FuzzRulesInput) {
        let source = pattern(&input)
        compare(source, input.pick(["", "i"]), &input, mustLoad: true)
    }

    static func differential(text input: inout FuzzRulesInput) {
        let source = text(&input)
        compare(source, input.pick(["", "i", "", "g", "ii", "I"]), &input, mustLoad: false)
    }

    static func compare(_ pattern: String, _ flags: String, _ input: inout FuzzRulesInput, mustLoad: Bool) {
        let expression = "data.val().matches(/\(pattern)/\(flags))"
        let source = JSONValue.object([
            JSONMember(
                key: "rules",
                value: .object([
                    JSONMember(key: "t", value: .object([JSONMember(key: ".read", value: .string(expression))]))
                ]))
        ]).serialized()
        let reference = try? Reference(pattern: pattern, flags: flags)
        let rules: RulesSet
        do {
            rules = try RulesSet.parse(source: source)
        } catch {
            if error.description.contains("states (counted repetition") { return }  // the size limit
            FuzzRulesChecks.check(
                !mustLoad && reference == nil, "/\(pattern)/\(flags) refused, the reference takes it: \(error)")
            return
        }
        guard let reference else {
            FuzzRulesChecks.check(false, "/\(pattern)/\(flags) loads, the reference refuses it")
            return
        }
        for _ in 0..<(1 + input.int(6)) {
            var string = String.UnicodeScalarView()
            for _ in 0..<input.int(9) { string.append(input.pick(alphabet)) }
            let subject = String(string)
            guard let expected = reference.matches(Array(string)) else { continue }  // too many steps
            let decision = rules.canRead(
                path: "t", auth: nil, root: Node.empty.updating("t", with: .string(subject)), now: 0)
            FuzzRulesChecks.check(
                decision.isAllowed || decision.reason.hasSuffix("is false)"), "/\(pattern)/\(flags): \(decision)")
            FuzzRulesChecks.check(
                decision.isAllowed == expected,
                "/\(pattern)/\(flags) on \(subject.unicodeScalars.map { "U+\(String($0.value, radix: 16))" }): "
                    + "engine \(decision.isAllowed), reference \(expected)")
        }
    }
}
