import Dispatch
import Foundation
import Hearth
import Testing
@testable import HearthDatabase

/// The samples of the porting guide (HearthDatabase.docc/PortingFromFirebase.md): Firebase's
/// idioms compiled and run against a server, verbatim between the `doc-sample` markers but for
/// the port (DocSampleTests in HearthToolTests checks that).
@Suite("Porting guide samples", .serialized)
struct PortingGuideSampleTests {
    struct User { let uid: String }

    /// The setup, then the read and write idioms; the data they leave is checked.
    @Test func setupReadsAndWrites() async throws {
        let server = try await TransportTestServer()
        let port = server.server.port
        let appSupport = TempDir().path
        let databaseQueue = DispatchQueue(label: "test.porting.callbacks")
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/PortingFromFirebase.md
        // doc-sample-replace: ws://127.0.0.1:9000 => ws://127.0.0.1:\(port)
        var options = Database.Options()
        options.storeDirectory = appSupport + "/hearth"  // Firebase's isPersistenceEnabled = true
        options.cacheSizeBytes = 10 << 20  // persistenceCacheSizeBytes: 1 … 100 MiB, default 10 MiB
        options.callbackQueue = databaseQueue  // nil, the default: the main queue, as Firebase's
        try Database.setOptions(options, forURL: "ws://127.0.0.1:\(port)?ns=demo")

        let ref = Database.database(url: "ws://127.0.0.1:\(port)?ns=demo").reference()
        // doc-sample end
        let db = ref.database
        #expect(db.isPersistenceEnabled && db.callbackQueue === databaseQueue)
        let user = User(uid: "ada"), username = "ada", title = "Hi", body = "First post"
        let saved = Collected<Bool>(), names = Collected<String>(), keys = Collected<String>()
        // As an app's synchronous handler calls them: in an `async` function Swift would choose
        // the `async` overloads, as it would with Firebase's SDK.
        func readsAndWrites() {
            // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/PortingFromFirebase.md
            // Write, and be told when the server has it.
            ref.child("users").child(user.uid).setValue(["username": username])
            ref.child("users/\(user.uid)/username").setValue(username) { error, _ in
                if let error = error { print("Data could not be saved: \(error).") }
                saved.add(error == nil)  // doc-sample: test
            }

            // Several locations at once.
            guard let key = ref.child("posts").childByAutoId().key else { return }
            keys.add(key)  // doc-sample: test
            let post = ["uid": user.uid, "author": username, "title": title, "body": body]
            let childUpdates = ["/posts/\(key)": post, "/user-posts/\(user.uid)/\(key)/": post]
            ref.updateChildValues(childUpdates)

            // Read once; listen until removed.
            ref.child("users").child(user.uid).observeSingleEvent(of: .value) { snapshot in
                let value = snapshot.value as? [String: Any]
                let name = value?["username"] as? String ?? ""
                print(name)
                names.add(name)  // doc-sample: test
            } withCancel: { error in
                print(error.localizedDescription)
            }
            let handle = ref.child("posts").observe(.childAdded) { snapshot in print(snapshot.key) }
            ref.child("posts").removeObserver(withHandle: handle)

            // Delete.
            ref.child("users/\(user.uid)/username").removeValue()
            // doc-sample end
        }
        readsAndWrites()
        let key = try #require(keys.all.first)
        #expect(await eventually { saved.all == [true] && names.all == ["ada"] })
        #expect(await eventually { db.pendingWriteIDs.isEmpty })
        let posts = try await ref.child("user-posts/ada").getData()
        #expect(posts.childSnapshot(forPath: "\(key)/title").value as? String == "Hi")
        #expect(try await ref.child("users/ada").getData().exists() == false, "the only child was removed")

        let lastSeen: Any? = 3
        let pageSize: UInt = 2
        for (id, stars) in [("p1", 1), ("p2", 3), ("p3", 5), ("p4", 7)] {
            try await ref.child("user-posts/ada/\(id)").setValue(["starCount": stars])
        }
        let added = Collected<String>()
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/PortingFromFirebase.md
        let recentPostsQuery = ref.child("posts").queryLimited(toFirst: 100)
        let myTopPostsQuery = ref.child("user-posts").child(user.uid).queryOrdered(byChild: "starCount")
        let nextPage = myTopPostsQuery.queryStarting(afterValue: lastSeen).queryLimited(toFirst: pageSize)
        recentPostsQuery.observe(.childAdded) { snapshot, previousKey in
            print(snapshot.key, "after", previousKey ?? "none")
            added.add(snapshot.key)  // doc-sample: test
        }
        nextPage.keepSynced(true)
        // doc-sample end
        #expect(await eventually { added.all == [key] })
        let page = try await nextPage.getData()
        #expect(page.children.map(\.key) == ["p3", "p4"])
        try db.close()
        try await server.stop()
    }

