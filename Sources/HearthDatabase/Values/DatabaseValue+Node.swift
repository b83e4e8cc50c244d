import HearthModel

// Conversions between the values apps write and read and the engine's nodes.

extension DatabaseValue {
    /// The value as JSON, in the shape Firebase sends it: arrays stay arrays, server values are
    /// their `.sv` objects, numbers are doubles or (beyond 2^53) exact integers.
    var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .integer(exactly: i)
        case .double(let d): return .number(d)
        case .string(let s): return .string(s)
        case .array(let elements): return .array(elements.map(\.jsonValue))
        case .object(let object):
            return .object(object.members.map { JSONMember(key: $0.key.string, value: $0.value.jsonValue) })
        case .serverValue(let placeholder): return placeholder.jsonValue
        }
    }

    /// The node this value denotes when written at `path`, validated as Firebase validates
    /// writes (see ``node(from:at:)``).
    func node(at path: Path) throws(DatabaseError) -> Node {
        if path.depth > Path.maxDepth {
            throw .invalidValue("path \"\(path)\" is \(path.depth) levels deep, at most \(Path.maxDepth) allowed")
        }
        do {
            return try Node(json: jsonValue, at: path)
        } catch {
            throw .invalidValue(error.description)
        }
    }

    /// The value of `node` as Firebase's `val()` gives it: priorities dropped, children whose
    /// keys are all array indices (`0`, `1`, … without leading zeros) and whose largest index
    /// is less than twice their count read as an array with `null` for the gaps.
    init(node: Node) {
        if let leaf = node.leafValue {
            self.init(leaf: leaf)
            return
        }
        if node.isEmpty {
            self = .null
            return
        }
        let children = node.children
        if let count = DatabaseValue.arrayLength(children) {
            var elements = [DatabaseValue](repeating: .null, count: count)
            for (key, child) in children {
                // arrayLength checked every key is an index below count.
                if let i = Int(key.string) { elements[i] = DatabaseValue(node: child) }
            }
            self = .array(elements)
        } else {
            var members: [ChildKey: DatabaseValue] = [:]
            members.reserveCapacity(children.count)
            for (key, child) in children { members[key] = DatabaseValue(node: child) }
            self = .object(Object(members: members))
        }
    }

    /// The value of `node` in Firebase's export format (`exportVal()`): children nodes are
    /// objects (never arrays) with their `.priority`; a leaf with a priority is
    /// `[".value": v, ".priority": p]`.
    init(exporting node: Node) {
        let priority = node.priority.map { DatabaseValue(leaf: $0.leafValue) }
        if let leaf = node.leafValue {
            let value = DatabaseValue(leaf: leaf)
            self = priority.map { .object([".value": value, ".priority": $0]) } ?? value
            return
        }
        if node.isEmpty {
            self = .null
            return
        }
        var members: [ChildKey: DatabaseValue] = [:]
        members.reserveCapacity(node.childCount + 1)
        for (key, child) in node.children { members[key] = DatabaseValue(exporting: child) }
        if let priority { members[ChildKey(".priority")] = priority }
        self = .object(Object(members: members))
    }

    /// A leaf's value: integral doubles within 64 bits read as ``int(_:)``.
    init(leaf: LeafValue) {
        switch leaf {
        case .bool(let b): self = .bool(b)
        case .number(let d): self = DatabaseValue.number(d)
        case .integer(let i): self = .int(i)
        case .string(let s): self = .string(s)
        case .serverValue(.timestamp): self = .serverValue(.timestamp)
        case .serverValue(.increment(let d)):
            if let i = DatabaseValue.exactInt64(d) {
                self = .serverValue(.increment(i))
            } else {
                self = .serverValue(.incrementDouble(d))
            }
        }
    }

    /// ``int(_:)`` for a double holding an integer exactly within `Int64`, else ``double(_:)``.
    static func number(_ d: Double) -> DatabaseValue {
        exactInt64(d).map(DatabaseValue.int) ?? .double(d)
    }

    /// `d` as an `Int64` when it is an integer in range (`-0.0` counts as 0).
    static func exactInt64(_ d: Double) -> Int64? {
        // 2^63 is exactly representable and out of range; Int64(exactly:) rejects it.
        guard d.isFinite, d.rounded(.towardZero) == d else { return nil }
        return Int64(exactly: d)
    }

    /// The array length Firebase's heuristic gives `children` (the largest index + 1), or `nil`
    /// when they do not read as an array: every key must match `^(0|[1-9][0-9]*)$` and the
    /// largest must be less than twice the number of children.
    static func arrayLength(_ children: ChildMap) -> Int? {
        let count = children.count
        guard count > 0 else { return nil }
        var maxIndex = 0
        for (key, _) in children {
            guard let index = arrayIndex(key.string) else { return nil }
            maxIndex = Swift.max(maxIndex, index)
        }
        return maxIndex < 2 * count ? maxIndex + 1 : nil
    }

    /// The index a key denotes under Firebase's array heuristic, or `nil` (also for indices too
    /// large to matter: beyond `Int.max` no children count could make them an array).
    static func arrayIndex(_ key: String) -> Int? {
        let utf8 = key.utf8
        guard let first = utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return nil }
        if first == UInt8(ascii: "0") && utf8.count > 1 { return nil }
        for byte in utf8 where byte < UInt8(ascii: "0") || byte > UInt8(ascii: "9") { return nil }
        return Int(key)
    }
}

extension DatabaseValue.ServerPlaceholder {
    /// The `.sv` object Firebase writes.
    var jsonValue: JSONValue {
        switch self {
        case .timestamp:
            return .object([JSONMember(key: ".sv", value: .string("timestamp"))])
        case .increment(let n):
            return .object([
                JSONMember(key: ".sv", value: .object([JSONMember(key: "increment", value: .integer(exactly: n))]))
            ])
        case .incrementDouble(let n):
            return .object([JSONMember(key: ".sv", value: .object([JSONMember(key: "increment", value: .number(n))]))])
        }
    }
}
