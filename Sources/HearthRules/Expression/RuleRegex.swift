// RuleRegex: a `/pattern/flags` literal, compiled once when the rules load.

/// A compiled regular-expression literal. Matching searches the string (as JavaScript's
/// `RegExp.test` does): anchor with `^` and `$` to match the whole string. The one flag
/// Firebase accepts is `i` (ignore case). Patterns are compiled by Swift's `Regex`, whose
/// syntax covers the subset Firebase documents (`^ $ . * + ? {n,m} [] () | \d \w \s`
/// and their negations); `.` and classes match Unicode scalars, not grapheme clusters, which
/// is closer to JavaScript's code units.
struct RuleRegex: Sendable {
    /// The pattern as written between the slashes.
    let pattern: String
    /// The flags after the closing slash.
    let flags: String
    private let compiled: CompiledRegex

    struct Invalid: Error {
        let message: String
    }

    init(pattern: String, flags: String) throws(Invalid) {
        for flag in flags where flag != "i" {
            throw Invalid(message: "unsupported regular-expression flag '\(flag)' (only i is allowed)")
        }
        let compiled: Regex<AnyRegexOutput>
        do {
            compiled = try Regex(pattern)
        } catch {
            throw Invalid(message: "invalid regular expression /\(pattern)/: \(error)")
        }
        self.pattern = pattern
        self.flags = flags
        let scalars = compiled.matchingSemantics(.unicodeScalar)
        self.compiled = CompiledRegex(flags.contains("i") ? scalars.ignoresCase() : scalars)
    }

    /// Whether the pattern matches anywhere in `string`.
    func matches(_ string: String) -> Bool {
        (try? compiled.regex.firstMatch(in: string)) != nil
    }
}

/// A `Regex` shared by every thread that evaluates the rule.
///
/// Invariant relied on by `@unchecked Sendable`: the regex is an immutable value, never
/// mutated after `init`; its matching program, which the standard library builds lazily (and
/// installs with an atomic compare-and-exchange), is built here, before the value is shared,
/// by one match against the empty string. `Regex` is not declared `Sendable` only because its
/// `Output` type parameter may not be; `AnyRegexOutput` holds no shared mutable state.
private final class CompiledRegex: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>

    init(_ regex: Regex<AnyRegexOutput>) {
        self.regex = regex
        _ = try? regex.firstMatch(in: "")
    }
}
