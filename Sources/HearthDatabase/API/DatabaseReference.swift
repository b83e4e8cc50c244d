import HearthModel

/// A location in the database: read it with ``DatabaseQuery/observe(_:with:)``, write it with
/// `setValue`, `updateChildValues`, `removeValue`.
public struct DatabaseReference: Sendable, Hashable, CustomStringConvertible {
    /// The database this reference belongs to.
    public let database: Database
    /// The location's path.
    let path: Path

    init(database: Database, path: Path) {
        self.database = database
        self.path = path
    }

    /// The last key of the path (`nil` at the root).
    public var key: String? { path.keys.last?.string }

    /// The path as a string, `/` at the root.
    public var description: String { "/" + path.keys.map(\.string).joined(separator: "/") }

    public static func == (lhs: DatabaseReference, rhs: DatabaseReference) -> Bool {
        lhs.database === rhs.database && lhs.path == rhs.path
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(database))
        hasher.combine(path)
    }
}

/// A query: a location with an ordering, range and limit. Build one with the `query…` methods
/// of ``DatabaseReference``.
public struct DatabaseQuery: Sendable, Hashable {
    /// The location queried.
    public let ref: DatabaseReference
    /// The query parameters.
    let spec: QuerySpec

    init(ref: DatabaseReference, spec: QuerySpec) {
        self.ref = ref
        self.spec = spec
    }
}
