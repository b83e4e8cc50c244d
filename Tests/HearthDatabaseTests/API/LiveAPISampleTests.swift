import Foundation
import Testing
import HearthDatabase

/// The client API article's sample of event sequences and live queries
/// (HearthDatabase.docc/ClientAPI.md), run verbatim against a server.
@MainActor
@Suite("Client API article: sequences and live queries", .serialized)
struct LiveAPISampleTests {
    @Test func sampleRuns() async throws {
        let server = try await TransportTestServer()
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=sequences")
        try await db.reference(withPath: "scores/stegosaurus").setValue(5)
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/ClientAPI.md
        // Each value of the data; cancelling the task (or releasing the sequence) ends the listen.
        let scores = db.reference(withPath: "scores")
        let watcher = Task {
            for try await snapshot in scores.values() {
                print("\(snapshot.childrenCount) scores")
            }
        }

        // Child events with their type and previous sibling key, in Firebase's order. A listen the
        // server revokes ends the loop by throwing its DatabaseError.
        for try await (event, child, previousKey) in scores.queryOrderedByValue().childEvents() {
            print(event, child.key, previousKey ?? "first")
            #expect(child.key == "stegosaurus")  // doc-sample: test
            if event == .childAdded { break }
        }
        watcher.cancel()

        // For SwiftUI (on the main actor): an @Observable snapshot, listening until it is released.
        let live = scores.live()
        print(live.isLoading ? "loading" : "\(live.snapshot?.childrenCount ?? 0) scores")
        // doc-sample end
        _ = try await watcher.value
        try db.close()
        try await server.stop()
    }
}
