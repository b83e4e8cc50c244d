import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// The core's stated invariants (`ClientCore.invariantViolations()`): they hold through a
/// connection's life, and each check names the field it finds inconsistent — a check that
/// could never fire would pass these only by accident.
@Suite struct ClientCoreInvariantTests {
    func node(_ json: String) -> Node { try! Node(jsonText: json) }
    let filtered = QueryLocation(path: "chat", query: try! QuerySpec.default.limitToLast(50))

    /// A connected client with a filtered listen, a write in flight and an acknowledged
    /// onDisconnect: every kind of table in use, every invariant holding.
    func busyClient() throws -> (SyncHarness, Int) {
        let h = SyncHarness()
        let c = try h.addClient()
        h.call(c) { core, now in core.listen(filtered, now: now) }
        h.call(c) { core, now in core.goOnline(now: now) }
        h.run()
        let op = OnDisconnectOperation(id: 1, path: Path("presence"), action: .remove)
        h.call(c) { core, now in core.onDisconnect(op, now: now) }
        h.run()
        _ = try h.write(c, .set(node("1")), at: "w")
        return (h, c)
    }

    @Test func holdThroughAConnectionsLife() throws {
        let (h, c) = try busyClient()
        #expect(h.clients[c].core.invariantViolations() == [])
        h.call(c) { core, now in core.goOffline(now: now) }
        #expect(h.clients[c].core.invariantViolations() == [])
        h.call(c) { core, now in core.unlisten(filtered, now: now) }
        #expect(h.clients[c].core.invariantViolations() == [])
    }

    @Test func aWriterIDWithoutItsWriteIsNamed() throws {
        var core = try busyClient().0.clients[0].core
        core.writerIDs[999] = "w"
        #expect(core.invariantViolations() == ["writer id of write 999, which is not unanswered"])
    }

    @Test func aConditionWithoutItsWriteIsNamed() throws {
        var core = try busyClient().0.clients[0].core
        core.conditions[999] = ClientCore.WriteCondition(hash: "h", transactionID: nil)
        #expect(core.invariantViolations().contains("condition of write 999, which is not unanswered"))
    }

    @Test func stateKeptOffAConnectionIsNamed() throws {
        let (h, c) = try busyClient()
        var core = h.clients[c].core
        core.phase = .offline
        let broken = Set(core.invariantViolations())
        #expect(broken.contains("a request in flight off a connection"))
        #expect(broken.contains("a write marked sent off a connection"))
        #expect(broken.contains("onDisconnect 1 acknowledged off a connection"))
    }

    @Test func aRequestInFlightNotMarkedSentIsNamed() throws {
        var core = try busyClient().0.clients[0].core
        core.requests[core.nextRequest - 1] = .write(12_345)
        #expect(core.invariantViolations().contains("write 12345 in flight but not marked sent"))
        core.requests[core.nextRequest + 1] = .unlisten
        #expect(core.invariantViolations().contains("request \(core.nextRequest + 1) not yet issued"))
    }

    @Test func aWriteSentOutOfOrderIsNamed() throws {
        var core = try busyClient().0.clients[0].core
        core.sentWrites.insert(core.lastSentWriteID + 1)
        #expect(core.invariantViolations() == ["write \(core.lastSentWriteID + 1) marked sent above the last sent"])
    }

    @Test func tagsAndListensOutOfStepAreNamed() throws {
        var core = try busyClient().0.clients[0].core
        let tag = try #require(core.listens[filtered]?.tag)
        core.tags[tag] = QueryLocation(path: "elsewhere", query: try QuerySpec.default.limitToFirst(1))
        #expect(core.invariantViolations() == ["tag \(tag) does not name its listen"])
        core.tags[tag] = filtered
        core.tags[tag + 7] = filtered
        #expect(core.invariantViolations() == ["tags without a listen"])
        core.tags[tag + 7] = nil
        core.listens[filtered]!.count = 0
        #expect(core.invariantViolations() == ["a listen at \(filtered) with no registration"])
    }

    @Test func theWholeTableChecksStopAtTheirLimit() throws {
        var core = try busyClient().0.clients[0].core
        core.writerIDs[999] = "w"
        for i in 0..<ClientCore.invariantScanLimit {
            core.gets[UInt64(1_000 + i)] = .init(location: filtered, deadline: nil)
        }
        #expect(core.invariantViolations() == [], "past the limit only the O(1) checks run")
        core.writerIDs[998] = "w"
        core.writerIDs[997] = "w"
        #expect(core.invariantViolations() == ["more writer ids than unanswered writes"])
    }
}
