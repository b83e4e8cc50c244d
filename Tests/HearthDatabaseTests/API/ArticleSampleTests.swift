import Foundation
import Testing
import HearthDatabase

/// The code of the `HearthDatabase` DocC articles (Sources/HearthDatabase/HearthDatabase.docc),
/// compiled and run against a server; DocSampleTests (HearthToolTests) checks each block is
/// copied verbatim between the markers.
@Suite("DocC article samples", .serialized)
struct ArticleSampleTests {
    @Test func gettingStarted() async throws {
        let server = try await TransportTestServer()
        let port = server.server.port
        let storeDirectory = TempDir().path
        let seen = Collected<String>()
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/GettingStarted.md
        // doc-sample-replace: ws://127.0.0.1:9000 => ws://127.0.0.1:\(port)
        var options = Database.Options()
        options.storeDirectory = storeDirectory
        let db = try Database(url: "ws://127.0.0.1:\(port)?ns=demo", options: options)
        // doc-sample end

        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/GettingStarted.md
        let scores = db.reference(withPath: "scores")
        scores.queryOrderedByValue().queryLimited(toLast: 3).observe(.childAdded) { snapshot in
            print(snapshot.key, snapshot.value ?? "null")
            seen.add(snapshot.key)  // doc-sample: test
        }
        try await scores.child("ada").setValue(5)
        try await scores.child("grace").setValue(7)
        let snapshot = try await scores.getData()
        print(snapshot.childrenCount)  // 2
        #expect(snapshot.childrenCount == 2)  // doc-sample: test
        #expect(await eventually { seen.all.sorted() == ["ada", "grace"] })  // doc-sample: test
        try db.close()
        // doc-sample end
        try await server.stop()
    }

    @Test func gettingStartedEmulator() async throws {
        let server = try await TransportTestServer()
        let port = server.server.port
        var options = Database.Options()
        options.storeDirectory = TempDir().path
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/GettingStarted.md
        // doc-sample-replace: port: 9000 => port: port
        let production = try Database(url: "https://demo.firebaseio.com", options: options)
        production.useEmulator(withHost: "127.0.0.1", port: port)  // before the first reference
        // doc-sample end
        #expect(production.endpoint.port == port && !production.endpoint.secure)
        try await production.reference(withPath: "scores/ada").setValue(5)
        let snapshot = try await production.reference(withPath: "scores/ada").getData()
        #expect(snapshot.databaseValue.int64Value == 5)
        try production.close()
        try await server.stop()
    }

    @Test func offlineBehaviour() async throws {
        let server = try await TransportTestServer()
        var options = Database.Options()
        options.storeDirectory = TempDir().path
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=demo", options: options)
        let acks = Collected<String>()
        let outcomes = Collected<TransactionOutcome>()
        db.observeTransactionResults { outcomes.add($0) }
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/OfflineBehaviour.md
        db.registerTransactionFunction("increment") { current, argument in
            .success(withValue: .int((current.int64Value ?? 0) + (argument.int64Value ?? 1)))
        }
        db.goOffline()
        try db.reference(withPath: "counter").runTransaction(named: "increment", argument: 1)
        db.reference(withPath: "scores/ada").setValue(6) { error, _ in
            print(error.map { "\($0)" } ?? "acknowledged")
            acks.add(error.map { "\($0)" } ?? "acknowledged")  // doc-sample: test
        }
        #expect(acks.all.isEmpty, "nothing is answered offline")  // doc-sample: test
        db.goOnline()  // or a restart: both are sent, in order, when connected
        // doc-sample end
        #expect(await eventually { acks.all == ["acknowledged"] && outcomes.all.count == 1 })
        #expect(outcomes.all.first?.committed == true)
        let counter = try await db.reference(withPath: "counter").getData()
        #expect(counter.databaseValue.int64Value == 1, "\(counter.databaseValue)")
        try db.close()
        try await server.stop()
    }
}
