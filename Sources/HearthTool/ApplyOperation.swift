import Hearth

/// One operation of `hearth apply`, parsed from one JSON line (Hearth's DocC article "The hearth tool", `hearth apply`).
enum ApplyOperation: Sendable {
    case serverSet(Path, Node)
    case serverUpdate(Path, [ChildUpdate])
    case set(Path, Node)
    case update(Path, [ChildUpdate])
    case ack(writeID: Int64)
    case revert(writeID: Int64)
    case trackQuery(QueryLocation, complete: Bool?, active: Bool?, keys: Set<ChildKey>?)
    case untrackQuery(QueryLocation)
    case keepSynced(QueryLocation, on: Bool)
    case auth(AuthToken)
    case signOut
    case serverTimeOffset(ms: Double)
    case onDisconnect(OnDisconnectOperation.Action, Path)
    case compact

    /// The fields each operation takes (besides "op").
    static let fields: [String: Set<String>] = [
        "serverSet": ["path", "value"], "serverUpdate": ["path", "children"],
        "set": ["path", "value"], "update": ["path", "children"],
        "ack": ["writeId"], "revert": ["writeId"],
        "trackQuery": ["path", "query", "complete", "active", "keys"],
        "untrackQuery": ["path", "query"], "keepSynced": ["path", "query", "on"],
        "auth": ["token", "expiresAt"], "signOut": [], "serverTimeOffset": ["ms"],
        "onDisconnect": ["action", "path", "value"], "compact": [],
    ]

    /// Parses one line.
    init(line: String) throws(ApplyLineError) {
        try self.init(line: Array(line.utf8))
    }

    /// Parses one input line from its bytes, which must be UTF-8: an invalid sequence is an
    /// error naming its byte offset in the line, never replaced (two different keys must not
    /// collapse into one U+FFFD).
    init(line: [UInt8]) throws(ApplyLineError) {
        let json: JSONValue
        do { json = try JSONValue.parse(line) } catch { throw .invalidJSON(error) }
        try self.init(json: json)
    }

    /// Parses one operation object.
    init(json: JSONValue) throws(ApplyLineError) {
        guard let members = json.objectMembers else { throw .notAnObject }
        let f = Fields(members)
        let op = try f.string("op")
        guard let allowed = ApplyOperation.fields[op] else { throw .unknownOperation(op) }
        for m in members where m.key != "op" && !allowed.contains(m.key) { throw .unknownField(op: op, field: m.key) }
        switch op {
        case "serverSet":
            let path = try f.path("path")
            self = .serverSet(path, try f.node("value", at: path))
        case "serverUpdate":
            let path = try f.path("path")
            self = .serverUpdate(path, try f.children("children", at: path))
        case "set":
            let path = try f.path("path")
            self = .set(path, try f.node("value", at: path))
        case "update":
            let path = try f.path("path")
            self = .update(path, try f.children("children", at: path))
        case "ack": self = .ack(writeID: try f.id("writeId"))
        case "revert": self = .revert(writeID: try f.id("writeId"))
        case "trackQuery":
            let location = QueryLocation(path: try f.path("path"), query: try f.query("query"))
            self = .trackQuery(
                location, complete: try f.optionalBool("complete"), active: try f.optionalBool("active"),
                keys: try f.keys("keys"))
        case "untrackQuery":
            self = .untrackQuery(QueryLocation(path: try f.path("path"), query: try f.query("query")))
        case "keepSynced":
            let location = QueryLocation(path: try f.path("path"), query: try f.query("query"))
            guard let on = try f.optionalBool("on") else { throw .missingField("on") }
            self = .keepSynced(location, on: on)
        case "auth":
            self = .auth(AuthToken(token: try f.string("token"), expiresAt: try f.integer("expiresAt")))
        case "signOut": self = .signOut
        case "serverTimeOffset": self = .serverTimeOffset(ms: try f.number("ms"))
        case "onDisconnect":
            let action = try f.string("action")
            let path = try f.path("path")
            switch action {
            case "set": self = .onDisconnect(.set(try f.node("value", at: path)), path)
            case "update": self = .onDisconnect(.update(try f.children("value", at: path)), path)
            case "remove", "cancel":
                if let v = f["value"], !v.isNull {
                    throw .wrongType(field: "value", expected: "absent for action \"\(action)\"")
                }
                self = .onDisconnect(action == "remove" ? .remove : .cancel, path)
            default:
                throw .wrongType(field: "action", expected: "\"set\", \"update\", \"remove\" or \"cancel\"")
            }
        default:  // "compact"
            self = .compact
        }
    }
}

