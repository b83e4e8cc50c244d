import Foundation
import Testing
import HearthDatabase

/// The Codable sample of the client API article, compiled and run against a server, verbatim
/// between the `doc-sample` markers.
@Suite("Codable article sample", .serialized)
struct CodableSampleTests {
    @Test func sampleRuns() async throws {
        let server = try await TransportTestServer()
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=codable")
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/ClientAPI.md
        struct Event: Codable {
            var title: String
            var startsAt: Date
            @ServerTimestamp var createdAt: Date?
        }
        let encoder = Database.Encoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let ref = db.reference(withPath: "events/launch")
        let launch = Event(title: "Launch", startsAt: Date(timeIntervalSince1970: 1_700_000_000))
        try await ref.setValue(from: launch, encoder: encoder)
        // Stored: {"title": "Launch", "starts_at": 1700000000000, "created_at": the server's clock}

        let decoder = Database.Decoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let event = try await ref.getData().data(as: Event.self, decoder: decoder)
        // doc-sample end
        #expect(event.title == "Launch")
        #expect(event.startsAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(event.createdAt != nil, "the server filled in its clock")
        let stored = try await ref.getData().value as? [String: Any]
        #expect(stored?["starts_at"] as? Int == 1_700_000_000_000)
        #expect(Set(stored?.keys.map { $0 } ?? []) == ["title", "starts_at", "created_at"])
        try db.close()
        try await server.stop()
    }

    /// The completion form: returns at once, the block hears the server's answer; a value the
    /// encoder refuses throws and writes nothing.
    @Test func completionFormAndRefusals() async throws {
        let server = try await TransportTestServer()
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=codable")
        let ref = db.reference(withPath: "stats")
        let encoder = Database.Encoder()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            do {
                try ref.setValue(from: ["mean": 1.5], encoder: encoder) { error in
                    #expect(error == nil)
                    done.resume()
                }
            } catch {
                Issue.record("\(error)")
                done.resume()
            }
        }
        #expect(throws: DatabaseError.self) { try ref.setValue(from: ["mean": Double.nan], encoder: encoder) }
        #expect(throws: DatabaseError.self) { try ref.setValue(from: ["a/b": 1], encoder: encoder) }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try await ref.setValue(from: ["mean": Double.nan], encoder: encoder)
        #expect(try await ref.getData().value as? [String: String] == ["mean": "nan"])
        try db.close()
        try await server.stop()
    }
}
