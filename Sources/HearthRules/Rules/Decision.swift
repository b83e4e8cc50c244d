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

/// Whether a request is allowed, and why.
public struct Decision: Sendable, Hashable, CustomStringConvertible {
    /// Whether the operation may proceed.
    public let isAllowed: Bool
    /// The rule that decided: for an allowed request, the `.read`/`.write` that granted it;
    /// for a denied one, the `.validate` that failed, or the deepest `.read`/`.write` that
    /// was evaluated and did not grant (`nil` when no rule applied at all, and for admins).
    public let rule: RuleReference?
    /// The concrete location the deciding rule was evaluated at (for a denial with no rule,
    /// the location that was refused).
    public let path: Path
    /// A short explanation: which rule granted, that none did, that a validation failed, or
    /// the evaluation error that made a rule false.
    public let reason: String

    /// An allowed request.
    static func allowed(by rule: RuleReference?, at path: Path, reason: String) -> Decision {
        Decision(isAllowed: true, rule: rule, path: path, reason: reason)
    }

    /// A denied request.
    static func denied(by rule: RuleReference?, at path: Path, reason: String) -> Decision {
        Decision(isAllowed: false, rule: rule, path: path, reason: reason)
    }

    /// `allowed by /users/$uid/.write: … at users/alice` or `denied: …`.
    public var description: String {
        let by = rule.map { " by \($0)" } ?? ""
        return "\(isAllowed ? "allowed" : "denied")\(by) at \(path): \(reason)"
    }
}
