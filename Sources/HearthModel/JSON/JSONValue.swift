// JSONValue: an in-memory JSON (RFC 8259) document that keeps strings and object keys exactly.

/// A JSON value (RFC 8259), as parsed by `JSONValue.parse(_:maxDepth:)` and written by
/// ``JSONValue/serialized(sortKeys:)``.
///
/// Invariants and conventions:
/// - Strings and object keys hold exactly the code points of the document. They are never
///   Unicode-normalized, and **equality and hashing of `JSONValue` compare strings by their
///   exact UTF-8 bytes**, not by Swift's canonical-equivalence `String ==`. So
///   `.string("\u{E9}") != .string("e\u{301}")`.
/// - Objects keep their members in document (insertion) order. Equality of two objects is
///   structural and order-sensitive: the same members in another order compare unequal.
///   Compare `serialized(sortKeys: true)` output for an order-insensitive comparison.
/// - The parser never produces an object with two exactly-equal keys; a value built by hand
///   may contain them, in which case lookups find the first.
/// - Numbers are `Double`. The parser never produces NaN or ±infinity; the writer prints a
///   non-finite number as `null` (as JavaScript's `JSON.stringify` does).
/// - `.bool` is never a number: `.bool(true) != .number(1)`.
public enum JSONValue: Sendable {
    /// The literal `null`.
    case null
    /// The literal `true` or `false`.
    case bool(Bool)
    /// A number. Parsed numbers are always finite.
    case number(Double)
    /// An integer a `Double` cannot hold exactly (|value| > 2^53), kept exact; the parser
    /// produces it for integer literals in that range that fit in 64 bits. Every other number
    /// is ``number(_:)`` — one representation per value (see ``integer(exactly:)``).
    case integer(Int64)
    /// A string, holding exactly the decoded code points.
    case string(String)
    /// An array, in document order.
    case array([JSONValue])
    /// An object: its members in document order.
    case object([JSONMember])
}

/// One `"key": value` member of a JSON object.
///
/// Equality and hashing compare ``key`` by its exact UTF-8 bytes (see ``JSONValue``).
public struct JSONMember: Sendable, Hashable {
    /// The member's key, exactly as decoded (never normalized).
    public var key: String
    /// The member's value.
    public var value: JSONValue

    /// Creates a member with the given key and value.
    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }

    /// Compares keys by exact UTF-8 bytes, then values.
    public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool {
        lhs.key.hasSameUTF8(as: rhs.key) && lhs.value == rhs.value
    }

    /// Hashes the key's exact UTF-8 bytes and the value.
    public func hash(into hasher: inout Hasher) {
        JSONValue.hashExactly(key, into: &hasher)
        hasher.combine(value)
    }
}

// MARK: - Equality and hashing

extension JSONValue: Hashable {
    /// Structural equality. Strings and keys compare by exact UTF-8 bytes; object members
    /// compare in order; numbers compare as `Double` (so `0 == -0`, and NaN is unequal to
    /// itself — the parser never produces NaN).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(a), .bool(b)):
            return a == b
        case let (.number(a), .number(b)):
            return a == b
        case let (.integer(a), .integer(b)):
            return a == b
        case let (.string(a), .string(b)):
            return a.hasSameUTF8(as: b)
        case let (.array(a), .array(b)):
            return a == b
        case let (.object(a), .object(b)):
            return a == b
        default:
            return false
        }
    }

    /// Hashes consistently with ``==(_:_:)`` (strings by exact UTF-8 bytes).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let b):
            hasher.combine(1 as UInt8)
            hasher.combine(b)
        case .number(let d):
            hasher.combine(2 as UInt8)
            hasher.combine(d)
        case .integer(let i):
            hasher.combine(6 as UInt8)
            hasher.combine(i)
        case .string(let s):
            hasher.combine(3 as UInt8)
            JSONValue.hashExactly(s, into: &hasher)
        case .array(let a):
            hasher.combine(4 as UInt8)
            hasher.combine(a)
        case .object(let m):
            hasher.combine(5 as UInt8)
            hasher.combine(m)
        }
    }

    /// Feeds the exact UTF-8 bytes of `s` (and their count, so concatenations differ) to `hasher`.
    static func hashExactly(_ s: String, into hasher: inout Hasher) {
        var s = s
        s.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}

// MARK: - Convenience accessors

extension JSONValue {
    /// For an object, the value of the first member whose key is exactly (byte-for-byte)
    /// `key`; otherwise `nil`. This is a linear scan over the members.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.key.hasSameUTF8(as: key) {
            return member.value
        }
        return nil
    }

    /// For an array, the element at `index` if it is in bounds; otherwise `nil`.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, if this is `.string`.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The number, if this is `.number` or `.integer` (never for `.bool`); an ``integer(_:)``
    /// rounded to the nearest `Double`.
    public var doubleValue: Double? {
        switch self {
        case .number(let d): d
        case .integer(let i): Double(i)
        default: nil
        }
    }

    /// The canonical JSON number for an integer: ``number(_:)`` when a `Double` holds it
    /// exactly (|value| ≤ 2^53), else ``integer(_:)``.
    public static func integer(exactly value: Int64) -> JSONValue {
        value.magnitude <= 1 << 53 ? .number(Double(value)) : .integer(value)
    }

    /// The boolean, if this is `.bool` (never for a number).
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The members in document order, if this is `.object`.
    public var objectMembers: [JSONMember]? {
        if case .object(let m) = self { return m }
        return nil
    }

    /// The elements, if this is `.array`.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// Creates `.bool(value)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates `.number(Double(value))`.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// Creates `.number(value)`.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// Creates `.string(value)`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates `.array(elements)`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Creates `.object` with the members in literal order (duplicates are kept as written).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { JSONMember(key: $0.0, value: $0.1) })
    }
}
