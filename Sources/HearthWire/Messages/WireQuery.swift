/// Firebase's wire form of a query: the object sent as `q` with a listen, and as the REST query
/// string (firebase-js-sdk `core/view/QueryParams.ts`, `queryParamsGetQueryObject` and
/// `queryParamsToRestQueryStringParameters`).
///
/// Wire object keys: `sp`/`sn`/`sin` start value, start key, start inclusive; `ep`/`en`/`ein`
/// the same for the end; `l` the limit and `vf` where it counts from (`"l"` first, `"r"` last);
/// `i` the index (`.key`, `.value`, a child path; absent for priority).
package enum WireQuery {
    /// Reads a wire query object (`null` or absent is the default query).
    /// - Throws: ``WireError/invalidQuery(_:)``.
    package static func decode(_ json: JSONValue?) throws(WireError) -> QuerySpec {
        guard let json, !json.isNull else { return .default }
        guard case .object = json else { throw .invalidQuery("the query must be an object") }
        do {
            var q = QuerySpec(orderBy: try index(json["i"]))
            let startSet = json["sp"] != nil || json["sn"] != nil
            if startSet {
                let value = try node(json["sp"], "sp")
                let inclusive = json["sin"]?.boolValue ?? true
                switch json["sn"]?.stringValue.map(BoundKey.init(wire:)) {
                case .max? where q.index != .key: q = try q.startAfter(value)
                case .min?, nil: q = inclusive ? try q.startAt(value) : try q.startAfter(value)
                case .max?: q = try q.startAfter(value)
                case .key(let k)?: q = inclusive ? try q.startAt(value, key: k) : try q.startAfter(value, key: k)
                }
            }
            if json["ep"] != nil || json["en"] != nil {
                let value = try node(json["ep"], "ep")
                let inclusive = json["ein"]?.boolValue ?? true
                switch json["en"]?.stringValue.map(BoundKey.init(wire:)) {
                case .min? where q.index != .key: q = try q.endBefore(value)
                case .max?, nil: q = inclusive ? try q.endAt(value) : try q.endBefore(value)
                case .min?: q = try q.endBefore(value)
                case .key(let k)?: q = inclusive ? try q.endAt(value, key: k) : try q.endBefore(value, key: k)
                }
            }
            if let l = json["l"] {
                guard let d = l.doubleValue, d == d.rounded(), d >= 1, d <= Double(QuerySpec.maxLimit) else {
                    throw WireError.invalidQuery("l must be a positive integer")
                }
                let fromLeft: Bool
                switch json["vf"]?.stringValue {
                case "l"?: fromLeft = true
                case "r"?: fromLeft = false
                case nil: fromLeft = startSet  // QueryParams.isViewFromLeft with no viewFrom
                default: throw WireError.invalidQuery("vf must be \"l\" or \"r\"")
                }
                q = fromLeft ? try q.limitToFirst(Int(d)) : try q.limitToLast(Int(d))
            }
            return q
        } catch let error as WireError {
            throw error
        } catch let error as QueryError {
            throw .invalidQuery(error.description)
        } catch {
            throw .invalidQuery("\(error)")
        }
    }

    private static func index(_ json: JSONValue?) throws(WireError) -> QueryIndex {
        guard let json, !json.isNull else { return .priority }
        guard let s = json.stringValue else { throw .invalidQuery("i must be a string") }
        switch s {
        case ".priority": return .priority
        case ".key": return .key
        case ".value": return .value
        default:
            do { return .child(try QuerySpec.parseChildPath(s)) } catch { throw .invalidQuery(error.description) }
        }
    }

    private static func node(_ json: JSONValue?, _ field: String) throws(WireError) -> Node {
        guard let json else { return .empty }
        do { return try Node(json: json) } catch { throw .invalidQuery("\(field): \(error)") }
    }

    /// The wire object for a query (`nil` for the default query, which the wire omits).
    package static func encode(_ query: QuerySpec) -> JSONValue? {
        if query.isDefault { return nil }
        var members: [JSONMember] = []
        // startAfter(v) on a non-key index is startAt(v, "[MAX_NAME]"), sent as the JS SDK
        // sends it: the sentinel name and "sin": false (endBefore mirrors it with MIN_NAME).
        func bound(_ b: QueryBound, _ p: (value: String, name: String, inclusive: String), sentinel: BoundKey) {
            members.append(JSONMember(key: p.value, value: b.value.exportJSON()))
            if let key = b.key { members.append(JSONMember(key: p.name, value: .string(key.wire))) }
            members.append(JSONMember(key: p.inclusive, value: .bool(b.key == sentinel ? false : !b.exclusive)))
        }
        if let start = query.start { bound(start, ("sp", "sn", "sin"), sentinel: .max) }
        if let end = query.end { bound(end, ("ep", "en", "ein"), sentinel: .min) }
        if let limit = query.limit {
            members.append(JSONMember(key: "l", value: .number(Double(limit.count))))
            if case .first = limit {
                members.append(JSONMember(key: "vf", value: .string("l")))
            } else {
                members.append(JSONMember(key: "vf", value: .string("r")))
            }
        }
        if query.index != .priority { members.append(JSONMember(key: "i", value: .string(query.index.wireName))) }
        return .object(members)
    }
}
