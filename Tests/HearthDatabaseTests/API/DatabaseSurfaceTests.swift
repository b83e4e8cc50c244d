import Dispatch
import Foundation
import Hearth
import HearthModel
import HearthTesting
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// Firebase's `Database` surface beyond reads and writes: shared instances per URL, their
/// settings, `purgeOutstandingWrites()`, debug logging, errors as Firebase's `NSError`s.
@Suite("Firebase's Database surface", .serialized)
struct DatabaseSurfaceTests {
    /// Options of an offline database on a simulated disk at full durability.
    func options(_ fs: SimulatedFileSystem, log: Collected<String>? = nil) -> Database.Options {
        var o = Database.Options()
        o.storeDirectory = "/db"
        o.fileSystem = fs
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.surface.callbacks")
        if let log {
            o.logHandler = { log.add($0) }
            o.debugLogging = true
        }
        return o
    }

    /// Options that keep a shared instance offline.
    func offline() -> Database.Options {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.surface.shared")
        return o
    }

    // MARK: - Shared instances

    /// One instance per database: every URL that names it gives the same instance, another
    /// database another one.
    @Test func oneSharedInstancePerDatabase() throws {
        try Database.setOptions(offline(), forURL: "ws://127.0.0.1:9?ns=surface-one")
        try Database.setOptions(offline(), forURL: "ws://127.0.0.1:9?ns=surface-two")
        let a = Database.database(url: "ws://127.0.0.1:9?ns=surface-one")
        #expect(try Database.shared(url: "ws://127.0.0.1:9/?ns=surface-one") === a)
        #expect(Database.database(url: "http://127.0.0.1:9?ns=surface-one") === a, "http and ws name one database")
        #expect(Database.database(url: "ws://127.0.0.1:9?ns=surface-two") !== a)
        #expect(throws: DatabaseError.self) { try Database.shared(url: "ws://127.0.0.1:9/path?ns=surface-one") }
        #expect(throws: DatabaseError.self) { try Database.shared(url: "ftp://x") }
    }

    /// The host's case does not make another database.
    @Test func theHostsCaseNamesTheSameDatabase() throws {
        try Database.setOptions(offline(), forURL: "ws://LocalHost:9?ns=surface-case")
        let a = Database.database(url: "ws://localhost:9?ns=surface-case")
        #expect(Database.database(url: "ws://LOCALHOST:9?ns=surface-case") === a)
    }

    /// The options come before the instance; once it exists they are refused, as Firebase
    /// refuses settings after the first use. The instance reports them as Firebase's settings.
    @Test func settingsComeBeforeTheInstance() throws {
        let fs = SimulatedFileSystem(seed: 46)
        var o = options(fs)
        o.cacheSizeBytes = 2 << 20
        let queue = DispatchQueue(label: "test.surface.settings")
        o.callbackQueue = queue
        let url = "ws://127.0.0.1:9?ns=surface-settings"
        try Database.setOptions(o, forURL: url)
        let db = Database.database(url: url)
        #expect(db.isPersistenceEnabled)
        #expect(db.persistenceCacheSizeBytes == 2 << 20)
        #expect(db.callbackQueue === queue)
        #expect(throws: DatabaseError.self) { try Database.setOptions(o, forURL: url) }
        do {
            try Database.setOptions(o, forURL: url)
        } catch {
            guard case .alreadyInUse = error else { Issue.record("\(error)"); return }
        }
        let memory = Database.database(url: "ws://127.0.0.1:9?ns=surface-memory")
        #expect(!memory.isPersistenceEnabled, "persistence is off by default, as Firebase's")
        #expect(memory.persistenceCacheSizeBytes == 10 << 20)
        #expect(memory.callbackQueue.label == DispatchQueue.main.label)
        memory.goOffline()
        try memory.close()
        try db.close()
    }

    /// A closed shared instance is replaced by the next call.
    @Test func aClosedSharedInstanceIsReplaced() throws {
        let url = "ws://127.0.0.1:9?ns=surface-closed"
        try Database.setOptions(offline(), forURL: url)
        let first = Database.database(url: url)
        try first.close()
        let second = Database.database(url: url)
        #expect(second !== first)
        #expect(Database.database(url: url) === second)
    }

    /// `database()` opens the default URL: the one set, else `FIREBASE_DATABASE_URL`; with
    /// neither, the typed form throws.
    @Test func theDefaultURL() throws {
        let url = "ws://127.0.0.1:9?ns=surface-default"
        try Database.setOptions(offline(), forURL: url)
        Database.setDefaultURL(url)
        defer { Database.setDefaultURL(nil) }
        #expect(Database.database() === Database.database(url: url))
        let none = SharedDatabases()
        #expect(none.resolvedDefaultURL(environment: ["FIREBASE_DATABASE_URL": url]) == url)
        #expect(none.resolvedDefaultURL(environment: ["FIREBASE_DATABASE_URL": ""]) == nil)
        #expect(none.resolvedDefaultURL(environment: [:]) == nil)
        var set = SharedDatabases()
        set.defaultURL = "ws://other?ns=x"
        #expect(set.resolvedDefaultURL(environment: ["FIREBASE_DATABASE_URL": url]) == "ws://other?ns=x")
        Database.setDefaultURL(nil)
        if ProcessInfo.processInfo.environment["FIREBASE_DATABASE_URL"] == nil {
            #expect(throws: DatabaseError.self) { try Database.shared() }
        }
    }

