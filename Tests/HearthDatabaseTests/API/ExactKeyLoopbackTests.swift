import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Keys that differ only in Unicode normalization, written by one client through a real
/// server and read by another: two children everywhere, each with its own value.
@Suite("Exact keys over loopback", .serialized)
struct ExactKeyLoopbackTests {
    func options() -> Database.Options {
        var o = Database.Options()
        o.durability = .buffered
        return o
    }

    @Test func bothKeysRoundTripThroughTheServer() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=test"
        let writer = try Database(url: url, options: options())
        let reader = try Database(url: url, options: options())
        let composed = ExactKeyTests.composed, decomposed = ExactKeyTests.decomposed

        try await writer.reference(withPath: "k").setValue([composed: 1, decomposed: 2] as DatabaseValue)
        #expect(try server.store.value(at: "k") == (try Node(jsonText: ExactKeyTests.bothJSON)))
        try await writer.reference(withPath: "u").updateChildValues(
            [composed: "a", decomposed: "b"] as DatabaseValue.Object)
        #expect(try server.store.value(at: "u") == (try Node(jsonText: #"{"\u00e9":"a","e\u0301":"b"}"#)))

        // The value event (a listen), then get, then the child events.
        var values = reader.reference(withPath: "k").events(.value).makeAsyncIterator()
        let value = try #require(try await values.next()).snapshot
        ExactKeyTests().expectBoth(value.databaseValue.objectValue, "value event")
        #expect(value.children.map(\.databaseValue) == [2, 1])
        let got = try await reader.reference(withPath: "k").getData()
        ExactKeyTests().expectBoth(got.databaseValue.objectValue, "getData")
        #expect(try got.data(as: DatabaseValue.self) == [composed: 1, decomposed: 2])
        var added = reader.reference(withPath: "k").events(.childAdded).makeAsyncIterator()
        var children: [(key: String?, value: DatabaseValue)] = []
        for _ in 0..<2 {
            let (_, child, _) = try #require(try await added.next())
            children.append((child.key, child.databaseValue))
        }
        #expect(ExactKeyTests.exact(children.map(\.key)) == ExactKeyTests.exact([decomposed, composed]))
        #expect(children.map(\.value) == [2, 1])
        let updated = try await reader.reference(withPath: "u").getData()
        #expect(updated.databaseValue == [composed: "a", decomposed: "b"])
        #expect(updated.databaseValue.objectValue?.count == 2)

        try writer.close()
        try reader.close()
        try await server.stop()
    }
}