/// Why a line of `hearth apply` is not a valid operation. Every case names the field.
enum ApplyLineError: Error, CustomStringConvertible {
    case invalidJSON(JSONError)
    case notAnObject
    case missingField(String)
    case wrongType(field: String, expected: String)
    case unknownOperation(String)
    case unknownField(op: String, field: String)
    case invalidPath(field: String, PathError)
    case invalidData(field: String, NodeError)
    case invalidQuery(field: String, QueryError)

    var description: String {
        switch self {
        case .invalidJSON(let e): "invalid JSON: \(e)"
        case .notAnObject: "an operation must be a JSON object"
        case .missingField(let f): "missing field \"\(f)\""
        case let .wrongType(f, expected): "field \"\(f)\": expected \(expected)"
        case .unknownOperation(let op): "unknown op \"\(op)\""
        case let .unknownField(op, f): "unknown field \"\(f)\" for op \"\(op)\""
        case let .invalidPath(f, e): "field \"\(f)\": \(e)"
        case let .invalidData(f, e): "field \"\(f)\": \(e)"
        case let .invalidQuery(f, e): "field \"\(f)\": invalid query: \(e)"
        }
    }
}

/// Typed access to an operation's fields.
private struct Fields {
    let members: [JSONMember]
    init(_ members: [JSONMember]) { self.members = members }

    subscript(_ name: String) -> JSONValue? { members.first { $0.key == name }?.value }

    func required(_ name: String) throws(ApplyLineError) -> JSONValue {
        guard let v = self[name] else { throw .missingField(name) }
        return v
    }

    func string(_ name: String) throws(ApplyLineError) -> String {
        guard let s = try required(name).stringValue else { throw .wrongType(field: name, expected: "a string") }
        return s
    }

    func number(_ name: String) throws(ApplyLineError) -> Double {
        guard let d = try required(name).doubleValue else { throw .wrongType(field: name, expected: "a number") }
        return d
    }

    func integer(_ name: String) throws(ApplyLineError) -> Int64 {
        let d = try number(name)
        guard d.rounded() == d, abs(d) <= 9_007_199_254_740_992 else {
            throw .wrongType(field: name, expected: "an integer")
        }
        return Int64(d)
    }

    func id(_ name: String) throws(ApplyLineError) -> Int64 {
        let n = try integer(name)
        guard n >= 1 else { throw .wrongType(field: name, expected: "a positive integer") }
        return n
    }

    func optionalBool(_ name: String) throws(ApplyLineError) -> Bool? {
        guard let v = self[name], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw .wrongType(field: name, expected: "true or false") }
        return b
    }

    func path(_ name: String) throws(ApplyLineError) -> Path {
        let s = try string(name)
        do { return try Path(validating: s) } catch { throw .invalidPath(field: name, error) }
    }

    func node(_ name: String, at path: Path) throws(ApplyLineError) -> Node {
        let value = try required(name)
        do { return try Node(json: value, at: path) } catch { throw .invalidData(field: name, error) }
    }

    /// `{REL: V, …}`: relative paths and export-format values, in document order.
    func children(_ name: String, at path: Path) throws(ApplyLineError) -> [ChildUpdate] {
        guard let members = try required(name).objectMembers else {
            throw .wrongType(field: name, expected: "an object of relative paths to values")
        }
        var out: [ChildUpdate] = []
        out.reserveCapacity(members.count)
        for m in members {
            let rel: Path
            do { rel = try Path(validating: m.key) } catch { throw .invalidPath(field: "\(name).\(m.key)", error) }
            if rel.isRoot { throw .wrongType(field: name, expected: "non-empty relative paths as keys") }
            let node: Node
            do { node = try Node(json: m.value, at: path.appending(rel)) } catch {
                throw .invalidData(field: "\(name).\(m.key)", error)
            }
            out.append(ChildUpdate(path: rel, node: node))
        }
        return out
    }

    /// An optional query; absent, `null` or `{}` is the default query.
    func query(_ name: String) throws(ApplyLineError) -> QuerySpec {
        guard let v = self[name] else { return .default }
        do { return try ToolQuery.spec(v) } catch { throw .invalidQuery(field: name, error) }
    }

    func keys(_ name: String) throws(ApplyLineError) -> Set<ChildKey>? {
        guard let v = self[name], !v.isNull else { return nil }
        guard let items = v.arrayValue else { throw .wrongType(field: name, expected: "an array of keys") }
        var keys = Set<ChildKey>()
        for item in items {
            guard let s = item.stringValue else { throw .wrongType(field: name, expected: "an array of key strings") }
            do { keys.insert(try ChildKey.validated(s)) } catch { throw .invalidPath(field: name, error) }
        }
        return keys
    }
}
