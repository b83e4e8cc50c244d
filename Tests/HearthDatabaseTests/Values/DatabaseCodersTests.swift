import Foundation
import HearthModel
import Testing
@testable import HearthDatabase

/// `Database.Encoder` / `Database.Decoder` and their strategies, as FirebaseDatabaseSwift's
/// (`FirebaseDataEncoder`) behave, and `@ServerTimestamp` as firebase-ios-sdk's
/// `ServerValueCodingTests` asserts.
@Suite struct DatabaseCodersTests {
    struct Profile: Codable, Equatable {
        var firstName: String
        var myURLValue: Int
        var nickname: String?
    }

    /// `value` encoded by `encoder.encode(_:)`, read back as a typed value for comparison.
    func encoded(_ value: some Encodable, _ encoder: Database.Encoder = .init()) throws -> DatabaseValue {
        try DatabaseValue(any: encoder.encode(value))
    }

    @Test func defaultsAreFirebases() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        struct Everything: Codable, Equatable {
            var when: Date
            var blob: Data
            var left: Int?
            var list: [Int]
        }
        let value = Everything(when: date, blob: Data([1, 2, 3]), left: nil, list: [1, 2])
        let expected: [String: Any] = [
            "when": date.timeIntervalSinceReferenceDate, "blob": "AQID", "list": [1, 2],
        ]
        #expect(try encoded(value) == DatabaseValue(any: expected))
        #expect(try encoded(value)["when"] == .double(date.timeIntervalSinceReferenceDate))
        #expect(try Database.Decoder().decode(Everything.self, from: expected) == value)
        #expect(try Database.Encoder().encode(Int?.none) is NSNull)
    }

    @Test func snakeCaseKeysBothWays() throws {
        let encoder = Database.Encoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let profile = Profile(firstName: "Ada", myURLValue: 3, nickname: nil)
        let dict: [String: Any] = ["first_name": "Ada", "my_url_value": 3]
        #expect(try encoded(profile, encoder) == ["first_name": "Ada", "my_url_value": 3])
        // Foundation's rule: `my_url_value` reads back as `myUrlValue`, not `myURLValue`.
        struct Read: Codable, Equatable {
            var firstName: String
            var myUrlValue: Int
        }
        let decoder = Database.Decoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(Read.self, from: dict) == Read(firstName: "Ada", myUrlValue: 3))
        #expect(throws: DatabaseError.self) { try Database.Decoder().decode(Read.self, from: dict) }
    }

    @Test func snakeCaseRules() {
        let cases = [
            ("camelCase", "camel_case"), ("myURLValue", "my_url_value"), ("URLValue", "url_value"),
            ("value2Key", "value2_key"), ("_leading", "_leading"), ("already_snake", "already_snake"),
            ("ABC", "abc"), ("", ""),
        ]
        for (camel, snake) in cases { #expect(CodingKeyCase.snakeCase(camel) == snake, "\(camel)") }
        let back = [
            ("camel_case", "camelCase"), ("_private_key_", "_privateKey_"), ("single", "single"),
            ("___", "___"), ("url_value", "urlValue"),
        ]
        for (snake, camel) in back { #expect(CodingKeyCase.camelCase(snake) == camel, "\(snake)") }
    }

    @Test func customKeys() throws {
        let encoder = Database.Encoder()
        encoder.keyEncodingStrategy = .custom { path in NodeCodingKey(stringValue: path.last!.stringValue.uppercased())
        }
        let profile = Profile(firstName: "Ada", myURLValue: 3, nickname: "A")
        let dict: [String: Any] = ["FIRSTNAME": "Ada", "MYURLVALUE": 3, "NICKNAME": "A"]
        #expect(try encoded(profile, encoder) == ["FIRSTNAME": "Ada", "MYURLVALUE": 3, "NICKNAME": "A"])
        let decoder = Database.Decoder()
        let names = ["FIRSTNAME": "firstName", "MYURLVALUE": "myURLValue", "NICKNAME": "nickname"]
        decoder.keyDecodingStrategy = .custom { path in NodeCodingKey(stringValue: names[path.last!.stringValue]!) }
        #expect(try decoder.decode(Profile.self, from: dict) == profile)
    }

    @Test func dateStrategies() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        let whole = Date(timeIntervalSince1970: 1_700_000_000)
        let cases:
            [(Database.Encoder.DateEncodingStrategy, Database.Decoder.DateDecodingStrategy, Date, DatabaseValue)] = [
                (.deferredToDate, .deferredToDate, date, .double(date.timeIntervalSinceReferenceDate)),
                (.secondsSince1970, .secondsSince1970, date, .double(1_700_000_000.5)),
                (.millisecondsSince1970, .millisecondsSince1970, date, .int(1_700_000_000_500)),
                (.iso8601, .iso8601, whole, "2023-11-14T22:13:20Z"),
                (.formatted(formatter), .formatted(formatter), date, "2023-11-14 22:13:20.500"),
                (
                    .custom { d, e in
                        var c = e.singleValueContainer()
                        try c.encode("day \(Int(d.timeIntervalSince1970) / 86_400)")
                    },
                    .custom { d in
                        let s = try d.singleValueContainer().decode(String.self)
                        return Date(timeIntervalSince1970: Double(Int(s.dropFirst(4))! * 86_400))
                    },
                    Date(timeIntervalSince1970: 19_675 * 86_400), "day 19675"
                ),
            ]
        for (encoding, decoding, value, expected) in cases {
            let encoder = Database.Encoder()
            encoder.dateEncodingStrategy = encoding
            #expect(try encoded(["at": value], encoder) == ["at": expected], "\(encoding)")
            let decoder = Database.Decoder()
            decoder.dateDecodingStrategy = decoding
            #expect(try decoder.decode([String: Date].self, from: ["at": expected]) == ["at": value], "\(decoding)")
        }
        let decoder = Database.Decoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(throws: DatabaseError.self) { try decoder.decode(Date.self, from: "yesterday") }
    }

    @Test func dataStrategies() throws {
        let bytes = Data([0, 1, 255])
        let encoder = Database.Encoder()
        encoder.dataEncodingStrategy = .deferredToData
        #expect(try encoded(bytes, encoder) == [0, 1, 255])
        let decoder = Database.Decoder()
        decoder.dataDecodingStrategy = .deferredToData
        #expect(try decoder.decode(Data.self, from: [0, 1, 255]) == bytes)

        encoder.dataEncodingStrategy = .custom { d, e in
            var c = e.singleValueContainer()
            try c.encode(d.map { String($0, radix: 16) }.joined(separator: ":"))
        }
        #expect(try encoded(bytes, encoder) == "0:1:ff")
        decoder.dataDecodingStrategy = .custom { d in
            Data(try d.singleValueContainer().decode(String.self).split(separator: ":").map { UInt8($0, radix: 16)! })
        }
        #expect(try decoder.decode(Data.self, from: "0:1:ff") == bytes)
        #expect(try encoded(bytes) == "AAH/")
        #expect(throws: DatabaseError.self) { try Database.Decoder().decode(Data.self, from: "not base64!") }
    }

    @Test func nonConformingFloats() throws {
        #expect(throws: DatabaseError.self) { try Database.Encoder().encode(["x": Double.nan]) }
        #expect(throws: DatabaseError.self) { try Database.Encoder().encode(Float.infinity) }
        let encoder = Database.Encoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let values = [Double.infinity, -Double.infinity, 1.5]
        #expect(try encoded(values, encoder) == ["+inf", "-inf", 1.5])
        #expect(try encoded(Float.nan, encoder) == "nan")
        let decoder = Database.Decoder()
        #expect(throws: DatabaseError.self) { try decoder.decode([Double].self, from: ["+inf"]) }
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        #expect(try decoder.decode([Double].self, from: ["+inf", "-inf", 1.5]) == values)
        #expect(try decoder.decode(Float.self, from: "nan").isNaN)
    }

    struct Tagged: Codable, Equatable {
        static let key = CodingUserInfoKey(rawValue: "tag")!
        var tag: String
        init(tag: String) { self.tag = tag }
        init(from decoder: any Decoder) throws { tag = decoder.userInfo[Self.key] as? String ?? "none" }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(encoder.userInfo[Self.key] as? String ?? "none")
        }
    }

    @Test func userInfoReachesTheCodedTypes() throws {
        let encoder = Database.Encoder()
        encoder.userInfo[Tagged.key] = "from encoder"
        #expect(try encoded([Tagged(tag: "x")], encoder) == ["from encoder"])
        let decoder = Database.Decoder()
        decoder.userInfo[Tagged.key] = "from decoder"
        #expect(try decoder.decode([Tagged].self, from: [1]) == [Tagged(tag: "from decoder")])
    }

    @Test func badInputIsATypedError() throws {
        // A key the database refuses, an integer beyond Int64: refused, never written.
        #expect(throws: DatabaseError.self) { try Database.Encoder().encode(["a.b": 1]) }
        #expect(throws: DatabaseError.self) { try Database.Encoder().encode(["": 1]) }
        #expect(throws: DatabaseError.self) { try Database.Encoder().encode(UInt64.max) }
        // Not a database value: a Date, a struct.
        #expect(throws: DatabaseError.self) { try Database.Decoder().decode(Int.self, from: Date()) }
        #expect(throws: DatabaseError.self) {
            try Database.Decoder().decode(Int.self, from: ["x": Profile(firstName: "", myURLValue: 0)])
        }
        #expect(throws: DatabaseError.self) { try Database.Decoder().decode(Int.self, from: "3") }
    }

    // MARK: - @ServerTimestamp (firebase-ios-sdk ServerValueCodingTests)

    struct Stamped: Codable, Equatable {
        @ServerTimestamp var timestamp: Date?
    }

    @Test func serverTimestampDateRoundTrip() throws {
        let model = Stamped(timestamp: Date(timeIntervalSince1970: 123_456_789.123))
        let dict: [String: Any] = ["timestamp": 123_456_789_123]
        #expect(try encoded(model) == ["timestamp": 123_456_789_123])
        #expect(try Database.Decoder().decode(Stamped.self, from: dict) == model)
    }

    @Test func serverTimestampNilIsThePlaceholder() throws {
        #expect(try encoded(Stamped()) == ["timestamp": [".sv": "timestamp"]])
        // As a write, the placeholder the server resolves.
        let written = try node(encoding: Stamped(), at: Path(keys: [ChildKey("m")]))
        #expect(written.child(ChildKey("timestamp")).leafValue == .serverValue(.timestamp))
        // Through another coder, the same `.sv` object.
        let json = try JSONEncoder().encode(Stamped())
        #expect(String(decoding: json, as: UTF8.self) == #"{"timestamp":{".sv":"timestamp"}}"#)
    }

    @Test func serverTimestampMissingOrNullDecodesAsNil() throws {
        #expect(try Database.Decoder().decode(Stamped.self, from: ["other": 1]) == Stamped())
        #expect(try Database.Decoder().decode(Stamped.self, from: ["timestamp": NSNull(), "other": 1]) == Stamped())
        #expect(
            try Database.Decoder().decode(Stamped.self, from: ["timestamp": 1.5e12]).timestamp
                == Date(timeIntervalSince1970: 1.5e9))
    }
}
