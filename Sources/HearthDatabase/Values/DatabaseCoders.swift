import Foundation
import HearthModel

/// Encodes `Encodable` values as the database's values — Firebase's `FirebaseDataEncoder`,
/// which its `Database.Encoder` names (as Hearth's does), with Firebase's strategies and defaults.
///
/// Keyed containers become objects, unkeyed containers arrays, `nil` optionals are left out,
/// `URL` is its absolute string, `Decimal` a number, ``DatabaseValue`` (and so
/// ``ServerValue``) itself. Integers must fit in `Int64`.
///
/// ```swift
/// let encoder = Database.Encoder()
/// encoder.keyEncodingStrategy = .convertToSnakeCase
/// encoder.dateEncodingStrategy = .millisecondsSince1970
/// try ref.setValue(from: Event(startsAt: Date()), encoder: encoder)
/// ```
///
/// Not `Sendable`, like Firebase's: configure one per use or per thread.
public final class DatabaseEncoder {
    /// How coding keys become database keys.
    public enum KeyEncodingStrategy {
        /// The coding keys as they are (the default).
        case useDefaultKeys
        /// camelCase keys as snake_case (`myURLValue` is `my_url_value`), as Foundation's
        /// `JSONEncoder` converts them — dictionary keys included.
        case convertToSnakeCase
        /// The key this function returns for the coding path ending with the key to encode.
        case custom((_ codingPath: [any CodingKey]) -> any CodingKey)
    }

    /// How `Date` values are written.
    public enum DateEncodingStrategy {
        /// `Date`'s own `Codable` form, seconds since 2001-01-01T00:00:00Z (Firebase's
        /// default, so data written by Firebase's SDK reads back the same).
        case deferredToDate
        /// Seconds since 1970-01-01 as a number.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 as a number, rounded to an integer (what
        /// ``ServerValue/timestamp()`` stores).
        case millisecondsSince1970
        /// An ISO 8601 string with time zone (`2023-11-14T22:13:20Z`).
        case iso8601
        /// A string from this formatter.
        case formatted(DateFormatter)
        /// Whatever this function encodes into the given encoder (nothing encoded is null).
        case custom((Date, any Swift.Encoder) throws -> Void)
    }

    /// How `Data` values are written.
    public enum DataEncodingStrategy {
        /// `Data`'s own `Codable` form, an array of bytes.
        case deferredToData
        /// A base64 string (the default).
        case base64
        /// Whatever this function encodes into the given encoder (nothing encoded is null).
        case custom((Data, any Swift.Encoder) throws -> Void)
    }

    /// How NaN and infinite floating-point values, which the database cannot store, are
    /// written.
    public enum NonConformingFloatEncodingStrategy {
        /// Refused with ``DatabaseError/invalidValue(_:)`` (the default).
        case `throw`
        /// As these strings.
        case convertToString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How coding keys become database keys;
    /// ``DatabaseEncoder/KeyEncodingStrategy/useDefaultKeys`` by default.
    public var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys
    /// How dates are written; ``DatabaseEncoder/DateEncodingStrategy/deferredToDate`` by default.
    public var dateEncodingStrategy: DateEncodingStrategy = .deferredToDate
    /// How `Data` is written; ``DatabaseEncoder/DataEncodingStrategy/base64`` by default.
    public var dataEncodingStrategy: DataEncodingStrategy = .base64
    /// How NaN and infinities are written;
    /// ``DatabaseEncoder/NonConformingFloatEncodingStrategy/throw`` by
    /// default.
    public var nonConformingFloatEncodingStrategy: NonConformingFloatEncodingStrategy = .throw
    /// Context for the encoded types' `encode(to:)`, as the encoder's `userInfo`.
    public var userInfo: [CodingUserInfoKey: Any] = [:]

    /// An encoder with Firebase's defaults.
    public init() {}

    /// `value` as Firebase's untyped value (what ``DataSnapshot/value`` gives and
    /// `setValue(_:)` takes): `[String: Any]`, `[Any]`, `String`, `Bool`, `Int`, `Double`,
    /// `NSNull()` for `nil`; a `nil` `@ServerTimestamp` as `[".sv": "timestamp"]`.
    ///
    /// - Throws: ``DatabaseError/invalidValue(_:)`` naming the coding path, for a
    ///   non-conforming float under the `.throw` strategy, an integer beyond `Int64`, or a
    ///   key the database refuses (empty, over 768 bytes, or holding `.` `#` `$` `[` `]` `/`
    ///   or a control character), so that what this returns can be written.
    public func encode<T: Encodable>(_ value: T) throws(DatabaseError) -> Any {
        let encoded = try NodeEncoder(options: options).encodeValue(value)
        _ = try encoded.node(at: .root)
        return encoded.anyValue
    }

