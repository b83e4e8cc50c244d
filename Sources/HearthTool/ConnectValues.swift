import Hearth
import HearthDatabase

// `hearth connect`'s translations between its JSON lines and the HearthDatabase API: values,
// paths, queries and event types. Everything here refuses bad input with a ConnectLineError.

/// Why one input line of `hearth connect` was refused (printed as a JSON error line).
struct ConnectLineError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The fields of one command line, with typed access that names the field on failure.
struct ConnectFields {
    let op: String
    let members: [JSONMember]

    /// The fields of `json`, which must be an object with a string `op` and no field outside
    /// `allowed(op)` (`op` and `id` are always allowed).
    init(_ json: JSONValue, allowed: (String) -> Set<String>?) throws(ConnectLineError) {
        guard let members = json.objectMembers else { throw ConnectLineError("a command is a JSON object") }
        guard let opValue = members.first(where: { $0.key == "op" })?.value else {
            throw ConnectLineError("missing field \"op\"")
        }
        guard let op = opValue.stringValue else { throw ConnectLineError("field \"op\": expected a string") }
        guard let known = allowed(op) else { throw ConnectLineError("unknown op \"\(op)\"") }
        for m in members where m.key != "op" && m.key != "id" && !known.contains(m.key) {
            throw ConnectLineError("unknown field \"\(m.key)\" for op \"\(op)\"")
        }
        self.op = op
        self.members = members
    }

    subscript(_ name: String) -> JSONValue? { members.first { $0.key == name }?.value }

    /// A required field.
    func required(_ name: String) throws(ConnectLineError) -> JSONValue {
        guard let v = self[name] else { throw ConnectLineError("missing field \"\(name)\"") }
        return v
    }

    func bool(_ name: String) throws(ConnectLineError) -> Bool {
        guard let b = try required(name).boolValue else {
            throw ConnectLineError("field \"\(name)\": expected true or false")
        }
        return b
    }

    /// An optional string field (absent or null: nil).
    func optionalString(_ name: String) throws(ConnectLineError) -> String? {
        guard let v = self[name], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw ConnectLineError("field \"\(name)\": expected a string") }
        return s
    }

    /// A required value (any JSON; `null` deletes).
    func value(_ name: String) throws(ConnectLineError) -> DatabaseValue {
        ConnectJSON.databaseValue(try required(name))
    }
}