    /// Firebase's presence code: the server holds the onDisconnect operations, and runs them
    /// when the client goes.
    @Test func presence() async throws {
        let server = try await TransportTestServer()
        let url = "ws://127.0.0.1:\(server.server.port)?ns=porting-presence"
        var options = Database.Options()
        options.callbackQueue = DispatchQueue(label: "test.porting.presence")
        try Database.setOptions(options, forURL: url)
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/PortingFromFirebase.md
        let myConnectionsRef = Database.database(url: url).reference(withPath: "users/morgan/connections")
        let lastOnlineRef = Database.database(url: url).reference(withPath: "users/morgan/lastOnline")
        let connectedRef = Database.database(url: url).reference(withPath: ".info/connected")
        connectedRef.observe(.value) { snapshot in
            guard let connected = snapshot.value as? Bool, connected else { return }
            let con = myConnectionsRef.childByAutoId()
            con.setValue("YES")
            con.onDisconnectRemoveValue()
            lastOnlineRef.onDisconnectSetValue(ServerValue.timestamp())
        }
        // doc-sample end
        let db = Database.database(url: url)
        var watcherOptions = Database.Options()
        watcherOptions.callbackQueue = DispatchQueue(label: "test.porting.watcher")
        let watcher = try Database(url: url, options: watcherOptions)
        let seen = Collected<String>()
        watcher.reference(withPath: "users/morgan").observe(.value) { snap in
            let online = snap.childSnapshot(forPath: "connections").childrenCount
            let last = snap.childSnapshot(forPath: "lastOnline").value as? Int ?? 0
            seen.add("\(online) \(last > 1_600_000_000_000)")
        }
        #expect(await eventually { seen.all.last == "1 false" })
        // The server holds both onDisconnect operations before the client goes.
        #expect(await eventually { db.store.onDisconnectOperations().filter(\.acknowledged).count == 2 })
        try db.close()
        #expect(await eventually { seen.all.last == "0 true" }, "\(seen.all)")
        try watcher.close()
        try await server.stop()
    }

    /// The `async` forms.
    @Test func asyncForms() async throws {
        let server = try await TransportTestServer()
        let ref = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=porting-async").reference()
        let user = User(uid: "ada")
        try await ref.child("users/ada").setValue(["name": "Ada", "born": 1815])
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/PortingFromFirebase.md
        let profile = try await ref.child("users").child(user.uid).getData()
        print(profile.childrenCount)
        try await ref.child("scores").child(user.uid).setValue(42)
        let (committed, snapshot) = try await ref.child("scores").child(user.uid).runTransactionBlock { data in
            data.value = (data.value as? Int ?? 0) + 1
            return TransactionResult.success(withValue: data)
        }
        print(committed, snapshot.value ?? "none")
        // doc-sample end
        #expect(profile.childrenCount == 2)
        #expect(committed && snapshot.value as? Int == 43)
        try ref.database.close()
        try await server.stop()
    }

    /// `DatabaseReference.goOffline()` and `goOnline()` take every shared database (Firebase's:
    /// every database of the app) off- and online, and leave a database the app created itself
    /// alone. Here, as no other suite creates shared databases that connect (those of this
    /// serialized suite's other tests have closed or lost their servers), the calls reach only
    /// offline ones.
    @Test func classMethodsTakeEverySharedDatabaseOfflineAndOnline() throws {
        var options = Database.Options()
        options.connectAtOpen = false
        options.callbackQueue = DispatchQueue(label: "test.porting.class-methods")
        let url = "ws://127.0.0.1:9?ns=porting-class-methods"
        try Database.setOptions(options, forURL: url)
        let shared = Database.database(url: url)
        let own = try Database(url: url, options: options)
        func phase(_ db: Database) -> ClientCore.Phase { db.state.withLock { $0.core.phase } }
        #expect(phase(shared) == .offline)
        DatabaseReference.goOnline()
        #expect(phase(shared) != .offline, "goOnline() starts connecting every shared database")
        #expect(phase(own) == .offline, "a database the app created is the app's to take online")
        DatabaseReference.goOffline()
        #expect(phase(shared) == .offline)
        try shared.close()
        try own.close()
    }
}
