/// One end of a query's range: an indexed value, optionally a key to break ties, and whether
/// the end itself is excluded.
public struct QueryBound: Sendable, Hashable {
    /// The indexed value (a leaf, or ``Node/empty`` for null). For ``QueryIndex/key`` it is
    /// the bounding key, as a string leaf.
    public let value: Node
    /// The tie-breaking key given with the value, if any. A start without one begins at
    /// `[MIN_NAME]`, an end without one stops at `[MAX_NAME]`.
    public let key: BoundKey?
    /// Whether the bound itself is excluded (`startAfter` / `endBefore` where the exclusion
    /// cannot be expressed by a sentinel key).
    public let exclusive: Bool

    /// Creates a bound. Use the ``QuerySpec`` builders, which apply Firebase's rules.
    public init(value: Node, key: BoundKey?, exclusive: Bool) {
        self.value = value
        self.key = key
        self.exclusive = exclusive
    }
}

/// How many children a query keeps, and from which end.
public enum QueryLimit: Sendable, Hashable {
    /// `limitToFirst(n)`: the first n in query order (`vf: "l"`).
    case first(Int)
    /// `limitToLast(n)`: the last n in query order (`vf: "r"`).
    case last(Int)

    /// The limit's count.
    public var count: Int {
        switch self {
        case .first(let n), .last(let n): n
        }
    }
}

/// A query's parameters: an ordering, optional start and end bounds, and an optional limit —
/// validated as the Firebase SDKs validate them.
///
/// Build one with ``QuerySpec/init(orderBy:)`` and the chaining methods (each throws a
/// ``QueryError`` where Firebase would throw), or parse one with ``init(json:)``.
public struct QuerySpec: Sendable, Hashable, CustomStringConvertible {
    /// The ordering.
    public private(set) var index: QueryIndex
    /// The start bound.
    public private(set) var start: QueryBound?
    /// The end bound.
    public private(set) var end: QueryBound?
    /// The limit.
    public private(set) var limit: QueryLimit?

    /// The unfiltered query ordered by priority: the whole location.
    public static let `default` = QuerySpec(orderBy: .priority)

    /// The largest limit accepted.
    public static let maxLimit = Int(Int32.max)

    /// An unbounded query with the given ordering.
    public init(orderBy index: QueryIndex) {
        self.index = index
    }

    /// Whether the query has no bounds and no limit (it loads all data at its location).
    public var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// Whether this is the default query (all data, priority order). Its identifier is
    /// `"default"`.
    public var isDefault: Bool { loadsAllData && index == .priority }

    // MARK: - Builders (Firebase's rules)

    /// `startAt(value, key)`.
    public func startAt(_ value: Node, key: ChildKey? = nil) throws(QueryError) -> QuerySpec {
        try settingStart(value, key: key.map(BoundKey.key), exclusive: false, field: "startAt")
    }

    /// `startAfter(value, key)`: without a key (and not ordering by key) this is
    /// `startAt(value, "[MAX_NAME]")`, as in Firebase; otherwise an exclusive start.
    public func startAfter(_ value: Node, key: ChildKey? = nil) throws(QueryError) -> QuerySpec {
        if key == nil, index != .key {
            return try settingStart(value, key: .max, exclusive: false, field: "startAfter", explicitKey: false)
        }
        return try settingStart(value, key: key.map(BoundKey.key), exclusive: true, field: "startAfter")
    }

    /// `endAt(value, key)`.
    public func endAt(_ value: Node, key: ChildKey? = nil) throws(QueryError) -> QuerySpec {
        try settingEnd(value, key: key.map(BoundKey.key), exclusive: false, field: "endAt")
    }

