extension QuerySpec {
    /// Parses a query from Hearth's JSON form (used by the `hearth` tool and its `apply`
    /// operations):
    ///
    /// ```json
    /// {"orderBy": "key" | "value" | "priority" | {"child": "a/b"},
    ///  "startAt": {"value": V, "key": K}, "startAfter": …, "endAt": …, "endBefore": …,
    ///  "equalTo": …, "limitToFirst": N, "limitToLast": N}
    /// ```
    ///
    /// Every field is optional; `{}` (or `null`) is the default query. A bound may also be
    /// given as a bare value (`"startAt": 5`). Rules are Firebase's (see ``QueryError``).
    public init(json: JSONValue) throws(QueryError) {
        guard case .object(let members) = json else {
            if json.isNull { self = .default; return }
            throw .malformed(field: "query", expected: "an object")
        }
        let known: Set<String> = [
            "orderBy", "startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast",
        ]
        for m in members where !known.contains(m.key) { throw .unknownField(m.key) }
        func field(_ name: String) -> JSONValue? { members.first { $0.key == name }?.value }

        var q = QuerySpec(orderBy: try QuerySpec.parseIndex(field("orderBy")))
        if let b = field("equalTo") {
            let (v, k) = try QuerySpec.parseBound(b, field: "equalTo")
            if field("startAt") != nil || field("startAfter") != nil { throw .startAlreadySet(field: "equalTo") }
            if field("endAt") != nil || field("endBefore") != nil { throw .endAlreadySet(field: "equalTo") }
            q = try q.equalTo(v, key: k)
        }
        if let b = field("startAt") {
            let (v, k) = try QuerySpec.parseBound(b, field: "startAt")
            q = try q.startAt(v, key: k)
        }
        if let b = field("startAfter") {
            let (v, k) = try QuerySpec.parseBound(b, field: "startAfter")
            q = try q.startAfter(v, key: k)
        }
        if let b = field("endAt") {
            let (v, k) = try QuerySpec.parseBound(b, field: "endAt")
            q = try q.endAt(v, key: k)
        }
        if let b = field("endBefore") {
            let (v, k) = try QuerySpec.parseBound(b, field: "endBefore")
            q = try q.endBefore(v, key: k)
        }
        if let n = field("limitToFirst") { q = try q.limitToFirst(try QuerySpec.parseLimit(n, field: "limitToFirst")) }
        if let n = field("limitToLast") { q = try q.limitToLast(try QuerySpec.parseLimit(n, field: "limitToLast")) }
        self = q
    }

    /// The query in Hearth's JSON form (the inverse of ``init(json:)``).
    public var json: JSONValue {
        var members: [JSONMember] = []
        switch index {
        case .priority: break
        case .key: members.append(JSONMember(key: "orderBy", value: .string("key")))
        case .value: members.append(JSONMember(key: "orderBy", value: .string("value")))
        case .child(let p):
            members.append(
                JSONMember(key: "orderBy", value: .object([JSONMember(key: "child", value: .string(p.description))])))
        }
        func bound(_ b: QueryBound, name: String, sentinel: BoundKey) -> JSONMember {
            var parts = [JSONMember(key: "value", value: b.value.exportJSON())]
            if case .key(let k)? = b.key { parts.append(JSONMember(key: "key", value: .string(k.string))) }
            return JSONMember(key: name, value: .object(parts))
        }
        if let start {
            let name = start.exclusive || start.key == .max ? "startAfter" : "startAt"
            var b = start
            if start.key == .max && !start.exclusive { b = QueryBound(value: start.value, key: nil, exclusive: true) }
            members.append(bound(b, name: name, sentinel: .min))
        }
        if let end {
            let name = end.exclusive || end.key == .min ? "endBefore" : "endAt"
            var b = end
            if end.key == .min && !end.exclusive { b = QueryBound(value: end.value, key: nil, exclusive: true) }
            members.append(bound(b, name: name, sentinel: .max))
        }
        switch limit {
        case .first(let n)?: members.append(JSONMember(key: "limitToFirst", value: .number(Double(n))))
        case .last(let n)?: members.append(JSONMember(key: "limitToLast", value: .number(Double(n))))
        case nil: break
        }
        return .object(members)
    }

    private static func parseIndex(_ json: JSONValue?) throws(QueryError) -> QueryIndex {
        guard let json, !json.isNull else { return .priority }
        switch json {
        case .string("key"): return .key
        case .string("value"): return .value
        case .string("priority"): return .priority
        case .object(let m) where m.count == 1 && m[0].key == "child":
            guard case .string(let s) = m[0].value else {
                throw .malformed(field: "orderBy.child", expected: "a path string")
            }
            return .child(try parseChildPath(s))
        default:
            throw .malformed(field: "orderBy", expected: "\"key\", \"value\", \"priority\" or {\"child\": PATH}")
        }
    }

    /// Validates an orderByChild path as Firebase does.
    public static func parseChildPath(_ s: String) throws(QueryError) -> Path {
        if s == "$key" || s == "$value" || s == "$priority" {
            throw .invalidChildPath(path: s, reason: "\(s) is invalid; use orderBy \"key\", \"value\" or \"priority\"")
        }
        let path: Path
        do { path = try Path(validating: s) } catch { throw .invalidChildPath(path: s, reason: error.description) }
        if path.isRoot { throw .invalidChildPath(path: s, reason: "the path may not be empty; use orderBy \"value\"") }
        if path.isInfo || path.isPriority {
            throw .invalidChildPath(path: s, reason: "\".info\" and \".priority\" are not allowed")
        }
        return path
    }

    private static func parseBound(_ json: JSONValue, field: String) throws(QueryError) -> (Node, ChildKey?) {
        var valueJSON = json
        var key: ChildKey?
        if case .object(let m) = json, m.allSatisfy({ $0.key == "value" || $0.key == "key" }),
            m.contains(where: { $0.key == "value" })
        {
            valueJSON = m.first { $0.key == "value" }!.value
            if let k = m.first(where: { $0.key == "key" })?.value, !k.isNull {
                guard case .string(let s) = k else { throw .malformed(field: "\(field).key", expected: "a string") }
                key = ChildKey(s)
            }
        }
        switch valueJSON {
        case .object, .array: throw .objectBound(field: field)
        default: break
        }
        let node: Node
        do { node = try Node(json: valueJSON) } catch {
            throw .malformed(field: field, expected: "a string, number, boolean or null")
        }
        return (node, key)
    }

    private static func parseLimit(_ json: JSONValue, field: String) throws(QueryError) -> Int {
        guard case .number(let d) = json else { throw .limitNotPositiveInteger(field: field, value: json.serialized()) }
        guard d.rounded() == d, d > 0, d <= Double(QuerySpec.maxLimit) else {
            throw .limitNotPositiveInteger(field: field, value: json.serialized())
        }
        return Int(d)
    }
}
