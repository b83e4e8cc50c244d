import HearthRules
@_spi(HearthInternals) import HearthWire

/// Firebase security rules as the server's policy (`hearth serve --rules FILE`): every read,
/// listen, REST request, write and onDisconnect operation (queued and run) is evaluated by
/// `HearthRules.RulesSet`; the admin (``Principal/admin``) bypasses them, as Firebase's
/// service credentials do. A token's claims, `admin` included, reach the rules as `auth.token`.
public struct RulesAccessPolicy: AccessPolicy {
    /// The parsed rules.
    public let rules: RulesSet

    /// A policy evaluating `rules`.
    public init(rules: RulesSet) { self.rules = rules }

    /// The rules' `auth` for a principal (`nil` is `auth == null`).
    static func auth(_ principal: Principal) -> RulesAuth? {
        switch principal {
        case .unauthenticated: nil
        case .admin: .admin
        case .user(let user): RulesAuth(variable: user.authVariable.objectMembers ?? [])
        }
    }

    public func read(_ path: Path, query: QuerySpec, principal: Principal, data: Node, now: Int64) -> AccessDecision {
        let auth = Self.auth(principal)
        let decision =
            query.isDefault
            ? rules.canRead(path: path, auth: auth, root: data, now: Double(now))
            : rules.canQuery(path: path, query: query, auth: auth, root: data, now: Double(now))
        return AccessDecision(
            allowed: decision.isAllowed, warnings: decision.warnings.map(\.wireCode), reason: decision.description)
    }

    public func write(
        _ writes: [(path: Path, value: Node)], principal: Principal, oldData: Node, newData: Node, now: Int64
    ) -> AccessDecision {
        let auth = Self.auth(principal)
        let decision =
            writes.count == 1
            ? rules.canWrite(path: writes[0].path, newRoot: newData, oldRoot: oldData, auth: auth, now: Double(now))
            : rules.canUpdate(writes: writes, oldRoot: oldData, auth: auth, now: Double(now))
        return AccessDecision(allowed: decision.isAllowed, reason: decision.description)
    }
}