    /// `endBefore(value, key)`: without a key (and not ordering by key) this is
    /// `endAt(value, "[MIN_NAME]")`, as in Firebase; otherwise an exclusive end.
    public func endBefore(_ value: Node, key: ChildKey? = nil) throws(QueryError) -> QuerySpec {
        if key == nil, index != .key {
            return try settingEnd(value, key: .min, exclusive: false, field: "endBefore", explicitKey: false)
        }
        return try settingEnd(value, key: key.map(BoundKey.key), exclusive: true, field: "endBefore")
    }

    /// `equalTo(value, key)`: `startAt` and `endAt` the same point; excludes any other bound.
    public func equalTo(_ value: Node, key: ChildKey? = nil) throws(QueryError) -> QuerySpec {
        if start != nil { throw .startAlreadySet(field: "equalTo") }
        if end != nil { throw .endAlreadySet(field: "equalTo") }
        return try startAt(value, key: key).endAt(value, key: key)
    }

    /// `limitToFirst(n)`.
    public func limitToFirst(_ n: Int) throws(QueryError) -> QuerySpec {
        try settingLimit(.first(n), field: "limitToFirst")
    }

    /// `limitToLast(n)`.
    public func limitToLast(_ n: Int) throws(QueryError) -> QuerySpec {
        try settingLimit(.last(n), field: "limitToLast")
    }

    private func settingStart(
        _ value: Node, key: BoundKey?, exclusive: Bool, field: String, explicitKey: Bool = true
    ) throws(QueryError) -> QuerySpec {
        if start != nil { throw .startAlreadySet(field: field) }
        try validateBound(value, key: explicitKey ? key : nil, field: field)
        var q = self
        // A bound is an index value: a priority on it means nothing (Firebase ignores it), and
        // keeping it would make the bound unprintable in the wire and JSON forms.
        q.start = QueryBound(value: value.withPriority(nil), key: key, exclusive: exclusive)
        return q
    }

    private func settingEnd(
        _ value: Node, key: BoundKey?, exclusive: Bool, field: String, explicitKey: Bool = true
    ) throws(QueryError) -> QuerySpec {
        if end != nil { throw .endAlreadySet(field: field) }
        try validateBound(value, key: explicitKey ? key : nil, field: field)
        var q = self
        q.end = QueryBound(value: value.withPriority(nil), key: key, exclusive: exclusive)
        return q
    }

    private func settingLimit(_ limit: QueryLimit, field: String) throws(QueryError) -> QuerySpec {
        if self.limit != nil { throw .limitAlreadySet(field: field) }
        guard limit.count > 0, limit.count <= QuerySpec.maxLimit else {
            throw .limitNotPositiveInteger(field: field, value: "\(limit.count)")
        }
        var q = self
        q.limit = limit
        return q
    }

    private func validateBound(_ value: Node, key: BoundKey?, field: String) throws(QueryError) {
        if case .key(let k) = key {
            do { try ChildKey.validate(k.string) } catch { throw .invalidBoundKey(field: field, error) }
        }
        switch index {
        case .key:
            if key != nil { throw .keyOrderingTakesOneArgument(field: field) }
            guard case .string(let s)? = value.leafValue else { throw .keyOrderingNeedsString(field: field) }
            do { try ChildKey.validate(s) } catch { throw .invalidBoundKey(field: field, error) }
        case .priority:
            switch value.leafValue {
            case nil where value.isEmpty, .number?, .integer?, .string?: break
            default: throw .invalidPriorityBound(field: field)
            }
        case .value, .child:
            if !value.isEmpty && !value.isLeaf { throw .objectBound(field: field) }
            if case .serverValue? = value.leafValue { throw .objectBound(field: field) }
        }
    }

    // MARK: - Identity

