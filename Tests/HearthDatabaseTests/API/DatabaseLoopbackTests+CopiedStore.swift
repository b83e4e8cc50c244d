import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// The Database runtime's writer ids (the article "Exactly-once writes"): a fresh one per opening of
/// the store, committed with its first write, so a store restored from a backup or copied to
/// another device loses none of its writes. Every wait is on a state the test then checks (the
/// deadline only guards a hang).
extension DatabaseLoopbackTests {
    /// The store of an app with one write pending is copied while the app is closed (Android
    /// auto-backup, an iOS device restore); the original goes on and has more writes applied;
    /// then the copy opens and writes new values — under the write ids the original used after
    /// the copy. Every one of them is applied on the server.
    @Test func aCopyOfTheStoreLosesNoWrite() async throws {
        let server = try await TransportTestServer()
        let original = TempDir(), copy = TempDir()
        do {
            let db = try Database(url: url(server), options: options(original.path, online: false))
            _ = try db.saveWrite(
                .set(.string("before the copy")), at: db.reference(withPath: "shared"), queue: nil, completion: nil)
            try db.close()
        }
        try FileManager.default.copyItem(atPath: original.path, toPath: copy.path)
        do {
            let db = try Database(url: url(server), options: options(original.path))
            for n in 1...3 {
                _ = try db.saveWrite(
                    .set(.string("original \(n)")), at: db.reference(withPath: "original/\(n)"), queue: nil,
                    completion: nil)
            }
            #expect(await eventually { db.pendingWriteIDs.isEmpty })
            try db.close()
        }
        #expect(try server.store.value(at: "original").children.count == 3)

        let db = try Database(url: url(server), options: options(copy.path, online: false))
        let results = Collected<WriteResult>()
        db.observeWriteResults { results.add($0) }
        var ids: [WriteID] = []
        for n in 1...3 {
            ids.append(
                try db.saveWrite(
                    .set(.string("copy \(n)")), at: db.reference(withPath: "copy/\(n)"), queue: nil, completion: nil))
        }
        #expect(ids.map(\.rawValue) == [2, 3, 4], "the copy numbers its writes as the original did")
        db.goOnline()
        #expect(await eventually { results.all.count == 4 })
        #expect(results.all.map(\.id.rawValue) == [1, 2, 3, 4])
        #expect(results.all.allSatisfy { $0.error == nil })
        for n in 1...3 {
            #expect(try server.store.value(at: Path(keys: ["copy", ChildKey("\(n)")])) == .string("copy \(n)"))
        }
        #expect(try server.store.value(at: "shared") == .string("before the copy"))
        try db.close()
        try await server.stop()
    }

    /// Opening the store writes nothing (no extra fsync); the first write of each opening
    /// carries a fresh 128-bit writer id in its own commit, and the writes saved earlier keep
    /// theirs.
    @Test func eachOpeningWritesUnderAFreshID() throws {
        let dir = TempDir()
        func write(_ db: Database, _ key: String) throws {
            _ = try db.saveWrite(.set(.bool(true)), at: db.reference(withPath: key), queue: nil, completion: nil)
        }
        var db = try Database(url: "ws://127.0.0.1:9?ns=test", options: options(dir.path, online: false))
        try db.close()
        db = try Database(url: "ws://127.0.0.1:9?ns=test", options: options(dir.path, online: false))
        try write(db, "a")
        try write(db, "b")
        try db.close()
        db = try Database(url: "ws://127.0.0.1:9?ns=test", options: options(dir.path, online: false))
        try write(db, "c")
        try db.close()

        let store = try Store.open(directory: dir.path)
        #expect(store.lastLSN == 3, "one commit per write, nothing at open")
        let table = store.writerIdentities()
        let writers = store.pendingWrites().map { table.writer(of: $0.id) }
        #expect(writers.count == 3 && writers[0] == writers[1] && writers[1] != writers[2])
        for w in writers { #expect(w?.count == 32 && w?.allSatisfy(\.isHexDigit) == true) }
        try store.close()
    }
}
