import Foundation

/// Marks an optional `Date` property to be filled in with the server's clock when written
/// (FirebaseDatabaseSwift's `@ServerTimestamp`):
///
/// ```
/// struct Message: Codable {
///     var text: String
///     @ServerTimestamp var sentAt: Date?
/// }
/// ```
///
/// Writing `Message(text: "hi")` stores `sentAt` as ``ServerValue/timestamp()`` (`{".sv":
/// "timestamp"}`), which the server replaces with its clock in milliseconds since 1970; a date
/// is stored as those milliseconds. Reading decodes the milliseconds as a date, and a missing
/// or null value as `nil`. With other encoders (`JSONEncoder`), `nil` is the `.sv` object.
@propertyWrapper
public struct ServerTimestamp: Codable, Hashable, Sendable {
    /// The date, or `nil` for "the server's clock when written".
    public var wrappedValue: Date?

    /// A timestamp holding `value` (`nil`: the server's clock).
    public init(wrappedValue value: Date?) {
        self.wrappedValue = value
    }

    /// Decodes milliseconds since 1970 as a date, null as `nil`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else {
            wrappedValue = Date(timeIntervalSince1970: try container.decode(Double.self) / 1000)
        }
    }

    /// Encodes the date as milliseconds since 1970 (rounded to an integer), `nil` as the
    /// server-timestamp placeholder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let date = wrappedValue {
            guard let milliseconds = Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) else {
                throw EncodingError.invalidValue(
                    date,
                    .init(codingPath: encoder.codingPath, debugDescription: "\(date) is beyond 64-bit milliseconds"))
            }
            try container.encode(milliseconds)
        } else {
            try container.encode(DatabaseValue.serverTimestamp)
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing `@ServerTimestamp` property decodes as `nil`, as a missing optional does (the
    /// database stores nothing for a null value, so the key is absent).
    public func decode(_ type: ServerTimestamp.Type, forKey key: Key) throws -> ServerTimestamp {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}
