// RuleRegex: a `/pattern/flags` literal, parsed and compiled once when the rules load.

/// A compiled regular-expression literal of `matches()`.
///
/// The dialect is the subset Firebase documents, parsed by ``RegexSyntax`` (which lists it);
/// anything else is refused when the rules load. Matching is JavaScript's `RegExp.test`: the
/// pattern may match anywhere unless `^`/`$` anchor it; `.`, classes and `\d \w \s` consume one
/// Unicode scalar (an emoji is one `.`, as with Java's regular expressions, where JavaScript
/// would see two UTF-16 code units); `\d` and `\w` are ASCII and `\s` is JavaScript's white
/// space. The one flag is `i` (ignore case, ``CaseFolding``). Matching runs the pattern's NFA
/// over the string once (``RegexProgram/matches(_:budget:)``): its work is bounded by the
/// program's size times the string's length, and is charged to the request's budget.
struct RuleRegex: Sendable {
    /// The pattern as written between the slashes.
    let pattern: String
    /// The flags after the closing slash.
    let flags: String
    let program: RegexProgram

    /// Why a literal was refused, at an offset (in scalars) from the literal's opening `/`.
    struct Invalid: Error {
        let message: String
        let offset: Int
    }

    /// Parses and compiles `/pattern/flags`: groups nested at most `maxDepth` deep, a program
    /// of at most `maxStates` states.
    init(pattern: String, flags: String, maxDepth: Int, maxStates: Int) throws(Invalid) {
        let scalars = Array(pattern.unicodeScalars)
        var ignoresCase = false
        for (k, flag) in flags.unicodeScalars.enumerated() {
            let offset = scalars.count + 2 + k
            guard flag == "i" else {
                throw Invalid(
                    message: "unsupported regular-expression flag '\(flag)' (only i is allowed)", offset: offset)
            }
            if ignoresCase { throw Invalid(message: "the flag i is given twice", offset: offset) }
            ignoresCase = true
        }
        let syntax: RegexSyntax
        do { syntax = try RegexSyntax(scalars, maxDepth: maxDepth) } catch {
            throw Invalid(
                message: "invalid regular expression /\(pattern)/: \(error.message)", offset: error.offset + 1)
        }
        do { program = try RegexProgram(syntax, ignoresCase: ignoresCase, maxStates: maxStates) } catch {
            throw Invalid(
                message:
                    "the regular expression /\(pattern)/ needs more than \(maxStates) states (counted repetition {n,m} copies what it repeats)",
                offset: 0)
        }
        self.pattern = pattern
        self.flags = flags
    }

    /// Whether the pattern matches anywhere in `string`; charges `budget` for the work.
    func matches(_ string: String, budget: inout StepBudget) throws(BudgetExhausted) -> Bool {
        try program.matches(string, budget: &budget)
    }
}
