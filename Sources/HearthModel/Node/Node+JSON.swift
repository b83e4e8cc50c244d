/// Data that cannot become a ``Node``. Every case names the offending path.
public enum NodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not valid JSON.
    case json(JSONError)
    /// A key breaks Firebase's key rules.
    case invalidKey(path: String, PathError)
    /// The data nests deeper than ``Path/maxDepth`` levels below the root.
    case tooDeep(path: String)
    /// An object holds `.value` (or `.sv`) beside ordinary children.
    case valueWithChildren(path: String)
    /// A `.value` that is not a string, number or boolean.
    case invalidValue(path: String, reason: String)
    /// A `.priority` that is not null, a number or a string.
    case invalidPriority(path: String)
    /// A `.sv` placeholder Hearth does not know (`timestamp` and `{"increment": n}` are known).
    case invalidServerValue(path: String)
    /// A string leaf longer than ``Node/maxLeafUTF8Length`` bytes.
    case leafTooLarge(path: String, utf8Length: Int)

    public var description: String {
        switch self {
        case .json(let e): "invalid JSON: \(e)"
        case let .invalidKey(path, e): "invalid data at \"\(path)\": \(e)"
        case .tooDeep(let path): "invalid data at \"\(path)\": nested deeper than \(Path.maxDepth) levels"
        case .valueWithChildren(let path): "invalid data at \"\(path)\": \".value\" or \".sv\" beside other children"
        case let .invalidValue(path, reason): "invalid data at \"\(path)\": \(reason)"
        case .invalidPriority(let path): "invalid priority at \"\(path)\": must be null, a number or a string"
        case .invalidServerValue(let path):
            "invalid server value at \"\(path)\": expected {\".sv\":\"timestamp\"} or {\".sv\":{\"increment\":n}}"
        case let .leafTooLarge(path, n):
            "invalid data at \"\(path)\": string of \(n) UTF-8 bytes exceeds \(Node.maxLeafUTF8Length)"
        }
    }
}

extension Node {
    /// The longest string leaf Firebase accepts, in UTF-8 bytes (10 MiB).
    public static let maxLeafUTF8Length = 10 * 1024 * 1024

    /// Parses JSON text in plain or export format (see ``init(json:at:)``).
    public init(jsonText text: String, at path: Path = .root) throws(NodeError) {
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch { throw .json(error) }
        try self.init(json: value, at: path)
    }

    /// Converts JSON in plain or Firebase export format to a node, validating it as Firebase
    /// validates written data.
    ///
    /// - `null`, `{}` and objects whose children are all null become the empty node.
    /// - Arrays become children keyed `"0"`, `"1"`, … (null elements are absent).
    /// - `{".value": v, ".priority": p}` is a leaf with a priority; `".priority"` beside
    ///   ordinary children is the children node's priority; a priority on an empty node is
    ///   dropped.
    /// - `{".sv": "timestamp"}` and `{".sv": {"increment": n}}` are server-value placeholders,
    ///   also as `{".value": {".sv": …}, ".priority": p}`.
    /// - Keys are validated; the depth below the root (counting `path`) is at most
    ///   ``Path/maxDepth``; strings are at most ``maxLeafUTF8Length`` bytes.
    ///
    /// - Parameter json: the written JSON, as the wire or a REST body carries it.
    /// - Parameter path: where the data will be written, used for the depth limit and for
    ///   error messages.
    /// - Throws: ``NodeError`` naming the offending path.
    public init(json: JSONValue, at path: Path = .root) throws(NodeError) {
        self = try Node.convert(json, path: path.keys)
    }