enum ConnectJSON {
    /// A JSON value as a database value: integral numbers exactly as integers, everything else
    /// as is (`.sv`, `.priority` and `.value` members keep Firebase's meanings when written).
    static func databaseValue(_ json: JSONValue) -> DatabaseValue {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .number(let d):
            if d.rounded() == d, abs(d) <= 9_007_199_254_740_992, let i = Int64(exactly: d) { return .int(i) }
            return .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(databaseValue))
        case .object(let members):
            var o = DatabaseValue.Object()
            for m in members { o[m.key] = databaseValue(m.value) }
            return .object(o)
        }
    }

    /// A database value as JSON (object members in the database's key order, so output is
    /// deterministic; keys that differ only in Unicode normalization stay two members).
    static func json(_ value: DatabaseValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .integer(exactly: i)
        case .double(let d): return .number(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(json))
        case .object(let o): return .object(o.map { JSONMember(key: $0.key, value: json($0.value)) })
        case .serverValue(.timestamp): return [".sv": "timestamp"]
        case .serverValue(.increment(let n)): return [".sv": ["increment": .integer(exactly: n)]]
        case .serverValue(.incrementDouble(let n)): return [".sv": ["increment": .number(n)]]
        }
    }

    /// The reference for a `path` field: absent, `""` or `"/"` is the root; every key is
    /// checked (a first key `.info` is allowed when `info` is true).
    static func reference(
        _ database: Database, _ fields: ConnectFields, info: Bool
    ) throws(ConnectLineError) -> DatabaseReference {
        guard let raw = fields["path"], !raw.isNull else { return database.reference() }
        guard let path = raw.stringValue else { throw ConnectLineError("field \"path\": expected a string") }
        let keys = Path.segments(of: path)
        if keys.isEmpty { return database.reference() }
        for (i, key) in keys.enumerated() where !(i == 0 && info && key == ".info") {
            do { try ChildKey.validate(key) } catch { throw ConnectLineError("field \"path\": \(error)") }
        }
        if keys.count > Path.maxDepth { throw ConnectLineError("field \"path\": deeper than \(Path.maxDepth) keys") }
        return database.reference(withPath: keys.joined(separator: "/"))
    }

    static let queryFields: Set<String> = [
        "orderBy", "startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast",
    ]

    /// The query a `query` field describes at `ref`, built with the query builders:
    /// `{"orderBy": "$key"|"key"|"$value"|"value"|"$priority"|"priority"|"child/path"|{"child":
    /// "a/b"}, "startAt"|"startAfter"|"endAt"|"endBefore"|"equalTo": V or {"value": V, "key": K},
    /// "limitToFirst"|"limitToLast": N}` (``ToolQuery``: the syntax of every command).
    /// Absent, `null` or `{}`: the reference's default query. Checked first against the
    /// model's rules so a bad query is refused at once.
    static func query(_ ref: DatabaseReference, _ json: JSONValue?) throws(ConnectLineError) -> DatabaseQuery {
        guard let json, !json.isNull else { return ref.databaseQuery }
        guard let members = json.objectMembers else { throw ConnectLineError("field \"query\": expected an object") }
        for m in members where !queryFields.contains(m.key) {
            throw ConnectLineError("field \"query\": unknown field \"\(m.key)\"")
        }
        func field(_ name: String) -> JSONValue? { members.first { $0.key == name }?.value }

        // The model's own parser checks the combination, in the tool's one query syntax.
        let spec: QuerySpec
        do { spec = try ToolQuery.spec(json) } catch { throw ConnectLineError("field \"query\": \(error)") }
        var q = ref.databaseQuery
        if field("orderBy") != nil {
            switch spec.index {
            case .key: q = q.queryOrderedByKey()
            case .value: q = q.queryOrderedByValue()
            case .priority: q = q.queryOrderedByPriority()
            case .child(let path): q = q.queryOrdered(byChild: path.description)
            }
        }

        for name in ["equalTo", "startAt", "startAfter", "endAt", "endBefore"] {
            guard let b = field(name) else { continue }
            let (value, key) = try bound(b, name)
            switch name {
            case "equalTo": q = q.queryEqual(toValue: value, childKey: key)
            case "startAt": q = q.queryStarting(atValue: value, childKey: key)
            case "startAfter": q = q.queryStarting(afterValue: value, childKey: key)
            case "endAt": q = q.queryEnding(atValue: value, childKey: key)
            default: q = q.queryEnding(beforeValue: value, childKey: key)
            }
        }
        if let n = field("limitToFirst") { q = q.queryLimited(toFirst: try limit(n, "limitToFirst")) }
        if let n = field("limitToLast") { q = q.queryLimited(toLast: try limit(n, "limitToLast")) }
        return q
    }

    private static func bound(_ json: JSONValue, _ name: String) throws(ConnectLineError) -> (DatabaseValue, String?) {
        if let members = json.objectMembers {
            guard let v = members.first(where: { $0.key == "value" })?.value,
                members.allSatisfy({ $0.key == "value" || $0.key == "key" })
            else { throw ConnectLineError("field \"query\": \(name): expected a value or {\"value\": V, \"key\": K}") }
            let k = members.first { $0.key == "key" }?.value
            if let k, !k.isNull, k.stringValue == nil {
                throw ConnectLineError("field \"query\": \(name): key: expected a string")
            }
            return (databaseValue(v), k?.stringValue)
        }
        return (databaseValue(json), nil)
    }

    private static func limit(_ json: JSONValue, _ name: String) throws(ConnectLineError) -> Int {
        guard let d = json.doubleValue, let n = Int(exactly: d) else {
            throw ConnectLineError("field \"query\": \(name): expected an integer")
        }
        return n
    }

    /// The event types of a `listen`: names as Firebase's JavaScript SDK spells them
    /// (`value`, `child_added`, …) or as Swift does (`childAdded`, …). Default `["value"]`.
    static func eventTypes(_ json: JSONValue?) throws(ConnectLineError) -> [DataEventType] {
        guard let json, !json.isNull else { return [.value] }
        let names: [JSONValue] = json.arrayValue ?? [json]
        var types: [DataEventType] = []
        for n in names {
            guard let s = n.stringValue, let t = eventType(s) else {
                throw ConnectLineError(
                    "field \"events\": expected value, child_added, child_changed, child_removed or child_moved, got \(n)"
                )
            }
            if !types.contains(t) { types.append(t) }
        }
        if types.isEmpty { throw ConnectLineError("field \"events\": empty") }
        return types
    }

    static func eventType(_ name: String) -> DataEventType? {
        switch name {
        case "value": .value
        case "child_added", "childAdded": .childAdded
        case "child_changed", "childChanged": .childChanged
        case "child_removed", "childRemoved": .childRemoved
        case "child_moved", "childMoved": .childMoved
        default: nil
        }
    }

    /// The name an event type is printed with (Firebase's JavaScript spelling).
    static func name(_ type: DataEventType) -> String {
        switch type {
        case .value: "value"
        case .childAdded: "child_added"
        case .childChanged: "child_changed"
        case .childRemoved: "child_removed"
        case .childMoved: "child_moved"
        }
    }
}
