import HearthModel
@_spi(HearthInternals) import HearthWire
import Testing

@_spi(HearthInternals) @testable import HearthServer

/// A write visits only the connections that hold a listen, and a tick only those the clock
/// reached; both must keep the output every connection would have had.
@Suite struct ListeningSetTests {
    @Test("a write reaches the connections listening now: not one that unlistened, closed or never listened")
    func writeReachesListenersOnly() {
        var h = CoreHarness()
        for n: UInt64 in 1...4 { _ = h.connect(n) }
        _ = h.send(1, 1, .listen(path: "room", query: .default, tag: nil, hash: ""))
        _ = h.send(2, 1, .listen(path: "room", query: .default, tag: nil, hash: ""))
        _ = h.send(3, 1, .listen(path: "room/a", query: .default, tag: nil, hash: ""))
        #expect(h.core.listening == [ConnectionID(1), ConnectionID(2), ConnectionID(3)])
        _ = h.send(2, 2, .unlisten(path: "room", query: .default, tag: nil))
        _ = h.disconnect(3)
        #expect(h.core.listening == [ConnectionID(1)], "connection 2 holds no listen, 3 is gone")
        let out = h.send(4, 1, .put(path: "room/a", data: .string("x"), hash: nil))
        let pushed = out.filter { if case .response = $0.1 { false } else { true } }.map(\.0)
        #expect(pushed == [1], "only connection 1 still listens")
        _ = h.send(2, 3, .listen(path: "room", query: .default, tag: nil, hash: ""))
        let again = h.send(4, 2, .put(path: "room/b", data: .string("y"), hash: nil))
        let pushedAgain = again.filter { if case .response = $0.1 { false } else { true } }.map(\.0)
        #expect(pushedAgain == [1, 2], "a listen again puts connection 2 back, in connection order")
    }

    @Test("a tick closes the idle connections among many, in connection order, and leaves the rest")
    func tickVisitsDueConnections() {
        var h = CoreHarness { $0.idleTimeoutMs = 1000 }
        let ids: [UInt64] = [10, 3, 7, 1, 12, 5]
        for n in ids { _ = h.connect(n) }
        _ = h.tick(600)
        for n: UInt64 in [1, 5, 12] { #expect(h.frame(n, "0").isEmpty) }
        let closed = h.tick(500).closes
        #expect(closed == [ConnectionID(3), ConnectionID(7), ConnectionID(10)])
        #expect(h.core.connectionCount == 3)
        #expect(h.tick(200).closes.isEmpty, "the others were heard 700 ms ago")
        #expect(h.tick(400).closes == [ConnectionID(1), ConnectionID(5), ConnectionID(12)])
    }
}
