import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Synchronization
import Testing

/// A policy that records the trees each write check is shown, and allows or denies as told.
final class RecordingWritePolicy: AccessPolicy {
    let allows: Bool
    let judged = Mutex<[(writes: [(path: Path, value: Node)], oldData: Node, newData: Node)]>([])

    init(allows: Bool = true) { self.allows = allows }

    func read(_ path: Path, query: QuerySpec, principal: Principal, data: Node, now: Int64) -> AccessDecision {
        .allow
    }

    func write(
        _ writes: [(path: Path, value: Node)], principal: Principal, oldData: Node, newData: Node, now: Int64
    ) -> AccessDecision {
        judged.withLock { $0.append((writes, oldData, newData)) }
        return allows ? .allow : .deny
    }
}

@Suite("The server's write path: one plan per write, a written-out ok, one lock section per message")
struct WritePathTests {
    @Test("a put makes the data exactly the tree the policy judged, its server value resolved once")
    func putAppliesTheJudgedTree() {
        let policy = RecordingWritePolicy()
        var h = CoreHarness(data: node(#"{"count":5,"other":1}"#), policy: policy)
        _ = h.connect(1)
        let out = h.send(1, 1, .put(path: "count", data: json(#"{".sv":{"increment":2}}"#), hash: nil))
        #expect(response(out, 1)?.status == "ok")
        let judged = policy.judged.withLock { $0 }
        #expect(judged.count == 1)
        #expect(judged.first?.newData == h.core.data)
        #expect(judged.first?.oldData == node(#"{"count":5,"other":1}"#))
        #expect(judged.first?.writes.map(\.path) == [Path("count")])
        #expect(judged.first?.writes.first?.value == node("7"))
        #expect(h.core.data == node(#"{"count":7,"other":1}"#))
        #expect(h.durable == [.set(Path("count"), node("7"))])
    }

    @Test("a merge makes the data the tree the policy judged; its durable children are relative and resolved")
    func mergeAppliesTheJudgedTree() {
        let policy = RecordingWritePolicy()
        var h = CoreHarness(data: node(#"{"m":{"a":1,"b":{"c":2}}}"#), policy: policy)
        _ = h.connect(1)
        let out = h.send(
            1, 1,
            .merge(
                path: "m",
                data: [(Path("a"), json(#"{".sv":{"increment":10}}"#)), (Path("b/c"), json(#"{".sv":"timestamp"}"#))]))
        #expect(response(out, 1)?.status == "ok")
        let judged = policy.judged.withLock { $0 }
        #expect(judged.count == 1)
        #expect(judged.first?.newData == h.core.data)
        #expect(judged.first?.writes.map(\.path) == [Path("m/a"), Path("m/b/c")])
        let expected = node(#"{"m":{"a":11,"b":{"c":\#(h.now)}}}"#)
        #expect(h.core.data == expected)
        #expect(
            h.durable == [
                .merge(
                    Path("m"),
                    [
                        ChildUpdate(path: Path("a"), node: node("11")),
                        ChildUpdate(path: Path("b/c"), node: node("\(h.now)")),
                    ])
            ])
    }

    @Test("a denied put or merge changes nothing and asks nothing durable")
    func deniedWritesChangeNothing() {
        let policy = RecordingWritePolicy(allows: false)
        let start = node(#"{"a":1}"#)
        var h = CoreHarness(data: start, policy: policy)
        _ = h.connect(1)
        #expect(response(h.send(1, 1, .put(path: "a", data: .number(2), hash: nil)), 1)?.status == "permission_denied")
        #expect(
            response(h.send(1, 2, .merge(path: "", data: [(Path("a"), .number(3))])), 2)?.status == "permission_denied")
        #expect(policy.judged.withLock { $0.map(\.newData) } == [node(#"{"a":2}"#), node(#"{"a":3}"#)])
        #expect(h.core.data == start)
        #expect(h.durable.isEmpty)
    }

    @Test("an onDisconnect set and merge run with the tree their check was shown")
    func onDisconnectAppliesTheJudgedTree() {
        let policy = RecordingWritePolicy()
        var h = CoreHarness(data: node(#"{"n":1}"#), policy: policy)
        _ = h.connect(1)
        _ = h.send(1, 1, .onDisconnectPut(path: "n", data: json(#"{".sv":{"increment":1}}"#)))
        _ = h.send(1, 2, .onDisconnectMerge(path: "", data: [(Path("m"), .number(4))]))
        let queued = policy.judged.withLock { $0.count }
        _ = h.disconnect(1)
        let ran = policy.judged.withLock { Array($0.dropFirst(queued)) }
        #expect(ran.count == 2)
        #expect(ran.last?.newData == h.core.data)
        #expect(h.core.data == node(#"{"n":2,"m":4}"#))
    }

    @Test("an ok is the bytes its JSON serializes to, for every request number a client can send")
    func okTextIsItsJSON() throws {
        for number in [0, 1, 9, 10, 99, 100, 12_345, 1 << 31, 1 << 40, (1 << 53) - 1] {
            let message = ServerMessage.response(number: number, status: "ok", data: nil)
            #expect(message.text == message.json.serialized())
            guard case let .response(n, status, data) = try ServerMessage.decode(message.text) else {
                Issue.record("not a response: \(message.text)")
                continue
            }
            #expect(n == number && status == "ok" && data == .object([]))
        }
        // Outside what a request number can be, the JSON is serialized as for any message.
        for number in [-1, 1 << 53, Int.max] {
            let message = ServerMessage.response(number: number, status: "ok", data: nil)
            #expect(message.text == message.json.serialized())
        }
    }

    @Test("a message whose segments include one that is a whole message by itself is handled as the message they make")
    func segmentsAreHandledAsTheirMessage() async throws {
        let rig = try await RuntimeRig()
        let sink = rig.connect(1)
        let id = ConnectionID(1)
        // The middle segment alone is a ping; the three together are a put of that object.
        rig.runtime.received(id, "3")
        rig.runtime.received(id, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":"#)
        rig.runtime.received(id, #"{"t":"c","d":{"t":"p"}}"#)
        rig.runtime.received(id, "}}}")
        #expect(sink.response(1)?.status == "ok")
        #expect(!sink.messages.contains(.pong))
        #expect(rig.runtime.servedValue(at: "a") == node(#"{"t":"c","d":{"t":"p"}}"#))
        // The last segment opens a JSON object too, and alone is not a message.
        rig.runtime.received(id, "2")
        rig.runtime.received(id, #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/c","d":"#)
        rig.runtime.received(id, #"{"k":1}}}}"#)
        #expect(sink.response(2)?.status == "ok")
        #expect(rig.runtime.servedValue(at: "c") == node(#"{"k":1}"#))
        // A whole message in one frame, then one that is not JSON: answered, then refused.
        rig.send(1, 3, .put(path: "b", data: .number(1), hash: nil))
        #expect(sink.response(3)?.status == "ok")
        rig.runtime.received(id, #"{"t":"d","#)
        #expect(sink.waitClosed())
        #expect(rig.runtime.servedValue(at: "b") == node("1"))
        rig.runtime.stop()
    }
}
