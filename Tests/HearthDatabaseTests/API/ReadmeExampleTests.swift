import Foundation
import Testing
import HearthDatabase

/// The README's client example — its only swift block — compiled and run against an in-process
/// server, verbatim between the `doc-sample` markers but for the store directory and the port
/// (DocSampleTests in HearthToolTests reads README.md and fails when the two differ).
@Suite("README example", .serialized)
struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func exampleRunsAgainstAServer() async throws {
        let server = try await TransportTestServer()
        let app = TempDir()
        let appDirectory = app.path
        let port = server.server.port
        // doc-sample: README.md
        // doc-sample-replace: "/tmp/hearth-app" => appDirectory
        // doc-sample-replace: 127.0.0.1:9000 => 127.0.0.1:\(port)
        var options = Database.Options()
        options.storeDirectory = appDirectory  // the cache and pending writes; nil: memory only
        let db = try Database(url: "http://127.0.0.1:\(port)?ns=default", options: options)
        let scores = db.reference(withPath: "scores")
        scores.queryOrderedByValue().queryLimited(toLast: 3).observe(.childAdded) { snapshot in
            print(snapshot.key, snapshot.value ?? "null")  // from the cache at once, offline too
        }
        try await scores.child("ada").setValue(5)  // the async form: returns once the server has it
        #expect(db.pendingWriteIDs.isEmpty, "the completion form was picked: it returns before the answer")  // doc-sample: test
        let snapshot = try await scores.getData()
        print(snapshot.childrenCount)  // 1
        #expect(snapshot.childrenCount == 1)  // doc-sample: test
        try db.close()
        // doc-sample end
        try await server.stop()
    }

    /// The front page stays a front page: two screens, one example, the two commands, and the
    /// flag a server for that example needs.
    @Test func readmeIsAFrontPage() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 101, "README.md has \(lines.count) lines: move detail into a DocC article")
        #expect(lines.filter { $0 == "```swift" }.count == 1, "README.md's one swift block is its client example")
        for command in ["swift run hearth demo", "swift test", "hearth serve", "--emulator"] {
            #expect(text.contains(command), "README.md does not say `\(command)`")
        }
    }
}
