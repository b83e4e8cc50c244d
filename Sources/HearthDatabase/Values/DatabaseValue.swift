/// A value to write to, or read from, the database: Firebase's JSON-like data, typed.
///
/// Write literals directly — `["name": "Ada", "score": 3, "tags": ["a", "b"], "left": nil]` —
/// or build values case by case. (Passed straight to a write, a literal picks Firebase's untyped
/// form, `setValue(_ value: Any?)`, to the same effect; give it a type — `let v: DatabaseValue =
/// […]` — for the typed, throwing form, and for keys that differ only in Unicode
/// normalization, which a Swift dictionary literal cannot hold.) What the database keeps is
/// what Firebase keeps:
/// - `null`, an empty ``array(_:)`` and an empty ``object(_:)`` all mean "no value" (writing one
///   deletes), and `null` members of objects are dropped;
/// - an ``array(_:)`` is stored as an object keyed `"0"`, `"1"`, …, and read back as an array
///   only when its keys look like one (see ``DataSnapshot/databaseValue``);
/// - numbers are doubles; integers stay exact (as ``int(_:)``) up to the full 64-bit range;
/// - the keys `.priority`, `.value` and `.sv` have Firebase's meanings: `[".value": 3,
///   ".priority": 1]` is the number 3 with priority 1, and `[".sv": "timestamp"]` is the same
///   placeholder as ``ServerValue/timestamp()``;
/// - keys are compared exactly, code unit by code unit: `"é"` and `"e\u{301}"` are two keys,
///   as in Firebase, so an object's children are an ``Object`` rather than a
///   `[String: DatabaseValue]` (whose `String` keys would merge them).
///
/// Invalid values (NaN or infinite numbers, keys holding `.` `#` `$` `[` `]` `/` or control
/// characters) are refused when written, with an error naming the path.
public enum DatabaseValue: Sendable, Hashable {
    /// No value (JSON `null`).
    case null
    /// A boolean.
    case bool(Bool)
    /// An integer.
    case int(Int64)
    /// A floating-point number (must be finite to be written).
    case double(Double)
    /// A string.
    case string(String)
    /// An array, stored as an object keyed by index.
    case array([DatabaseValue])
    /// An object: children by key, keys compared exactly (see ``Object``: two keys that differ
    /// only in Unicode normalization are two children, as in the database).
    case object(Object)
    /// A placeholder the server resolves: its clock, or an increment. Make one with
    /// ``ServerValue``.
    case serverValue(ServerPlaceholder)

    /// A value the server computes when it applies the write.
    ///
    /// The app's side of the data model's `ServerValuePlaceholder`, which a write becomes: it
    /// keeps an integer delta apart from a floating-point one, as ``DatabaseValue`` keeps
    /// ``int(_:)`` apart from ``double(_:)``, so that a value reads back as the app wrote it.
    public enum ServerPlaceholder: Sendable, Hashable {
        /// The server's clock, in milliseconds since the Unix epoch (`{".sv": "timestamp"}`).
        case timestamp
        /// The current number plus this integer (`{".sv": {"increment": n}}`).
        case increment(Int64)
        /// The current number plus this floating-point delta.
        case incrementDouble(Double)
    }

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The children of an ``object(_:)``, or `nil`.
    public var objectValue: Object? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements of an ``array(_:)``, or `nil`.
    public var arrayValue: [DatabaseValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The string of a ``string(_:)``, or `nil`.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The boolean of a ``bool(_:)``, or `nil`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The number of an ``int(_:)`` or ``double(_:)`` as a `Double`, or `nil`.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// The number of an ``int(_:)``, or of a ``double(_:)`` holding an integer exactly, as an
    /// `Int64`; else `nil`.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): i
        case .double(let d): Int64(exactly: d)
        default: nil
        }
    }

    /// The child under exactly `key` of an ``object(_:)`` (or the element at an integer `key`
    /// of an ``array(_:)``), or `nil`.
    public subscript(key: String) -> DatabaseValue? {
        switch self {
        case .object(let o): return o[key]
        case .array(let a):
            guard let i = Int(key), a.indices.contains(i) else { return nil }
            return a[i]
        default: return nil
        }
    }
}

extension DatabaseValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// `true` / `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal is ``int(_:)``.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A float literal is ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal.
    public init(arrayLiteral elements: DatabaseValue...) { self = .array(elements) }
    /// A dictionary literal, an ``object(_:)``; a key repeated with the same code units keeps
    /// its last value, and keys that differ only in Unicode normalization stay two children.
    public init(dictionaryLiteral elements: (String, DatabaseValue)...) {
        self = .object(Object(elements.lazy.map { (key: $0.0, value: $0.1) }))
    }
}

extension DatabaseValue: CustomStringConvertible {
    /// The value as compact JSON (object keys sorted; server values as their `.sv` objects).
    public var description: String { jsonValue.serialized(sortKeys: true) }
}