    /// The strategies, for the node encoder.
    var options: NodeEncoder.Options {
        NodeEncoder.Options(
            key: keyEncodingStrategy, date: dateEncodingStrategy, data: dataEncodingStrategy,
            nonConformingFloat: nonConformingFloatEncodingStrategy, userInfo: userInfo)
    }
}

/// Decodes `Decodable` values from the database's values — Firebase's `FirebaseDataDecoder`,
/// which its `Database.Decoder` names (as Hearth's does), with Firebase's strategies and defaults: the mirror of
/// ``DatabaseEncoder``.
///
/// Types are strict (a string never decodes as a number); a missing or null array, set or
/// dictionary decodes as empty, since the database stores an empty one as nothing.
///
/// Not `Sendable`, like Firebase's: configure one per use or per thread.
public final class DatabaseDecoder {
    /// How database keys are matched to coding keys.
    public enum KeyDecodingStrategy {
        /// The keys as they are (the default).
        case useDefaultKeys
        /// snake_case keys as camelCase (`my_url_value` is `myUrlValue`), as Foundation's
        /// `JSONDecoder` converts them. Converted keys are compared as `String`s.
        case convertFromSnakeCase
        /// The key this function returns for the coding path ending with the database key.
        case custom((_ codingPath: [any CodingKey]) -> any CodingKey)
    }

    /// How `Date` values are read.
    public enum DateDecodingStrategy {
        /// `Date`'s own `Codable` form, seconds since 2001-01-01T00:00:00Z (the default).
        case deferredToDate
        /// Seconds since 1970-01-01.
        case secondsSince1970
        /// Milliseconds since 1970-01-01.
        case millisecondsSince1970
        /// An ISO 8601 string with time zone.
        case iso8601
        /// A string this formatter parses.
        case formatted(DateFormatter)
        /// What this function decodes from the given decoder.
        case custom((any Swift.Decoder) throws -> Date)
    }

    /// How `Data` values are read.
    public enum DataDecodingStrategy {
        /// `Data`'s own `Codable` form, an array of bytes.
        case deferredToData
        /// A base64 string (the default).
        case base64
        /// What this function decodes from the given decoder.
        case custom((any Swift.Decoder) throws -> Data)
    }

    /// How NaN and infinite floating-point values, written as strings, are read.
    public enum NonConformingFloatDecodingStrategy {
        /// Not at all: a string is never a number (the default).
        case `throw`
        /// These strings as the infinities and NaN.
        case convertFromString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How database keys match coding keys;
    /// ``DatabaseDecoder/KeyDecodingStrategy/useDefaultKeys`` by default.
    public var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys
    /// How dates are read; ``DatabaseDecoder/DateDecodingStrategy/deferredToDate`` by default.
    public var dateDecodingStrategy: DateDecodingStrategy = .deferredToDate
    /// How `Data` is read; ``DatabaseDecoder/DataDecodingStrategy/base64`` by default.
    public var dataDecodingStrategy: DataDecodingStrategy = .base64
    /// How NaN and infinities are read; ``DatabaseDecoder/NonConformingFloatDecodingStrategy/throw`` by
    /// default.
    public var nonConformingFloatDecodingStrategy: NonConformingFloatDecodingStrategy = .throw
    /// Context for the decoded types' `init(from:)`, as the decoder's `userInfo`.
    public var userInfo: [CodingUserInfoKey: Any] = [:]

    /// A decoder with Firebase's defaults.
    public init() {}

    /// `structure`, an untyped Firebase value (as ``DataSnapshot/value`` gives, or
    /// ``DatabaseEncoder/encode(_:)`` returns), decoded as `T`.
    ///
    /// - Throws: ``DatabaseError/decodingFailed(_:)`` naming the coding path, or when
    ///   `structure` is not a value the database can hold (a `Date`, a struct, a NaN, an
    ///   invalid key).
    public func decode<T: Decodable>(_ type: T.Type, from structure: Any) throws(DatabaseError) -> T {
        let node: Node
        do {
            node = try DatabaseValue(any: structure).node(at: .root)
        } catch {
            throw .decodingFailed("not a database value: \(error)")
        }
        return try NodeDecoder(options: options).decode(T.self, from: node)
    }

    /// The strategies, for the node decoder.
    var options: NodeDecoder.Options {
        NodeDecoder.Options(
            key: keyDecodingStrategy, date: dateDecodingStrategy, data: dataDecodingStrategy,
            nonConformingFloat: nonConformingFloatDecodingStrategy, userInfo: userInfo)
    }
}
