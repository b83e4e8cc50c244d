// OpenContainer: an array or object the parser has opened and not yet closed, with the duplicate-key
// check of its members (a scan for small objects, an index of exact UTF-8 keys for large ones).

/// A string compared and hashed by its exact UTF-8 bytes (for duplicate-key detection).
struct ExactKey: Hashable {
    let string: String
    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.hasSameUTF8(as: rhs.string)
    }
    func hash(into hasher: inout Hasher) {
        JSONValue.hashExactly(string, into: &hasher)
    }
}

/// An array or object still being parsed.
struct OpenContainer {
    /// Objects with at least this many members index their keys in a set; smaller ones scan.
    static let indexThreshold = 12

    let isObject: Bool
    var elements: [JSONValue] = []
    var members: [JSONMember] = []
    /// The key of the member whose value is being parsed (objects only).
    var pendingKey = ""
    /// Exact keys of `members`, built once the object is large enough.
    var keyIndex: Set<ExactKey>? = nil

    init(isObject: Bool) { self.isObject = isObject }

    func contains(key: String) -> Bool {
        if let keyIndex { return keyIndex.contains(ExactKey(string: key)) }
        return members.contains { $0.key.hasSameUTF8(as: key) }
    }

    mutating func addMember(_ value: JSONValue) {
        assert(isObject, "only an object has members")
        members.append(JSONMember(key: pendingKey, value: value))
        if keyIndex != nil {
            keyIndex?.insert(ExactKey(string: pendingKey))
        } else if members.count >= Self.indexThreshold {
            keyIndex = Set(members.map { ExactKey(string: $0.key) })
        }
    }
}
