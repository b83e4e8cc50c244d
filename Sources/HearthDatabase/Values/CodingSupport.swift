import Foundation

// Pieces shared by NodeEncoder and NodeDecoder.

/// How `Date` values are written and read.
///
/// Hearth follows Firebase's Swift default (`FirebaseDataEncoder` and `FirebaseDataDecoder`
/// default to `.deferredToDate`), so data written by Firebase's iOS SDK reads back the same:
/// a `Date` is stored as `Date`'s own `Codable` form, a number of seconds since
/// 2001-01-01T00:00:00Z. ``millisecondsSince1970`` matches ``ServerValue/timestamp()``.
enum DateCodingStrategy: Sendable, Hashable {
    /// `Date`'s own `Codable` form: seconds since 2001-01-01 (Firebase's default).
    case deferredToDate
    /// Seconds since 1970-01-01 as a number.
    case secondsSince1970
    /// Milliseconds since 1970-01-01 as a number (what `ServerValue.timestamp()` writes).
    case millisecondsSince1970
}

/// A coding key for array indices and dictionary keys that the coded type did not define.
struct NodeCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    /// The key `super` that `superEncoder()` / `superDecoder()` use, as Foundation's coders do.
    static let superKey = NodeCodingKey(stringValue: "super")
}

/// A coding path as a slash-separated string for error messages (`/` for the top level).
func describe(_ codingPath: [any CodingKey]) -> String {
    codingPath.isEmpty ? "/" : codingPath.map(\.stringValue).joined(separator: "/")
}

/// Collections that a missing or null node decodes as empty: Firebase stores an empty array or
/// dictionary as nothing at all, so a struct written with `tags: []` must read back.
protocol EmptyCollectionDecodable {
    /// The empty collection.
    static var emptyCollection: Self { get }
}

extension Array: EmptyCollectionDecodable where Element: Decodable {
    static var emptyCollection: [Element] { [] }
}

extension Dictionary: EmptyCollectionDecodable where Key: Decodable, Value: Decodable {
    static var emptyCollection: [Key: Value] { [:] }
}

extension Set: EmptyCollectionDecodable where Element: Decodable {
    static var emptyCollection: Set<Element> { [] }
}
