import Testing
@testable import HearthModel

/// The one server-value resolver: what each placeholder stands for, over what is there.
@Suite struct ServerValuesTests {
    func json(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

    @Test func placeholdersParseFromTheirSvMember() throws {
        #expect(ServerValuePlaceholder(json: try json(#""timestamp""#)) == .timestamp)
        #expect(ServerValuePlaceholder(json: try json(#"{"increment": 2.5}"#)) == .increment(2.5))
        #expect(ServerValuePlaceholder(json: try json(#""random""#)) == nil)
        #expect(ServerValuePlaceholder(json: try json(#"{"increment": "1"}"#)) == nil)
        #expect(ServerValuePlaceholder(json: try json(#"{"increment": 1, "x": 2}"#)) == nil)
    }

    @Test func aTimestampIsTheServersClockInWholeMilliseconds() {
        let node = Node(.serverValue(.timestamp), priority: .string("p"))
        let resolved = node.resolvingServerValues(over: .number(7), serverNow: 1_700_000_000_123.9)
        #expect(resolved == Node(.number(1_700_000_000_123), priority: .string("p")))
    }

    @Test func anIncrementAddsToTheNumberThereExactlyForIntegers() {
        let big: Int64 = (1 << 53) + 1
        #expect(ServerValuePlaceholder.increment(3).resolved(over: .integer(big), serverNow: 0) == .integer(big + 3))
        #expect(ServerValuePlaceholder.increment(0.5).resolved(over: .number(1), serverNow: 0) == .number(1.5))
        #expect(ServerValuePlaceholder.increment(3).resolved(over: .string("x"), serverNow: 0) == .number(3))
        #expect(ServerValuePlaceholder.increment(3).resolved(over: nil, serverNow: 0) == .number(3))
        #expect(ServerValuePlaceholder.increment(1).resolved(over: .integer(.max), serverNow: 0) == .number(0x1p63))
    }

    @Test func placeholdersBelowANodeResolveAgainstTheSameChildOfWhatIsThere() throws {
        let written = try Node(json: try json(#"{"n": {".sv": {"increment": 2}}, "t": {".sv": "timestamp"}, "k": 1}"#))
        let existing = try Node(json: try json(#"{"n": 40, "k": 9}"#))
        #expect(written.containsServerValue)
        let resolved = written.resolvingServerValues(over: existing, serverNow: 5)
        #expect(resolved == (try Node(json: try json(#"{"n": 42, "t": 5, "k": 1}"#))))
        #expect(!resolved.containsServerValue)
        let plain = try Node(json: try json(#"{"a": {"b": 1}}"#))
        #expect(!plain.containsServerValue)
        #expect(plain.resolvingServerValues(over: existing, serverNow: 5) == plain)
    }
}
