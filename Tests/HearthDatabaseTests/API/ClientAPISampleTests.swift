import Foundation
import Testing
import HearthDatabase

/// The sample of the client API article (HearthDatabase.docc/ClientAPI.md), compiled and run
/// against a server, verbatim between the `doc-sample` markers but for the port (DocSampleTests
/// in HearthToolTests checks that).
@Suite("Client API article sample", .serialized)
struct ClientAPISampleTests {
    struct Message: Codable { var text: String }
    struct User: Codable, Equatable { var name: String; var lastOnline: Double }

    @Test func sampleRuns() async throws {
        let server = try await TransportTestServer()
        let appSupport = TempDir().path
        let port = server.server.port
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/ClientAPI.md
        // doc-sample-replace: ws://127.0.0.1:9000 => ws://127.0.0.1:\(port)
        var options = Database.Options()
        options.storeDirectory = appSupport + "/hearth"  // nil: memory only
        options.cacheSizeBytes = 10 << 20  // 1 … 100 MiB, default 10 MiB (Firebase's)
        let db = try Database(url: "ws://127.0.0.1:\(port)?ns=demo", options: options)

        // Listen: events come from the cache at once (offline too), then from the server.
        let scoresRef = db.reference(withPath: "scores")
        scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded) { snapshot in
            print("The \(snapshot.key) dinosaur's score is \(snapshot.value ?? "null")")
        }
        scoresRef.keepSynced(true)  // persisted: synced again after a restart

        // Write: saved in the store before it is sent, re-sent after a restart until answered;
        // local observers see it at once. A completion form and an async form.
        scoresRef.child("stegosaurus").setValue(5) { error, _ in if let error { print(error) } }
        try await db.reference(withPath: "users/ada").setValue(["name": "Ada", "lastOnline": ServerValue.timestamp()])
        try db.reference(withPath: "chat").childByAutoId().setValue(from: Message(text: "hi")) { _, _ in }

        // Every write's outcome, including writes restored from an earlier run (Firebase calls no
        // completion for those).
        db.observeWriteResults { result in print(result.id, result.error.map { "\($0)" } ?? "ok") }

        // Presence plumbing and reads.
        db.reference(withPath: ".info/connected").observe(.value) { print("connected:", $0.value ?? false) }
        let snapshot = try await db.reference(withPath: "users/ada").getData()
        let user = try snapshot.data(as: User.self)
        // doc-sample end
        #expect(user.name == "Ada")
        #expect(user.lastOnline > 1.6e12, "the server resolved the timestamp")
        try db.close()
        try await server.stop()
    }

    /// Firebase's star-a-post transaction, pasted unchanged (the article's second sample).
    @Test func firebaseTransactionPastesUnchanged() async throws {
        let server = try await TransportTestServer()
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=demo")
        try await db.reference(withPath: "posts/post-1").setValue(["title": "Hi", "starCount": 0])
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/ClientAPI.md
        let ref = db.reference(withPath: "posts/post-1")
        ref.runTransactionBlock({ (currentData: MutableData) -> TransactionResult in
            if var post = currentData.value as? [String: AnyObject], let uid = Auth.auth().currentUser?.uid {
                var stars: [String: Bool]
                stars = post["stars"] as? [String: Bool] ?? [:]
                var starCount = post["starCount"] as? Int ?? 0
                if let _ = stars[uid] {
                    // Unstar the post and remove self from stars
                    starCount -= 1
                    stars.removeValue(forKey: uid)
                } else {
                    // Star the post and add self to stars
                    starCount += 1
                    stars[uid] = true
                }
                post["starCount"] = starCount as AnyObject?
                post["stars"] = stars as AnyObject?

                // Set value and report transaction success
                currentData.value = post

                return TransactionResult.success(withValue: currentData)
            }
            return TransactionResult.success(withValue: currentData)
        }) { (error, committed, snapshot) in
            if let error = error {
                print(error.localizedDescription)
            }
        }
        // doc-sample end
        let post = db.reference(withPath: "posts/post-1")
        #expect(await eventually { db.pendingWriteIDs.isEmpty })
        let snapshot = try await post.getData()
        #expect(snapshot.databaseValue == ["title": "Hi", "starCount": 1, "stars": ["ada": true]])
        try db.close()
        try await server.stop()
    }
}

/// Stands in for FirebaseAuth's `Auth` in the pasted Firebase sample.
private struct Auth {
    struct User { let uid: String }
    let currentUser: User? = User(uid: "ada")
    static func auth() -> Auth { Auth() }
}
