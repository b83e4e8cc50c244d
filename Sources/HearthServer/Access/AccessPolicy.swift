@_spi(HearthInternals) import HearthWire

/// What an ``AccessPolicy`` decided, and why.
public struct AccessDecision: Sendable, Equatable {
    /// Whether the operation may proceed.
    public let allowed: Bool
    /// Warning codes for the client (`no_index`), sent with a listen's `ok`.
    public let warnings: [String]
    /// What decided, for the server's log (the rule's location and text).
    public let reason: String?

    /// A decision.
    public init(allowed: Bool, warnings: [String] = [], reason: String? = nil) {
        self.allowed = allowed
        self.warnings = warnings
        self.reason = reason
    }

    /// Allowed, with nothing to say.
    public static let allow = AccessDecision(allowed: true)
    /// Denied, with nothing to say.
    public static let deny = AccessDecision(allowed: false)
}

/// Decides reads and writes. The server asks before every read, listen, write and
/// onDisconnect operation (when queued and again when it runs). Security rules plug in here.
public protocol AccessPolicy: Sendable {
    /// Whether `principal` may read `path` with `query` (`data` is the whole database).
    func read(_ path: Path, query: QuerySpec, principal: Principal, data: Node, now: Int64) -> AccessDecision
    /// Whether `principal` may make `writes` — absolute paths and resolved values: one for a
    /// set, one per child for an update, checked as a whole — taking the database from
    /// `oldData` to `newData`.
    func write(
        _ writes: [(path: Path, value: Node)], principal: Principal, oldData: Node, newData: Node, now: Int64
    ) -> AccessDecision
}

/// The policy before security rules: the admin may do everything, an authenticated user may
/// read and write, an unauthenticated one may not. In emulator mode everyone may do everything.
/// Queries ordered by a child are answered with Firebase's `no_index` warning (no rules file,
/// so no `.indexOn`).
public struct DefaultAccessPolicy: AccessPolicy {
    /// Whether everything is allowed to everyone (`hearth serve --emulator`).
    public let allowAll: Bool

    /// The policy; `allowAll` for emulator mode.
    public init(allowAll: Bool) { self.allowAll = allowAll }

    public func read(_ path: Path, query: QuerySpec, principal: Principal, data: Node, now: Int64) -> AccessDecision {
        var warnings: [String] = []
        if case .child = query.index { warnings.append("no_index") }
        return AccessDecision(allowed: allowAll || principal != .unauthenticated, warnings: warnings)
    }

    public func write(
        _ writes: [(path: Path, value: Node)], principal: Principal, oldData: Node, newData: Node, now: Int64
    ) -> AccessDecision {
        allowAll || principal != .unauthenticated ? .allow : .deny
    }
}
