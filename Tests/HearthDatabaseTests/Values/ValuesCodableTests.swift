import Foundation
import HearthModel
import Testing
@testable import HearthDatabase

@Suite struct ValuesCodableTests {
    struct Address: Codable, Equatable {
        var street: String
        var zip: Int?
    }

    enum Role: String, Codable { case admin, member }

    struct User: Codable, Equatable {
        var name: String
        var age: UInt8
        var score: Double
        var ratio: Float
        var active: Bool
        var role: Role
        var nickname: String?
        var tags: [String]
        var matrix: [[Int]]
        var addresses: [Address]
        var byName: [String: Address]
        var joined: Date
        var avatar: Data
        var home: URL
        var big: Int64
        var maybe: [Int?]
    }

    static let user = User(
        name: "Ada", age: 36, score: 99.5, ratio: 0.1, active: true, role: .admin, nickname: nil,
        tags: ["math", "engines"], matrix: [[1, 2], [3]], addresses: [Address(street: "St James's Square", zip: nil)],
        byName: ["home": Address(street: "Marylebone", zip: 12)], joined: Date(timeIntervalSince1970: 1_700_000_000.5),
        avatar: Data([0, 1, 2, 255]), home: URL(string: "https://example.com/a?b=c")!, big: 1 << 62, maybe: [1, nil, 3]
    )

    func encode(_ v: some Encodable) throws(DatabaseError) -> Node { try node(encoding: v, at: .root) }
    func decode<T: Decodable>(_ t: T.Type, _ n: Node) throws(DatabaseError) -> T {
        try NodeDecoder().decode(T.self, from: n)
    }

    @Test func structRoundTrip() throws {
        let n = try encode(Self.user)
        #expect(n.child(ChildKey("nickname")).isEmpty)  // nil members are left out
        #expect(n.child(at: Path(keys: ["matrix", "0", "1"])) == .number(2))
        #expect(n.child(ChildKey("role")) == .string("admin"))
        #expect(n.child(ChildKey("avatar")) == .string("AAEC/w=="))
        #expect(n.child(ChildKey("home")) == .string("https://example.com/a?b=c"))
        #expect(n.child(ChildKey("ratio")) == .number(0.1))
        #expect(n.child(ChildKey("big")).leafValue == .integer(1 << 62))
        #expect(n.child(at: Path(keys: ["maybe", "1"])).isEmpty)
        // Firebase's default date strategy (deferredToDate): seconds since 2001-01-01.
        #expect(n.child(ChildKey("joined")) == .number(Self.user.joined.timeIntervalSinceReferenceDate))
        #expect(try decode(User.self, n) == Self.user)
    }

    @Test func emptyCollectionsReadBackEmpty() throws {
        var u = Self.user
        u.tags = []
        u.byName = [:]
        u.matrix = [[], [1]]
        let n = try encode(u)
        #expect(n.child(ChildKey("tags")).isEmpty)
        #expect(try decode(User.self, n) == u)
    }

    @Test func millisecondDates() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        var encoder = NodeEncoder()
        encoder.options.date = .millisecondsSince1970
        let n = try encoder.encode(date, at: .root)
        #expect(n == .number(1_700_000_000_123))
        var decoder = NodeDecoder()
        decoder.options.date = .millisecondsSince1970
        let back = try decoder.decode(Date.self, from: n)
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
    }

    @Test func optionalsAtTopLevel() throws {
        #expect(try decode(Int?.self, .empty) == nil)
        #expect(try decode(Int?.self, .number(4)) == 4)
        #expect(try decode(Address?.self, .empty) == nil)
        #expect(try encode(Int?.none).isEmpty)
    }

    @Test func integerWidthsAreRangeChecked() throws {
        #expect(try decode(Int8.self, .number(127)) == 127)
        #expect(throws: DatabaseError.self) { try decode(Int8.self, .number(128)) }
        #expect(throws: DatabaseError.self) { try decode(UInt.self, .number(-1)) }
        #expect(throws: DatabaseError.self) { try decode(Int.self, .number(1.5)) }
        #expect(try decode(UInt64.self, Node(.integer(Int64.max))) == UInt64(Int64.max))
        #expect(throws: DatabaseError.self) { try encode(UInt64.max) }
        #expect(try encode(UInt64(Int64.max)).leafValue == .integer(Int64.max))
        #expect(try decode(Double.self, .number(3)) == 3)
        #expect(throws: DatabaseError.self) { try decode(Float.self, .number(1e300)) }
    }

    @Test func nonFiniteNumbersAreRefusedWithTheCodingPath() throws {
        struct Point: Encodable { var x: Double; var ys: [Float] }
        do {
            _ = try encode(Point(x: 1, ys: [1, .nan]))
            Issue.record("accepted")
        } catch {
            guard case .invalidValue(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("ys/1"), "\(message)")
        }
    }

    @Test func invalidKeysAreRefused() throws {
        #expect(throws: DatabaseError.self) { try encode(["a.b": 1]) }
        #expect(throws: DatabaseError.self) { try encode(["": 1]) }
    }

    @Test func decodingErrorsNameTheCodingPath() throws {
        let n = Node(children: [
            (ChildKey("street"), .string("x")), (ChildKey("zip"), .string("not a number")),
        ])
        do {
            _ = try decode(Address.self, n)
            Issue.record("accepted")
        } catch {
            guard case .decodingFailed(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("zip"), "\(message)")
        }
        do {
            _ = try decode(Address.self, .empty)
            Issue.record("accepted")
        } catch {
            #expect(
                error
                    == .decodingFailed(
                        NodeDecoder.describe(
                            .valueNotFound(
                                [String: Any].self,
                                .init(codingPath: [], debugDescription: "expected an object but the value is null")))))
        }
        #expect(throws: DatabaseError.self) { try decode([String].self, .string("x")) }
        #expect(throws: DatabaseError.self) { try decode(String.self, .number(1)) }
        #expect(throws: DatabaseError.self) { try decode(Bool.self, .number(1)) }
        // Children that do not look like an array do not decode as one.
        let object = Node(children: [(ChildKey("a"), .number(1))])
        #expect(throws: DatabaseError.self) { try decode([Int].self, object) }
        #expect(try decode([String: Int].self, object) == ["a": 1])
    }

    @Test func arraysWithGapsDecodeWithNils() throws {
        let n = try Node(jsonText: #"{"0":1,"2":3}"#)
        #expect(try decode([Int?].self, n) == [1, nil, 3])
        #expect(throws: DatabaseError.self) { try decode([Int].self, n) }
    }

    @Test func databaseValueGoesThroughTheNodeCodersAsItself() throws {
        let v: DatabaseValue = ["a": [1, 2.5, "x", true], "n": .int(Int64.max), "s": .increment(3)]
        let n = try encode(v)
        #expect(n == (try node(from: v, at: .root)))
        #expect(try decode(DatabaseValue.self, n) == v)
        struct Wrapper: Codable, Equatable { var payload: DatabaseValue; var other: DatabaseValue }
        let w = Wrapper(payload: ["k": [1, 2]], other: nil)
        #expect(try decode(Wrapper.self, try encode(w)) == w)
    }

    @Test func databaseValueWithFoundationJSONCoders() throws {
        let v: DatabaseValue = [
            "a": [1, 2.5, "x", true, nil], "o": ["k": -7], "t": .serverTimestamp, "i": .increment(2),
        ]
        let data = try JSONEncoder().encode(v)
        #expect(try JSONDecoder().decode(DatabaseValue.self, from: data) == v)
    }
}
