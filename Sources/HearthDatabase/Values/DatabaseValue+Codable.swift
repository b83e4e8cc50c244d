/// `DatabaseValue` is `Codable` with any coder, as the JSON it stands for: objects as keyed
/// containers, arrays as unkeyed ones, server values as their `.sv` objects. (Hearth's own
/// node encoder and decoder take it as it is, without going through these.) Object keys reach
/// the coder as coding keys: a coder that keeps its containers in `String`-keyed dictionaries
/// (Foundation's JSON coders do) merges keys that differ only in Unicode normalization, which
/// the database and ``DatabaseValue/Object`` keep apart.
extension DatabaseValue: Codable {
    /// Encodes the value as the JSON it stands for.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer()
            try c.encode(i)
        case .double(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .array(let elements):
            var c = encoder.unkeyedContainer()
            for element in elements { try c.encode(element) }
        case .object(let object):
            var c = encoder.container(keyedBy: NodeCodingKey.self)
            for (key, value) in object { try c.encode(value, forKey: NodeCodingKey(stringValue: key)) }
        case .serverValue(let placeholder):
            var c = encoder.container(keyedBy: NodeCodingKey.self)
            let sv = NodeCodingKey(stringValue: ".sv")
            switch placeholder {
            case .timestamp:
                try c.encode("timestamp", forKey: sv)
            case .increment(let n):
                var inner = c.nestedContainer(keyedBy: NodeCodingKey.self, forKey: sv)
                try inner.encode(n, forKey: NodeCodingKey(stringValue: "increment"))
            case .incrementDouble(let n):
                var inner = c.nestedContainer(keyedBy: NodeCodingKey.self, forKey: sv)
                try inner.encode(n, forKey: NodeCodingKey(stringValue: "increment"))
            }
        }
    }

    /// Decodes any JSON-shaped value: null, a boolean, an integer (as ``int(_:)``), another
    /// number, a string, an object (a lone `.sv` member reads as a server value) or an array.
    public init(from decoder: any Decoder) throws {
        if let c = try? decoder.singleValueContainer() {
            if c.decodeNil() {
                self = .null
                return
            }
            if let b = try? c.decode(Bool.self) {
                self = .bool(b)
                return
            }
            if let i = try? c.decode(Int64.self) {
                self = .int(i)
                return
            }
            if let d = try? c.decode(Double.self) {
                self = .double(d)
                return
            }
            if let s = try? c.decode(String.self) {
                self = .string(s)
                return
            }
        }
        if let c = try? decoder.container(keyedBy: NodeCodingKey.self) {
            var members = Object()
            for key in c.allKeys { members[key.stringValue] = try c.decode(DatabaseValue.self, forKey: key) }
            if members.count == 1, let sv = members[".sv"], let placeholder = ServerPlaceholder(sv) {
                self = .serverValue(placeholder)
            } else {
                self = .object(members)
            }
            return
        }
        var c = try decoder.unkeyedContainer()
        var elements: [DatabaseValue] = []
        while !c.isAtEnd { elements.append(try c.decode(DatabaseValue.self)) }
        self = .array(elements)
    }
}

extension DatabaseValue.ServerPlaceholder {
    /// The placeholder a `.sv` member's value names, or `nil`.
    init?(_ sv: DatabaseValue) {
        switch sv {
        case .string("timestamp"): self = .timestamp
        case .object(let o) where o.count == 1:
            switch o["increment"] {
            case .int(let n)?: self = .increment(n)
            case .double(let n)?: self = .incrementDouble(n)
            default: return nil
            }
        default: return nil
        }
    }
}
