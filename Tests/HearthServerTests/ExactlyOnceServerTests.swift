import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// Exactly-once writes on the server (HearthDatabase's article "Exactly-once writes"): the hello offers them,
/// a stamped write at or below its writer's watermark is answered `ok` + `seen` without being
/// applied again, the watermark is committed with the write and survives a restart, refused
/// writes do not advance it, and the table is bounded.
@Suite("Server core: exactly-once writes")
struct ExactlyOnceServerTests {
    static func stamp(_ writer: String, _ id: Int64) -> WriteStamp { WriteStamp(writer: writer, id: id) }
    static let increment = json(#"{".sv":{"increment":1}}"#)

    @Test("the hello offers the extension (and not when it is off)")
    func helloOffers() {
        var h = CoreHarness()
        guard case let .hello(_, _, _, extensions) = h.connect(1) else { Issue.record("no hello"); return }
        #expect(extensions == ["w"])
        var off = CoreHarness { $0.exactlyOnceWrites = false }
        guard case let .hello(_, _, _, none) = off.connect(1) else { Issue.record("no hello"); return }
        #expect(none.isEmpty)
        #expect(
            ServerMessage.hello(timestamp: 5, host: "h", sessionID: "s", extensions: ["w"]).text
                == #"{"t":"c","d":{"t":"h","d":{"ts":5,"v":"5","h":"h","s":"s","x":["w"]}}}"#)
    }

    @Test("a re-sent increment is answered ok, seen, and applied once")
    func duplicateIsNotReapplied() {
        var h = CoreHarness()
        _ = h.connect(1)
        let first = h.send(1, 1, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c1", 4)))
        #expect(response(first, 1)?.status == "ok")
        #expect(h.durable.contains(.writerWatermark(writer: "c1", id: 4)))
        let writesBefore = h.durable.count
        // The connection drops before the ok arrives; the client re-sends on a new one.
        _ = h.disconnect(1)
        _ = h.connect(2)
        let again = h.send(2, 1, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c1", 4)))
        #expect(response(again, 1)?.status == "ok")
        #expect(WriteStamp.isSeen(response(again, 1)?.data))
        #expect(h.durable.count == writesBefore, "nothing to make durable")
        #expect(h.core.data.child(at: "n") == .number(1))
        // A merge at or below the watermark too; a new id applies.
        let merge = h.send(
            2, 2, .merge(path: "m", data: [(Path(keys: ["a"]), Self.increment)], stamp: Self.stamp("c1", 3)))
        #expect(WriteStamp.isSeen(response(merge, 2)?.data))
        #expect(h.core.data.child(at: "m").isEmpty)
        _ = h.send(2, 3, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c1", 5)))
        #expect(h.core.data.child(at: "n") == .number(2))
        // Another writer's id 4 is its own.
        _ = h.send(2, 4, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c2", 4)))
        #expect(h.core.data.child(at: "n") == .number(3))
        // Unstamped writes (Firebase's clients) are plain v5: applied every time.
        _ = h.send(2, 5, .put(path: "n", data: Self.increment, hash: nil))
        _ = h.send(2, 6, .put(path: "n", data: Self.increment, hash: nil))
        #expect(h.core.data.child(at: "n") == .number(5))
    }

    @Test("a recognised re-send is followed by the current data of the connection's overlapping listens")
    func seenRefreshesListens() throws {
        var h = CoreHarness(data: node(#"{"k":{"a":1,"b":2,"list":{"x":1}}}"#))
        _ = h.connect(1)
        _ = h.connect(2)
        _ = h.send(1, 1, .listen(path: "k", query: .default, tag: nil, hash: ""))
        _ = h.send(1, 2, .listen(path: "k/list", query: .default, tag: nil, hash: ""))
        let window = try QuerySpec.default.limitToFirst(1)
        _ = h.send(1, 3, .listen(path: "k", query: window, tag: 7, hash: ""))
        _ = h.send(1, 4, .listen(path: "other", query: .default, tag: nil, hash: ""))
        _ = h.send(1, 5, .put(path: "k/a", data: 5, hash: nil, stamp: Self.stamp("c1", 1)))
        _ = h.send(2, 1, .put(path: "k/a", data: 6, hash: nil))  // another client, later
        // c1 re-sends on the same connection (as after a reconnect): ok + seen, then the data.
        let again = h.send(1, 6, .put(path: "k/a", data: 5, hash: nil, stamp: Self.stamp("c1", 1)))
        #expect(again.first.map { $0.1 } == .response(number: 6, status: "ok", data: WriteStamp.seenResponse))
        let pushes = again.dropFirst().map(\.1)
        #expect(pushes.contains(.set(path: "k/a", data: 6, tag: nil)), "the default listen above: the written location")
        #expect(pushes.contains { if case .set(_, _, 7) = $0 { true } else { false } }, "the window, tagged")
        #expect(pushes.count == 2, "k/list and other do not overlap k/a: \(pushes)")
        #expect(again.allSatisfy { $0.0 == 1 }, "only the writer's connection")
        // The written location is sent once, whatever listens overlap it (here k/list below it).
        _ = h.send(1, 7, .put(path: "k", data: json(#"{"list":{"y":2}}"#), hash: nil, stamp: Self.stamp("c1", 2)))
        _ = h.send(2, 2, .put(path: "k/list/z", data: 3, hash: nil))
        let above = h.send(
            1, 8, .put(path: "k", data: json(#"{"list":{"y":2}}"#), hash: nil, stamp: Self.stamp("c1", 2))
        ).map(\.1)
        #expect(
            above.dropFirst().filter { if case .set(_, _, nil) = $0 { true } else { false } }
                == [.set(path: "k", data: json(#"{"list":{"y":2,"z":3}}"#), tag: nil)])
        // Under a leaf: the leaf is sent, not null at the written location.
        _ = h.send(2, 3, .put(path: "k", data: "s2", hash: nil))
        let underLeaf = h.send(
            1, 9, .merge(path: "k/list", data: [(Path(keys: ["y"]), JSONValue.number(2))], stamp: Self.stamp("c1", 2))
        ).map(\.1)
        #expect(underLeaf.contains(.set(path: "k", data: "s2", tag: nil)))
        // No listen overlaps: only the ok.
        _ = h.send(1, 10, .put(path: "elsewhere", data: 1, hash: nil, stamp: Self.stamp("c1", 3)))
        #expect(h.send(1, 11, .put(path: "elsewhere", data: 1, hash: nil, stamp: Self.stamp("c1", 3))).count == 1)
    }

    @Test("a transaction's compare-and-set re-sent after it applied is not judged against its own result")
    func resentCompareAndSet() {
        var h = CoreHarness(data: node(#"{"n":1}"#))
        _ = h.connect(1)
        let cas = ClientRequest.put(path: "n", data: 2, hash: node("1").hash, stamp: Self.stamp("c1", 1))
        #expect(response(h.send(1, 1, cas), 1)?.status == "ok")
        // Plain v5 would answer datastale (the hash no longer matches) and the client would
        // run the function again: applied twice.
        #expect(response(h.send(1, 2, cas), 2)?.status == "ok")
        #expect(h.core.data.child(at: "n") == .number(2))
    }

    @Test("with the extension off, stamps are ignored")
    func offIgnoresStamps() {
        var h = CoreHarness { $0.exactlyOnceWrites = false }
        _ = h.connect(1)
        for r in 1...2 {
            _ = h.send(1, r, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c1", 1)))
        }
        #expect(h.core.data.child(at: "n") == .number(2))
        #expect(!h.durable.contains { if case .writerWatermark = $0 { true } else { false } })
    }

    @Test("a write refused by the rules does not advance the watermark; its re-send is judged again")
    func refusedDoesNotAdvance() {
        var h = CoreHarness(emulator: false)
        _ = h.connect(1)
        let put = ClientRequest.put(path: "a", data: 1, hash: nil, stamp: Self.stamp("c1", 1))
        #expect(response(h.send(1, 1, put), 1)?.status == "permission_denied")
        #expect(h.core.writerWatermarks["c1"] == nil)
        let invalid = ClientRequest.put(
            path: "a", data: json(#"{".sv":"nope"}"#), hash: nil, stamp: Self.stamp("c1", 1))
        h.signIn(1, .admin)
        #expect(response(h.send(1, 2, invalid), 2)?.status == "invalid_data")
        #expect(h.core.writerWatermarks["c1"] == nil)
        let answer = response(h.send(1, 3, put), 3)
        #expect(answer?.status == "ok" && !WriteStamp.isSeen(answer?.data))
        #expect(h.core.data.child(at: "a") == .number(1))
        #expect(h.core.writerWatermarks["c1"]?.id == 1)
    }

    @Test("the watermark is committed with the write and survives a server restart")
    func survivesRestart() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("eo-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try Store.open(directory: dir)
        var h = CoreHarness()
        _ = h.connect(1)
        let out = h.core.receive(
            ConnectionID(1),
            frame: ClientRequest.put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c1", 9)).message(
                number: 1), now: h.now)
        #expect(out.writes == [.set("n", .number(1)), .writerWatermark(writer: "c1", id: 9)], "one output: one commit")
        try store.commit { (b: inout StoreBatch) throws(StoreError) in for w in out.writes { try b.apply(w) } }
        _ = try store.compact()
        try store.close()

        store = try Store.open(directory: dir)
        var restarted = CoreHarness(data: try store.serverValue(at: .root))
        restarted.core = ServerCore(
            data: try store.serverValue(at: .root), configuration: h.core.configuration, seed: 1,
            writerWatermarks: store.writerWatermarks())
        _ = restarted.connect(1)
        let again = restarted.send(1, 1, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp("c1", 9)))
        #expect(WriteStamp.isSeen(response(again, 1)?.data))
        #expect(restarted.core.data.child(at: "n") == .number(1))
        try store.close()
    }

    @Test(
        "the table keeps at most maxWriters: the least recently advanced are evicted, durably, and fall back to at-least-once"
    )
    func tableIsBounded() {
        var h = CoreHarness { $0.maxWriters = 4 }
        _ = h.connect(1)
        var r = 0
        func write(_ writer: String, _ id: Int64) -> (status: String, data: JSONValue?)? {
            r += 1
            return response(
                h.send(1, r, .put(path: "n", data: Self.increment, hash: nil, stamp: Self.stamp(writer, id))), r)
        }
        for (i, w) in ["a", "b", "c", "d"].enumerated() {
            _ = write(w, 1)
            h.now += 10 * Int64(i + 1)
        }
        _ = write("a", 2)  // a is now the most recent
        h.now += 100
        #expect(h.core.writerWatermarks.count == 4)
        _ = write("e", 1)
        #expect(h.core.writerWatermarks.count == 4, "bounded")
        #expect(h.core.writerWatermarks["b"] == nil, "the least recently advanced went")
        #expect(Set(h.core.writerWatermarks.keys) == ["a", "c", "d", "e"])
        #expect(h.durable.contains(.writerWatermarksRemoved(["b"])))
        #expect(h.core.data.child(at: "n") == .number(6))
        // b's re-send is applied again (at-least-once); a's is still recognised.
        #expect(!WriteStamp.isSeen(write("b", 1)?.data))
        #expect(WriteStamp.isSeen(write("a", 2)?.data))
        #expect(h.core.data.child(at: "n") == .number(7))
    }

    @Test("stamps: sent as w and i, decoded back; malformed ones are bad requests")
    func wireStamps() throws {
        let put = ClientRequest.put(path: "a", data: 1, hash: nil, stamp: Self.stamp("xyz", 42))
        let text = put.message(number: 3)
        #expect(text == #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":1,"w":"xyz","i":42}}}"#)
        #expect(try ClientMessage.decode(text) == .request(number: 3, put))
        let merge = ClientRequest.merge(path: "a", data: [(Path(keys: ["b"]), 1)], stamp: Self.stamp("xyz", 43))
        #expect(try ClientMessage.decode(merge.message(number: 4)) == .request(number: 4, merge))
        for body in [
            #""w":"x""#, #""i":1"#, #""w":"","i":1"#, #""w":"x","i":0"#, #""w":"x","i":1.5"#, #""w":5,"i":1"#,
            #""w":"x","i":9007199254740993"#,
        ] {
            let bad = #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1,"# + body + "}}}"
            #expect(throws: WireError.self, "\(body)") { try ClientMessage.decode(bad) }
        }
        // A malformed stamp is a protocol error: nothing applied, the connection refused.
        var h = CoreHarness()
        _ = h.connect(1)
        let out = h.frame(1, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1,"w":"","i":1}}}"#)
        #expect(h.core.data.isEmpty)
        #expect(out.closes == [ConnectionID(1)])
    }
}
