// RulesError: why a rules file was refused, always with the place in the file.

/// Why a rules file was refused by ``RulesSet/parse(source:)``.
///
/// Every case names the 1-based line and column in the file; rule errors also name the rule's
/// location (such as `/users/$uid/.write`), so a server can print one actionable line and
/// refuse to start.
public enum RulesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not JSON as Firebase reads a rules file (comments, strings spanning lines
    /// and trailing commas allowed).
    case syntax(message: String, line: Int, column: Int)
    /// The JSON is well formed but not a rules document: no top-level `"rules"`, an unknown
    /// `.key`, a rule that is neither a string nor a boolean, two wildcards under one node, a
    /// key given twice in one object, ...
    case structure(rulePath: String, message: String, line: Int, column: Int)
    /// An expression does not parse or cannot type-check (unknown variable, a method that
    /// does not exist, `newData` in a `.read` rule, a non-boolean result, ...).
    case expression(rulePath: String, message: String, line: Int, column: Int)

    /// The 1-based line of the problem.
    public var line: Int {
        switch self {
        case let .syntax(_, line, _), let .structure(_, _, line, _), let .expression(_, _, line, _): line
        }
    }

    /// The 1-based column (in Unicode scalars) of the problem.
    public var column: Int {
        switch self {
        case let .syntax(_, _, column), let .structure(_, _, _, column), let .expression(_, _, _, column): column
        }
    }

    /// The rule's location (`/users/$uid/.write`), or `nil` for JSON syntax errors.
    public var rulePath: String? {
        switch self {
        case .syntax: nil
        case let .structure(path, _, _, _), let .expression(path, _, _, _): path
        }
    }

    /// One line: where, and what is wrong.
    public var description: String { located(in: "rules file") }

    /// One line naming the file the rules came from: `FILE, line L, column C, in RULE: what`.
    package func located(in file: String) -> String {
        switch self {
        case let .syntax(message, line, column):
            "\(file), line \(line), column \(column): \(message)"
        case let .structure(path, message, line, column):
            "\(file), line \(line), column \(column), at \(path): \(message)"
        case let .expression(path, message, line, column):
            "\(file), line \(line), column \(column), in \(path): \(message)"
        }
    }
}
