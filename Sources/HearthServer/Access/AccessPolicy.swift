import HearthWire

/// Decides reads and writes. The server asks before every read, listen, write and
/// onDisconnect operation (queued and run). Security rules plug in here.
public protocol AccessPolicy: Sendable {
    /// Whether `principal` may read `path` with `query` (`data` is the whole database).
    func canRead(_ path: Path, query: QuerySpec, principal: Principal, data: Node, now: Int64) -> Bool
    /// Whether `principal` may change the database from `oldData` to `newData` by writing at
    /// `paths` (one path for a set, one per child for a merge; checked as a whole).
    func canWrite(_ paths: [Path], principal: Principal, oldData: Node, newData: Node, now: Int64) -> Bool
}

/// The policy before security rules: the admin may do everything, an authenticated user may
/// read and write, an unauthenticated one may not. In emulator mode everyone may do everything.
public struct DefaultAccessPolicy: AccessPolicy {
    /// Whether everything is allowed to everyone (`hearth serve --emulator`).
    public let allowAll: Bool

    /// The policy; `allowAll` for emulator mode.
    public init(allowAll: Bool) { self.allowAll = allowAll }

    public func canRead(_ path: Path, query: QuerySpec, principal: Principal, data: Node, now: Int64) -> Bool {
        allowAll || principal != .unauthenticated
    }

    public func canWrite(_ paths: [Path], principal: Principal, oldData: Node, newData: Node, now: Int64) -> Bool {
        allowAll || principal != .unauthenticated
    }
}
