import Foundation
import HearthModel

extension DataSnapshot {
    /// The data as Firebase's untyped `value`: `nil` when absent; `[String: Any]` for children,
    /// or `[Any]` when they look like an array (gaps are `NSNull()`); `Bool`, `String`; `Int`
    /// for integers that fit (`Int64` on 32-bit platforms beyond `Int`), `Double` otherwise.
    /// Priorities are left out. Prefer ``databaseValue`` or ``data(as:)`` for typed access.
    ///
    /// The database keeps keys that differ only in Unicode normalization (`"é"` and
    /// `"e\u{301}"`) as two children, but a `[String: Any]` cannot hold both: Swift's `String`
    /// finds them equal. An object with such keys is given, at whatever depth, as a
    /// ``DatabaseValue/Object`` (typed values, every child kept) instead of a `[String: Any]`,
    /// so a cast to `[String: Any]` fails rather than silently dropping a child.
    public var value: Any? {
        let v = databaseValue
        return v.isNull ? nil : v.anyValue
    }

    /// The data in Firebase's export format as untyped values (see ``exportedDatabaseValue``),
    /// or `nil` when absent. An object whose keys `String` would merge is a
    /// ``DatabaseValue/Object``, as in ``value``. A method, as Firebase's is.
    public func valueInExportFormat() -> Any? {
        let v = exportedDatabaseValue
        return v.isNull ? nil : v.anyValue
    }
}

extension DatabaseValue {
    /// The value as Firebase's untyped form (see ``DataSnapshot/value``).
    var anyValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return Int(exactly: i).map { $0 as Any } ?? i
        case .double(let d): return d
        case .string(let s): return s
        case .array(let a): return a.map(\.anyValue)
        case .object(let o):
            var members: [String: Any] = [:]
            members.reserveCapacity(o.count)
            for (key, value) in o.members where members.updateValue(value.anyValue, forKey: key.string) != nil {
                // Two distinct keys that String compares as equal: keep every child, typed.
                return o
            }
            return members
        case .serverValue(let p): return DatabaseValue(serverPlaceholderObject: p).anyValue
        }
    }

    /// The `.sv` object of a placeholder as a plain value.
    init(serverPlaceholderObject p: ServerPlaceholder) {
        switch p {
        case .timestamp: self = [".sv": "timestamp"]
        case .increment(let n): self = [".sv": ["increment": .int(n)]]
        case .incrementDouble(let n): self = [".sv": ["increment": .double(n)]]
        }
    }
}
