import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// Exactly-once writes with a writer id per incarnation of a store, the client core against
/// the server core (SyncHarness: no sockets, no timing): a copy of a store loses none of its
/// new writes, and a restart with writes of two incarnations in flight applies each once.
@Suite struct WriterIncarnationTests {
    func node(_ json: String) -> Node { try! Node(jsonText: json) }
    func path(_ parent: String, _ n: Int) -> Path { Path(keys: [ChildKey(parent), ChildKey("\(n)")]) }

    /// The writes client `i` sent from its `from`-th message on: request number and stamp.
    static func writesSent(_ h: SyncHarness, _ i: Int, from: Int = 0) -> [(number: Int, stamp: WriteStamp?)] {
        h.sent[i].dropFirst(from).compactMap { text in
            guard case let .request(number, request)? = try? ClientMessage.decode(text) else { return nil }
            switch request {
            case let .put(_, _, _, stamp), let .merge(_, _, stamp): return (number, stamp)
            default: return nil
            }
        }
    }

    /// Whether client `i` got `ok` with `seen` for each of `numbers` (from its `from`-th
    /// received message on); `nil` for one it got no `ok` for.
    static func seen(_ h: SyncHarness, _ i: Int, _ numbers: [Int], from: Int = 0) -> [Bool?] {
        var answers: [Int: Bool] = [:]
        for text in h.received[i].dropFirst(from) {
            if case let .response(number, "ok", data)? = try? ServerMessage.decode(text) {
                answers[number] = WriteStamp.isSeen(data)
            }
        }
        return numbers.map { answers[$0] }
    }

    /// An answer to a request, on its way to a client.
    static func isAnswer(_ delivery: SyncHarness.Delivery) -> Bool {
        guard case let .toClient(_, _, text) = delivery, case .response? = try? ServerMessage.decode(text) else {
            return false
        }
        return true
    }

    /// A store with a pending write is copied while its app is closed (a backup); the original
    /// starts again and its new writes are applied; then the copy starts on another device
    /// and writes new values under the write ids the original used after the copy. Each of
    /// the copy's new writes is applied; only the write both share is answered `seen`.
    @Test func aCopiedStoreLosesNoWrite() throws {
        let h = SyncHarness()
        let original = try h.addClient(writerIDs: true)
        try h.write(original, .set(node(#""before the copy""#)), at: "shared")
        let backup = h.dirs.path + "/backup"
        try h.restart(original, copyingStoreTo: backup)
        h.call(original) { core, now in core.goOnline(now: now) }
        for n in 1...3 { try h.write(original, .set(node(#""original \#(n)""#)), at: path("original", n)) }
        h.run()
        #expect(h.clients[original].store.pendingWrites().isEmpty)
        #expect(Self.writesSent(h, original).map(\.stamp?.writer) == ["c0.1", "c0.2", "c0.2", "c0.2"])

        let copy = try h.addClient(dir: backup, writerIDs: true)
        var ids: [Int64] = []
        for n in 1...3 { ids.append(try h.write(copy, .set(node(#""copy \#(n)""#)), at: path("copy", n))) }
        #expect(ids == [2, 3, 4], "the copy numbers its new writes as the original did after the copy")
        h.call(copy) { core, now in core.goOnline(now: now) }
        h.run()

        let sent = Self.writesSent(h, copy)
        #expect(sent.map(\.stamp) == [1, 2, 3, 4].map { WriteStamp(writer: $0 == 1 ? "c0.1" : "c1.1", id: $0) })
        #expect(Self.seen(h, copy, sent.map(\.number)) == [true, false, false, false])
        for n in 1...3 { #expect(h.server.data.child(at: path("copy", n)) == node(#""copy \#(n)""#)) }
        #expect(h.server.data.child(at: "original").children.count == 3)
        #expect(h.server.data.child(at: "shared") == node(#""before the copy""#))
        #expect(h.clients[copy].store.pendingWrites().isEmpty)
        let completed = h.clients[copy].events.compactMap { e -> Int64? in
            if case .writeCompleted(let id, nil) = e { id } else { nil }
        }
        #expect(completed == [1, 2, 3, 4])
    }

    /// Writes of two incarnations are pending; the server applies them and every answer is
    /// lost; the client restarts (a third incarnation) and sends them again, each under the
    /// writer id it was created under: each is recognised and none is applied twice (each
    /// increments a counter), while the new incarnation's own write is applied.
    @Test func reSendsOfTwoIncarnationsAreRecognisedAfterARestart() throws {
        let h = SyncHarness()
        let c = try h.addClient(writerIDs: true)
        let increment = node(#"{".sv":{"increment":1}}"#)
        for _ in 0..<2 { try h.write(c, .set(increment), at: "counter") }
        try h.restart(c)
        for _ in 0..<2 { try h.write(c, .set(increment), at: "counter") }
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run(losing: Self.isAnswer)
        #expect(h.server.data.child(at: "counter") == node("4"), "applied, the answers lost")
        #expect(h.clients[c].store.pendingWrites().count == 4)
        let firstSend = Self.writesSent(h, c).map(\.stamp)
        #expect(
            firstSend == [(1, "c0.1"), (2, "c0.1"), (3, "c0.2"), (4, "c0.2")].map { WriteStamp(writer: $1, id: $0) })

        try h.restart(c)
        let sentBefore = h.sent[c].count, receivedBefore = h.received[c].count
        try h.write(c, .set(increment), at: "counter")
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        let again = Self.writesSent(h, c, from: sentBefore)
        #expect(again.map(\.stamp) == firstSend + [WriteStamp(writer: "c0.3", id: 5)])
        #expect(Self.seen(h, c, again.map(\.number), from: receivedBefore) == [true, true, true, true, false])
        #expect(h.server.data.child(at: "counter") == node("5"), "each write applied once")
        #expect(h.clients[c].store.pendingWrites().isEmpty)
    }
}
