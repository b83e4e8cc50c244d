import Dispatch
import Foundation
import Hearth
import HearthModel
import HearthTesting
import Synchronization
import Testing
@testable import HearthDatabase

/// The platform transport, recording every message the client sends.
final class SentMessages: Transport {
    let inner = PlatformTransport.make()
    let sent = Mutex<[String]>([])

    struct Connection: TransportConnection {
        let inner: any TransportConnection
        let owner: SentMessages
        func send(_ message: String) {
            owner.sent.withLock { $0.append(message) }
            inner.send(message)
        }
        func close() { inner.close() }
        func setReading(_ reading: Bool) { inner.setReading(reading) }
    }

    func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        Connection(inner: inner.connect(to: endpoint, lastSessionID: lastSessionID, events: events), owner: self)
    }

    var all: [String] { sent.withLock { $0 } }

    /// The values of the `p` (set) requests sent for `path`, in the order they were sent.
    func sets(at path: String) -> [String] {
        all.compactMap { text -> String? in
            guard let json = try? JSONValue.parse(text), json["d"]?["a"]?.stringValue == "p",
                let body = json["d"]?["b"],
                body["p"]?.stringValue?.trimmingCharacters(in: CharacterSet(charactersIn: "/")) == path
            else { return nil }
            return body["d"]?.stringValue
        }
    }
}

/// Who waits for a write: the caller never waits for a sync; the database's queue makes the
/// write durable, then sends it. And where handlers run.
@Suite("Writes off the caller's thread", .serialized)
struct WriteThreadingTests {
    /// A store at full durability on a simulated disk.
    func options(_ fs: SimulatedFileSystem, online: Bool = false) -> Database.Options {
        var o = Database.Options()
        o.storeDirectory = "/db"
        o.fileSystem = fs
        o.connectAtOpen = online
        o.callbackQueue = DispatchQueue(label: "test.callbacks")
        return o
    }

    /// The main queue is serviced under `swift test` (Swift Testing's async entry point), so
    /// handlers on main — the default — do run in the tests.
    @Test func mainQueueIsServiced() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in DispatchQueue.main.async { c.resume() }
        }
    }

    /// A sync that fails: the write is never sent, its completion and the write-result
    /// observers get the error, and later writes are refused.
    @Test func aWriteWhoseSyncFailsIsNeverSent() async throws {
        let server = try await TransportTestServer()
        let fs = SimulatedFileSystem(seed: 46)
        let transport = SentMessages()
        var o = options(fs, online: true)
        o.transport = transport
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=test", options: o)
        let ref = db.reference(withPath: "a")
        // Answered, and the answer committed, before the disk fails.
        try await ref.setValue(.string("first"))
        fs.injectFault(.sync, .ioError, sticky: true)
        let completion = Collected<DatabaseError?>(), results = Collected<WriteResult>()
        db.observeWriteResults { results.add($0) }
        let id = try ref.setValue(.string("second")) { error, _ in completion.add(error) }
        #expect(await eventually { completion.all.count == 1 && results.all.count == 1 })
        #expect(completion.all.first! != nil, "the completion has the error")
        #expect(results.all.map(\.id) == [id] && results.all.first?.error != nil)
        #expect(throws: DatabaseError.self) { try ref.setValue(.string("third"), on: nil, withCompletionBlock: nil) }
        db.work.sync {}
        #expect(transport.sets(at: "a") == ["first"], "the write that was not made durable was never sent")
        #expect(try server.store.value(at: "a") == .string("first"))
        try? db.close()
        try await server.stop()
    }

    /// Writes from several threads reach the server in the order of their ids.
    @Test func writesFromSeveralThreadsAreSentInIdOrder() async throws {
        let server = try await TransportTestServer()
        let fs = SimulatedFileSystem(seed: 46)
        let transport = SentMessages()
        var o = options(fs)
        o.transport = transport
        let db = try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=test", options: o)
        let ref = db.reference(withPath: "x")
        let made = Collected<(WriteID, String)>()
        let done = Collected<DatabaseError?>()
        let threads = 4, each = 100
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<each {
                let value = "t\(t)-\(i)"
                if let id = try? ref.setValue(.string(value), withCompletionBlock: { e, _ in done.add(e) }) {
                    made.add((id, value))
                }
            }
        }
        #expect(made.all.count == threads * each)
        db.goOnline()
        #expect(await eventually { done.all.count == threads * each })
        #expect(done.all.allSatisfy { $0 == nil })
        let inIdOrder = made.all.sorted { $0.0 < $1.0 }.map(\.1)
        #expect(transport.sets(at: "x") == inIdOrder)
        #expect(try server.store.value(at: "x") == .string(inIdOrder.last!))
        try db.close()
        try await server.stop()
    }

    /// Once the database's queue has drained, every write is durable: a power cut that drops
    /// everything not synced loses none of them.
    @Test func aPowerCutAfterTheQueueDrainedKeepsEveryWrite() throws {
        let fs = SimulatedFileSystem(seed: 46)
        var ids: [WriteID] = []
        do {
            let db = try Database(url: "ws://127.0.0.1:9?ns=cut", options: options(fs))
            for i in 0..<50 { ids.append(try db.reference(withPath: "w/\(i)").setValue(.int(Int64(i)))) }
            db.work.sync {}
            fs.powerCut(mode: .dropAllUnsynced)
            try? db.close()
        }
        let db = try Database(url: "ws://127.0.0.1:9?ns=cut", options: options(fs))
        #expect(db.pendingWriteIDs == ids)
        #expect(try db.store.value(at: "w/49") == Node(.number(49)))
        try db.close()
    }
}
