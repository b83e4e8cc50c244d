// Decision: the answer to "may this request happen?", with the rule that decided it.

import HearthModel

/// The three kinds of access rule.
public enum RuleKind: String, Sendable, Hashable {
    /// `.read`: reads, listens and queries at or below the rule's location (cascades).
    case read = ".read"
    /// `.write`: writes at or below the rule's location (cascades).
    case write = ".write"
    /// `.validate`: checks the new data at exactly the rule's location (does not cascade).
    case validate = ".validate"
}

/// One rule of the rules file, for reporting which rule decided.
public struct RuleReference: Sendable, Hashable, CustomStringConvertible {
    /// The rule's location as written in the file, with wildcards: `/users/$uid`.
    public let location: String
    /// Which rule at that location.
    public let kind: RuleKind
    /// The expression's source text (`true` / `false` for boolean rules).
    public let expression: String

    /// `/users/$uid/.write: auth.uid === $uid`.
    public var description: String {
        "\(location == "/" ? "" : location)/\(kind.rawValue): \(expression)"
    }
}

/// Something the server should tell the client about an allowed request, without refusing it.
public enum RulesWarning: Sendable, Hashable, CustomStringConvertible {
    /// The query orders by a child (or by value) that no `.indexOn` at the query's location
    /// names. Results are still correct; Firebase sends `{"w":["no_index"]}` with the listen's
    /// answer and the SDK logs the advice in ``description``.
    case noIndex(path: Path, index: String)

    /// The code Firebase puts in the listen response's `w` array: `no_index`.
    public var wireCode: String {
        switch self {
        case .noIndex: "no_index"
        }
    }

    /// The advice, as the Firebase SDKs word it.
    public var description: String {
        switch self {
        case let .noIndex(path, index):
            let location = path.isRoot ? "/" : "/" + path.description
            return
                "Using an unspecified index. Consider adding \".indexOn\": \"\(index)\" at \(location) to your security rules for better performance."
        }
    }
}

/// Whether a request is allowed, and why.
public struct Decision: Sendable, Hashable, CustomStringConvertible {
    /// Whether the operation may proceed.
    public let isAllowed: Bool
    /// The rule that decided: for an allowed request, the `.read`/`.write` that granted it;
    /// for a denied one, the `.validate` that failed, or the deepest `.read`/`.write` that
    /// was evaluated and did not grant. `nil` when no rule applied at all (denied: no rule
    /// grants, which is Firebase's default) and for ``RulesAuth/admin``.
    public let rule: RuleReference?
    /// The concrete location the deciding rule was evaluated at (`users/alice` for the rule
    /// `/users/$uid`); for a denial with no rule, the location that was refused.
    public let path: Path
    /// A short explanation: which rule granted, that none did, that a validation failed, or
    /// the evaluation error that made a rule false.
    public var reason: String {
        switch why {
        case .granted(let kind): "\(kind.rawValue) granted at \(path)"
        case .text(let text), .overBudget(let text): text
        }
    }

    /// The reason, kept unformatted on the common path (a grant) until someone asks.
    private let why: Reason

    private enum Reason: Sendable, Hashable {
        case granted(RuleKind)
        case text(String)
        /// A denial because the step budget ran out.
        case overBudget(String)
    }
    /// Warnings for an allowed query (``RulesWarning/noIndex(path:index:)``); empty otherwise.
    public let warnings: [RulesWarning]

    /// Whether an allowed query lacks its `.indexOn` (send `{"w":["no_index"]}`).
    public var isMissingIndex: Bool {
        warnings.contains { if case .noIndex = $0 { true } else { false } }
    }

    /// The evaluation steps the request spent (see ``RulesSet/Limits/evaluationSteps``), all its
    /// rules together; 0 when no rule was evaluated (admin, `.info`).
    public let evaluationSteps: Int

    /// Whether the request was denied because its rules evaluation ran out of steps
    /// (``RulesSet/Limits/evaluationSteps``) before an answer was reached, rather than because
    /// a rule was false. The request is then denied as a whole, whatever rules were left;
    /// ``rule`` is the rule being evaluated when the budget ran out and ``reason`` says so. A
    /// server can count these, or log them apart from ordinary denials: they point at rules too
    /// expensive for the data, or at a client sending data that makes them so.
    public var exceededBudget: Bool {
        if case .overBudget = why { true } else { false }
    }

    /// A request granted by the `.read` or `.write` rule `rule`, evaluated at `path`.
    static func granted(by rule: RuleReference, at path: Path, steps: Int) -> Decision {
        Decision(
            isAllowed: true, rule: rule, path: path, why: .granted(rule.kind), warnings: [], evaluationSteps: steps)
    }

    /// An allowed request.
    static func allowed(by rule: RuleReference?, at path: Path, reason: String, steps: Int = 0) -> Decision {
        Decision(isAllowed: true, rule: rule, path: path, why: .text(reason), warnings: [], evaluationSteps: steps)
    }

    /// A denied request.
    static func denied(by rule: RuleReference?, at path: Path, reason: String, steps: Int = 0) -> Decision {
        Decision(isAllowed: false, rule: rule, path: path, why: .text(reason), warnings: [], evaluationSteps: steps)
    }

    /// A request denied because its evaluation ran out of steps while evaluating `rule` at `path`.
    static func overBudget(by rule: RuleReference?, at path: Path, reason: String, steps: Int) -> Decision {
        Decision(
            isAllowed: false, rule: rule, path: path, why: .overBudget(reason), warnings: [], evaluationSteps: steps)
    }

    /// This decision with `warning` added.
    func adding(_ warning: RulesWarning) -> Decision {
        Decision(
            isAllowed: isAllowed, rule: rule, path: path, why: why, warnings: warnings + [warning],
            evaluationSteps: evaluationSteps)
    }

    /// This decision with `steps` as the steps spent (a grant decided before a validation ran).
    func spending(_ steps: Int) -> Decision {
        Decision(
            isAllowed: isAllowed, rule: rule, path: path, why: why, warnings: warnings, evaluationSteps: steps)
    }

    /// `allowed by /users/$uid/.write: … at users/alice: …` or `denied …`, for a server log.
    public var description: String {
        let by = rule.map { " by \($0)" } ?? ""
        let warned = warnings.isEmpty ? "" : " [warning: " + warnings.map(\.wireCode).joined(separator: ", ") + "]"
        return "\(isAllowed ? "allowed" : "denied")\(by) at \(path): \(reason)\(warned)"
    }
}