    /// The article's sample: Firebase's `isPersistenceEnabled = true`, as options set first.
    @Test func theArticlesSettingsSample() throws {
        let appSupport = NSTemporaryDirectory() + "hearth-surface-\(UUID().uuidString)"
        defer {
            Database.setDefaultURL(nil)
            try? FileManager.default.removeItem(atPath: appSupport)
        }
        // doc-sample: Sources/HearthDatabase/HearthDatabase.docc/ClientAPI.md
        // doc-sample-replace: https://demo.firebaseio.com => ws://127.0.0.1:9?ns=surface-sample
        var options = Database.Options()
        options.storeDirectory = appSupport + "/hearth"
        options.connectAtOpen = false  // doc-sample: test
        Database.setDefaultURL("ws://127.0.0.1:9?ns=surface-sample")
        try Database.setOptions(options)
        let db = Database.database()
        #expect(db.isPersistenceEnabled)  // doc-sample: test
        // doc-sample end
        try db.close()
    }

    // MARK: - purgeOutstandingWrites

    /// Every unanswered write is dropped: its completion hears `write_canceled` (code 3),
    /// observers see the data without it, and it is gone from the store — durably: a power cut
    /// right after does not bring it back. Writes after the purge are kept.
    @Test func purgeDropsEveryPendingWriteDurably() async throws {
        let fs = SimulatedFileSystem(seed: 46)
        let log = Collected<String>()
        do {
            let db = try Database(url: "ws://127.0.0.1:9?ns=purge", options: options(fs, log: log))
            let seen = Collected<String>()
            db.reference(withPath: "a").observe(.value) { seen.add($0.node.plainJSONString()) }
            // What the server said (a complete listen): the data observers fall back to.
            try db.store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(Node(.string("server")), at: "a")
                try b.applyListenComplete(QueryLocation(path: "a", query: .default))
            }
            #expect(await eventually { seen.all == [#""server""#] })
            let done = Collected<DatabaseError?>(), results = Collected<WriteResult>()
            db.observeWriteResults { results.add($0) }
            let first = try db.reference(withPath: "a").setValue(.int(1)) { error, _ in done.add(error) }
            let second = try db.reference(withPath: "a/b").setValue(.int(2)) { error, _ in done.add(error) }
            #expect(await eventually { seen.all.last == #"{"b":2}"# })
            #expect(db.pendingWriteIDs == [first, second])
            db.purgeOutstandingWrites()
            #expect(await eventually { done.all.count == 2 && results.all.count == 2 })
            #expect(done.all == [.writeCanceled, .writeCanceled])
            #expect(results.all.map(\.id) == [first, second])
            #expect(results.all.allSatisfy { $0.error == .writeCanceled })
            #expect(db.pendingWriteIDs.isEmpty)
            #expect(try db.store.value(at: "a") == Node(.string("server")))
            #expect(await eventually { seen.all.last == #""server""# }, "\(seen.all)")
            let error = try #require(done.all.first ?? nil) as NSError
            #expect(error.domain == "com.firebase" && error.code == 3)
            #expect(error.localizedDescription == "Write cancelled by user")
            let later = try db.reference(withPath: "c").setValue(.int(3), on: nil, withCompletionBlock: nil)
            db.work.sync {}
            fs.powerCut(mode: .dropAllUnsynced)
            try? db.close()
            #expect(later.rawValue > second.rawValue)
        }
        #expect(log.all.contains("purging outstanding writes"))
        let db = try Database(url: "ws://127.0.0.1:9?ns=purge", options: options(fs))
        #expect(db.pendingWriteIDs.count == 1, "only the write made after the purge")
        #expect(try db.store.value(at: "a") == Node(.string("server")))
        #expect(try db.store.value(at: "c") == Node(.number(3)))
        try db.close()
    }

    /// The `async` form of a purged write throws `write_canceled`.
    @Test func aPurgedAsyncWriteThrows() async throws {
        let fs = SimulatedFileSystem(seed: 7)
        let db = try Database(url: "ws://127.0.0.1:9?ns=purge-async", options: options(fs))
        let ref = db.reference(withPath: "x")
        let task = Task { () -> DatabaseError? in
            do {
                try await ref.setValue(.string("v"))
                return nil
            } catch { return error as? DatabaseError }
        }
        #expect(await eventually { db.pendingWriteIDs.count == 1 })
        db.purgeOutstandingWrites()
        #expect(await task.value == .writeCanceled)
        try db.close()
    }

    /// A transaction waiting for the server aborts with `write_canceled`, uncommitted.
    @Test func aPurgedTransactionAborts() async throws {
        let fs = SimulatedFileSystem(seed: 11)
        let db = try Database(url: "ws://127.0.0.1:9?ns=purge-tx", options: options(fs))
        let outcome = Collected<(DatabaseError?, Bool)>()
        try db.reference(withPath: "n").runTransactionBlock({ _ in .success(withValue: .int(1)) }) {
            error, committed, _ in
            outcome.add((error, committed))
        }
        #expect(await eventually { db.pendingWriteIDs.count == 1 })
        db.purgeOutstandingWrites()
        #expect(await eventually { outcome.all.count == 1 })
        #expect(outcome.all.first?.0 == .writeCanceled)
        #expect(outcome.all.first?.1 == false)
        #expect(db.pendingWriteIDs.isEmpty)
        try db.close()
    }

    /// Debug logging is off unless turned on.
    @Test func debugLinesOnlyWhenLoggingIsEnabled() throws {
        let fs = SimulatedFileSystem(seed: 3)
        let log = Collected<String>()
        var o = options(fs, log: log)
        o.debugLogging = false
        let db = try Database(url: "ws://127.0.0.1:9?ns=quiet", options: o)
        db.purgeOutstandingWrites()
        #expect(log.all.isEmpty)
        try db.close()
    }

    /// The core drops sent and unsent writes alike; the server's late answer to a sent one is
    /// ignored.
    @Test func theCorePurgesSentAndUnsentWrites() throws {
        var core = ClientCore(
            pendingWrites: [PendingWrite(id: 1, path: "a", operation: .set(Node(.number(1))))], token: nil, seed: 1,
            hash: { _ in "" })
        let link = try #require(core.goOnline(now: 0).open)
        let out = core.received(ServerMessage.hello(timestamp: 0, host: "h", sessionID: "s").text, on: link, now: 0)
        #expect(out.messages.contains { $0.contains(#""a":"p""#) }, "write 1 was sent")
        _ = core.goOffline(now: 1)
        _ = core.write(PendingWrite(id: 2, path: "b", operation: .set(Node(.number(2)))), now: 1)
        let purged = core.purgeWrites(now: 2)
        #expect(purged.commits == [.revertWrite(1), .revertWrite(2)])
        #expect(
            purged.events == [
                .writeCompleted(id: 1, error: .writeCanceled), .writeCompleted(id: 2, error: .writeCanceled),
            ])
        #expect(core.unansweredWriteIDs.isEmpty)
    }

    /// A sent write purged before its answer: the answer changes nothing.
    @Test func anAnswerToAPurgedWriteIsIgnored() throws {
        var core = ClientCore(
            pendingWrites: [PendingWrite(id: 1, path: "a", operation: .set(Node(.number(1))))], token: nil, seed: 1,
            hash: { _ in "" })
        let link = try #require(core.goOnline(now: 0).open)
        let out = core.received(ServerMessage.hello(timestamp: 0, host: "h", sessionID: "s").text, on: link, now: 0)
        let numbers = out.messages.compactMap { (try? JSONValue.parse($0))?["d"]?["r"]?.doubleValue }
        let number = try #require(numbers.first)
        #expect(core.purgeWrites(now: 1).commits == [.revertWrite(1)])
        let answer = core.received(
            ServerMessage.response(number: Int(number), status: "ok", data: nil).text, on: link, now: 2)
        #expect(answer.commits.isEmpty && answer.events.isEmpty)
    }

    // MARK: - Errors as Firebase's

    /// Firebase's domain, codes and texts (firebase-ios-sdk `FUtilities errorForStatus`).
    @Test func errorsBridgeToFirebasesNSErrors() {
        func ns(_ e: DatabaseError) -> NSError { e as NSError }
        #expect(ns(.permissionDenied("permission_denied")).domain == "com.firebase")
        #expect(ns(.permissionDenied("permission_denied")).code == 1)
        #expect(ns(.permissionDenied("permission_denied")).localizedDescription == "Permission Denied")
        #expect(ns(.permissionDenied("no access to /a")).localizedDescription == "no access to /a")
        #expect(ns(.serverError(status: "unavailable", message: "unavailable")).code == 2)
        #expect(
            ns(.serverError(status: "unavailable", message: "unavailable")).localizedDescription
                == "Service is unavailable")
        #expect(ns(.writeCanceled).code == 3)
        #expect(ns(.transactionAborted("maxretry")).code == 9999)
        #expect(ns(.transactionAborted("maxretry")).localizedDescription == "maxretry")
        #expect(ns(.transactionAborted("disconnect")).localizedDescription == "disconnect")
        #expect(ns(.serverError(status: "datastale", message: "why")).localizedDescription == "why")
        #expect(ns(.invalidPath("a.b")).code == 9999)
        #expect(ns(.invalidPath("a.b")).localizedDescription == DatabaseError.invalidPath("a.b").description)
        #expect(DatabaseError.writeCanceled.errorDescription == "Write cancelled by user")
    }
}
