import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
import Synchronization
import Testing
@testable import HearthDatabase

/// Collects a store listener's events as short strings.
final class Recorder: Sendable {
    private let lines = Mutex<[String]>([])
    func record(_ e: ViewEvent) {
        let line: String =
            switch e.kind {
            case .value: "value \(e.node.plainJSONString())"
            default: "\(e.kind.rawValue) \(e.childKey?.string ?? "?")"
            }
        lines.withLock { $0.append(line) }
    }
    func take() -> [String] {
        lines.withLock { l in
            defer { l = [] }; return l
        }
    }
}

/// The documentation's offline-query story at the protocol level: the client core and its
/// store against the server core, no sockets.
@Suite struct DocumentationFlowCoreTests {
    let dinosaurs = try! Node(
        jsonText:
            #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
    )

    func listen(_ h: SyncHarness, _ c: Int, _ query: QuerySpec) throws -> Recorder {
        let r = Recorder()
        _ = try h.clients[c].store.addListener(at: "scores", query: query) { r.record($0) }
        h.call(c) { core, now in core.listen(QueryLocation(path: "scores", query: query), now: now) }
        return r
    }

    @Test func limitToLastOfflineAndBackOnline() throws {
        let h = SyncHarness(data: Node(children: [(ChildKey("scores"), dinosaurs)]))
        let c = try h.addClient()
        let byValue = QuerySpec(orderBy: .value)
        h.call(c) { core, now in core.goOnline(now: now) }
        let top4 = try listen(h, c, try byValue.limitToLast(4))
        h.run()
        #expect(
            top4.take() == [
                "child_added triceratops", "child_added bruhathkayosaurus", "child_added linhenykus",
                "child_added pterodactyl",
                #"value {"bruhathkayosaurus":55,"linhenykus":80,"pterodactyl":93,"triceratops":22}"#,
            ])
        // The connection is lost and the app restarts, offline.
        try h.restart(c)
        let two = try listen(h, c, try byValue.limitToLast(2))
        h.clients[c].store.waitForEventDelivery()
        #expect(two.take() == ["child_added linhenykus", "child_added pterodactyl"])
        let six = try listen(h, c, try byValue.limitToLast(6))
        h.clients[c].store.waitForEventDelivery()
        #expect(
            six.take() == [
                "child_added triceratops", "child_added bruhathkayosaurus", "child_added linhenykus",
                "child_added pterodactyl",
            ])
        // Back online: the final two child_added and the value.
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        #expect(
            six.take() == [
                "child_added stegosaurus", "child_added lambeosaurus",
                #"value {"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#,
            ])
        #expect(two.take() == [#"value {"linhenykus":80,"pterodactyl":93}"#])
    }

    /// A child deleted on the server while a client was offline leaves its limited window on
    /// reconnect (the server's new window replaces the view's, tagged).
    @Test func deletionWhileOfflineLeavesTheWindow() throws {
        let h = SyncHarness(data: Node(children: [(ChildKey("scores"), dinosaurs)]))
        let c = try h.addClient()
        let top2 = try QuerySpec(orderBy: .value).limitToLast(2)
        h.call(c) { core, now in core.goOnline(now: now) }
        let r = try listen(h, c, top2)
        h.run()
        _ = r.take()
        h.disconnect(c)
        // Another client deletes the top score meanwhile.
        let other = try h.addClient()
        h.call(other) { core, now in core.goOnline(now: now) }
        h.run()
        try h.write(other, .set(.empty), at: "scores/pterodactyl")
        h.run()
        h.advance(60_000)
        h.run()
        #expect(
            r.take() == [
                "child_removed pterodactyl", "child_added bruhathkayosaurus",
                #"value {"bruhathkayosaurus":55,"linhenykus":80}"#,
            ])
    }
}
