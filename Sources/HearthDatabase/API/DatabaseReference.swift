import HearthModel

/// A location in the database: read it with ``DatabaseQuery/observe(_:on:with:)``, write it with
/// `setValue`, `updateChildValues`, `removeValue`.
public struct DatabaseReference: Sendable, Hashable, CustomStringConvertible {
    /// The database this reference belongs to.
    public let database: Database
    /// The location's path (``Path/root`` when ``invalid`` is set).
    let path: Path
    /// Why this reference is unusable (an invalid key given to `child`), reported by every
    /// operation on it — so chains of `child` need no `try`, as in Firebase's API, and still
    /// never crash.
    let invalid: DatabaseError?

    init(database: Database, path: Path, invalid: DatabaseError? = nil) {
        self.database = database
        self.path = path
        self.invalid = invalid
    }

    /// The last key of the path (`nil` at the root).
    public var key: String? { path.keys.last?.string }

    /// The path as a string, `/` at the root (`/users/ada`).
    public var pathString: String { "/" + path.keys.map(\.string).joined(separator: "/") }

    /// The location's URL, as Firebase's `description` is: ``url``.
    public var description: String { url }

    public static func == (lhs: DatabaseReference, rhs: DatabaseReference) -> Bool {
        lhs.database === rhs.database && lhs.path == rhs.path && lhs.invalid == rhs.invalid
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
    /// Why this query is unusable (parameters Firebase refuses), reported by `observe` and
    /// `getData` — building stays free of `try`, as in Firebase's API.
    let invalid: DatabaseError?
    /// Whether an ordering was chosen (`queryOrdered…`); Firebase allows one per query, even
    /// the default priority ordering.
    let orderByCalled: Bool

    init(ref: DatabaseReference, spec: QuerySpec, invalid: DatabaseError? = nil, orderByCalled: Bool = false) {
        self.ref = ref
        self.spec = spec
        self.invalid = invalid ?? ref.invalid
        self.orderByCalled = orderByCalled
    }

    /// Queries are equal when they ask for the same data: same location, same parameters, same
    /// invalidity (whether the ordering was chosen explicitly does not matter).
    public static func == (lhs: DatabaseQuery, rhs: DatabaseQuery) -> Bool {
        lhs.ref == rhs.ref && lhs.spec == rhs.spec && lhs.invalid == rhs.invalid
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ref)
        hasher.combine(spec)
    }
}