    /// Firebase's wire query object with its keys sorted, as a string — the query's identity
    /// (`"default"` for the default query).
    ///
    /// Keys: `i` (the index, omitted for priority), `sp`/`sn` (start value and key), `ep`/`en`
    /// (end value and key), `l` and `vf` (`"l"` for limitToFirst, `"r"` for limitToLast).
    /// Exclusive bounds that no sentinel key can express (ordering by key, or an explicit
    /// key) add the JavaScript SDK's `"sin":false` / `"ein":false`. An orderBy-only query is
    /// not the default: `{"i":".value"}`.
    public var identifier: String {
        if isDefault { return "default" }
        var members: [(String, JSONValue)] = []
        if let start {
            members.append(("sp", start.value.exportJSON()))
            if let key = start.key { members.append(("sn", .string(key.wire))) }
            if start.exclusive { members.append(("sin", .bool(false))) }
        }
        if let end {
            members.append(("ep", end.value.exportJSON()))
            if let key = end.key { members.append(("en", .string(key.wire))) }
            if end.exclusive { members.append(("ein", .bool(false))) }
        }
        if let limit {
            members.append(("l", .number(Double(limit.count))))
            if case .first = limit {
                members.append(("vf", .string("l")))
            } else {
                members.append(("vf", .string("r")))
            }
        }
        if index != .priority { members.append(("i", .string(index.wireName))) }
        return JSONValue.object(members.map { JSONMember(key: $0.0, value: $0.1) }).serialized(sortKeys: true)
    }

    public var description: String { identifier }
}

/// A query that breaks Firebase's rules. Every case names the offending field.
public enum QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A start bound (`startAt`/`startAfter`/`equalTo`) was given twice.
    case startAlreadySet(field: String)
    /// An end bound (`endAt`/`endBefore`/`equalTo`) was given twice.
    case endAlreadySet(field: String)
    /// A limit (`limitToFirst`/`limitToLast`) was given twice.
    case limitAlreadySet(field: String)
    /// A limit that is not a positive integer.
    case limitNotPositiveInteger(field: String, value: String)
    /// `orderByKey` bounds take only a key, not a (value, key) pair.
    case keyOrderingTakesOneArgument(field: String)
    /// `orderByKey` bounds must be strings.
    case keyOrderingNeedsString(field: String)
    /// `orderByPriority` bounds must be null, a number or a string.
    case invalidPriorityBound(field: String)
    /// A bound that is an object or array (bounds are leaves).
    case objectBound(field: String)
    /// A bound's child key breaks Firebase's key rules.
    case invalidBoundKey(field: String, PathError)
    /// An `orderByChild` path breaks Firebase's path rules.
    case invalidChildPath(path: String, reason: String)
    /// A query parameter this model does not know.
    case unknownField(String)
    /// A query parameter whose value has the wrong shape.
    case malformed(field: String, expected: String)

    public var description: String {
        switch self {
        case .startAlreadySet(let f):
            "\(f): starting point was already set (by another call to startAt, startAfter, or equalTo)"
        case .endAlreadySet(let f):
            "\(f): ending point was already set (by another call to endAt, endBefore, or equalTo)"
        case .limitAlreadySet(let f):
            "\(f): limit was already set (by another call to limitToFirst or limitToLast)"
        case let .limitNotPositiveInteger(f, v):
            "\(f): the limit must be a positive integer (at most \(QuerySpec.maxLimit)), got \(v)"
        case .keyOrderingTakesOneArgument(let f):
            "\(f): when ordering by key, you may only pass one argument (no key)"
        case .keyOrderingNeedsString(let f):
            "\(f): when ordering by key, the bound must be a string"
        case .invalidPriorityBound(let f):
            "\(f): when ordering by priority, the bound must be a valid priority (null, a number, or a string)"
        case .objectBound(let f):
            "\(f): the bound value cannot be an object"
        case let .invalidBoundKey(f, e):
            "\(f): invalid key: \(e)"
        case let .invalidChildPath(p, reason):
            "orderBy child \"\(p)\": \(reason)"
        case .unknownField(let f):
            "query: unknown field \"\(f)\""
        case let .malformed(f, expected):
            "query field \"\(f)\": expected \(expected)"
        }
    }
}