    private static func convert(_ json: JSONValue, path: [ChildKey]) throws(NodeError) -> Node {
        func here() -> String { Path(keys: path).description }
        switch json {
        case .null:
            return .empty
        case .bool(let b):
            return Node(.bool(b))
        case .number(let n):
            guard n.isFinite else { throw .invalidValue(path: here(), reason: "numbers must be finite") }
            return Node(.number(n))
        case .integer(let i):
            return Node(.integer(exactly: i))
        case .string(let s):
            let n = s.utf8.count
            if n > maxLeafUTF8Length { throw .leafTooLarge(path: here(), utf8Length: n) }
            return Node(.string(s))
        case .array(let elements):
            var pairs: [(key: ChildKey, value: Node)] = []
            pairs.reserveCapacity(elements.count)
            for (i, element) in elements.enumerated() {
                let key = ChildKey(String(i))
                let child = try convertChild(element, key: key, path: path)
                if !child.isEmpty { pairs.append((key, child)) }
            }
            // "0", "1", … "10" are integer keys, so index order is key order.
            return Node(children: ChildMap(sortedPairs: pairs))
        case .object(let members):
            var priorityJSON: JSONValue?
            var valueJSON: JSONValue?
            var serverValueJSON: JSONValue?
            var pairs: [(key: ChildKey, value: Node)] = []
            pairs.reserveCapacity(members.count)
            for member in members {
                switch member.key {
                case ".priority": priorityJSON = member.value
                case ".value": valueJSON = member.value
                case ".sv": serverValueJSON = member.value
                default:
                    do { try ChildKey.validate(member.key) } catch {
                        throw .invalidKey(
                            path: here(), error.inPath(Path(keys: path).child(ChildKey(member.key)).description))
                    }
                    let key = ChildKey(member.key)
                    let child = try convertChild(member.value, key: key, path: path)
                    if !child.isEmpty { pairs.append((key, child)) }
                }
            }
            let hasOrdinaryChildren = members.contains { !$0.key.hasPrefix(".") }
            let priority = try priorityJSON.flatMap { (p) throws(NodeError) -> Priority? in
                try convertPriority(p, path: path)
            }
            if valueJSON != nil || serverValueJSON != nil {
                if hasOrdinaryChildren || (valueJSON != nil && serverValueJSON != nil) {
                    throw .valueWithChildren(path: here())
                }
                if let serverValueJSON {
                    return Node(.serverValue(try convertServerValue(serverValueJSON, path: path)), priority: priority)
                }
                switch valueJSON! {
                case .null:
                    return .empty
                case .object(let inner) where inner.count == 1 && inner[0].key == ".sv":
                    // `{".value": {".sv": …}}`: what Firebase's SDKs send for a server value with
                    // a priority (`val(true)` of such a node), a server value like any other.
                    return Node(.serverValue(try convertServerValue(inner[0].value, path: path)), priority: priority)
                case .object, .array:
                    throw .invalidValue(path: here(), reason: "\".value\" must be a string, number or boolean")
                case let leaf:
                    return try convert(leaf, path: path).withPriority(priority)
                }
            }
            return Node(children: ChildMap(pairs), priority: priority)
        }
    }

    private static func convertChild(_ json: JSONValue, key: ChildKey, path: [ChildKey]) throws(NodeError) -> Node {
        let childPath = path + [key]
        if childPath.count > Path.maxDepth, !json.isNull {
            throw .tooDeep(path: Path(keys: childPath).description)
        }
        return try convert(json, path: childPath)
    }

    private static func convertPriority(_ json: JSONValue, path: [ChildKey]) throws(NodeError) -> Priority? {
        switch json {
        case .null: return nil
        case .number(let n) where n.isFinite: return .number(n)
        // Priorities are doubles in every SDK: a 64-bit integer priority is rounded.
        case .integer(let i): return .number(Double(i))
        case .string(let s): return .string(s)
        default: throw .invalidPriority(path: Path(keys: path).description)
        }
    }

    private static func convertServerValue(
        _ json: JSONValue, path: [ChildKey]
    ) throws(NodeError) -> ServerValuePlaceholder {
        guard let placeholder = ServerValuePlaceholder(json: json) else {
            throw .invalidServerValue(path: Path(keys: path).description)
        }
        return placeholder
    }

    // MARK: - Export

    /// The node as JSON in Firebase's export format: priorities kept as `.priority`, a leaf
    /// with a priority as `{".value": v, ".priority": p}`. Children appear in key order.
    public func exportJSON() -> JSONValue { toJSON(export: true) }

    /// The node as plain JSON: values only, no priorities. Children appear in key order as
    /// objects (never arrays).
    public func plainJSON() -> JSONValue { toJSON(export: false) }

    /// ``exportJSON()`` serialized compactly.
    public func exportJSONString() -> String { exportJSON().serialized() }

    /// ``plainJSON()`` serialized compactly.
    public func plainJSONString() -> String { plainJSON().serialized() }

    private func toJSON(export: Bool) -> JSONValue {
        switch storage {
        case .empty:
            return .null
        case let .leaf(value, priority):
            let v = value.json
            if export, let priority {
                return .object([
                    JSONMember(key: ".value", value: v), JSONMember(key: ".priority", value: priority.leafValue.json),
                ])
            }
            return v
        case let .children(map, priority):
            var members: [JSONMember] = []
            members.reserveCapacity(map.count + 1)
            for (key, child) in map { members.append(JSONMember(key: key.string, value: child.toJSON(export: export))) }
            if export, let priority { members.append(JSONMember(key: ".priority", value: priority.leafValue.json)) }
            return .object(members)
        }
    }
}

extension LeafValue {
    /// The value as JSON (server values as their `.sv` placeholder objects).
    public var json: JSONValue {
        switch self {
        case .bool(let b): .bool(b)
        case .number(let n): .number(n)
        case .integer(let i): .integer(exactly: i)
        case .string(let s): .string(s)
        case .serverValue(.timestamp): .object([JSONMember(key: ".sv", value: .string("timestamp"))])
        case .serverValue(.increment(let n)):
            .object([JSONMember(key: ".sv", value: .object([JSONMember(key: "increment", value: .number(n))]))])
        }
    }
}
