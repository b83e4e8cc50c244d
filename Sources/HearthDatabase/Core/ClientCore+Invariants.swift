import Hearth
import HearthModel

// What holds between the core's fields after every input, stated once and checked after each
// step (the runtime's `Database.step` in debug builds, the simulator after every call), so a
// step that leaves the core inconsistent fails at that step rather than later, somewhere else.
extension ClientCore {
    /// The largest tables the whole-table checks walk: beyond it only the checks that cost
    /// O(1) run, so a drain of 100,000 writes in a debug build does not become O(N²). The
    /// simulator's cores stay far below it.
    static let invariantScanLimit = 512

    /// The invariants that do not hold, each named; empty when the core is consistent.
    ///
    /// - A writer id or a compare-and-set condition belongs to an unanswered write.
    /// - Off a connection nothing is in flight: no request, no write or onDisconnect operation
    ///   marked sent, no get marked sent, no server offer (stamps) or acceptance (auth) kept,
    ///   and no onDisconnect operation acknowledged (the server ran those when the connection
    ///   dropped, and they left with it).
    /// - The writes sent on a connection went out in increasing id order, the last one
    ///   recorded; every write or onDisconnect request in flight is one marked sent.
    /// - Tags and filtered listens are one-to-one; every listen has a registration; listens
    ///   stay within ``Configuration/maxListens``; request numbers and tags are below the next
    ///   one to be issued.
    package func invariantViolations() -> [String] {
        var broken: [String] = []
        func check(_ holds: Bool, _ name: @autoclosure () -> String) { if !holds { broken.append(name()) } }

        check(writerIDs.count <= writes.count, "more writer ids than unanswered writes")
        check(conditions.count <= writes.count, "more conditions than unanswered writes")
        check(listens.count <= configuration.maxListens, "more listens than the bound")
        if !isConnected {
            check(requests.isEmpty, "a request in flight off a connection")
            check(sentWrites.isEmpty && lastSentWriteID == .min, "a write marked sent off a connection")
            check(sentOnDisconnects.isEmpty, "an onDisconnect operation marked sent off a connection")
            check(!stampsWrites, "the server's offer of stamps kept off a connection")
            check(!isAuthenticated, "authenticated off a connection")
        }

        let tables = writes.count + listens.count + requests.count + onDisconnects.count + gets.count
        guard tables <= ClientCore.invariantScanLimit else { return broken }
        for id in writerIDs.keys { check(writes[id] != nil, "writer id of write \(id), which is not unanswered") }
        for id in conditions.keys { check(writes[id] != nil, "condition of write \(id), which is not unanswered") }
        for id in sentWrites { check(id <= lastSentWriteID, "write \(id) marked sent above the last sent") }
        for (number, request) in requests {
            check(number < nextRequest, "request \(number) not yet issued")
            switch request {
            case .write(let id): check(sentWrites.contains(id), "write \(id) in flight but not marked sent")
            case .onDisconnect(let id):
                check(sentOnDisconnects.contains(id), "onDisconnect \(id) in flight but not marked sent")
            default: break
            }
        }
        var tagged = 0
        for (location, listen) in listens {
            check(listen.count > 0, "a listen at \(location) with no registration")
            if let tag = listen.tag {
                tagged += 1
                check(tags[tag] == location, "tag \(tag) does not name its listen")
                check(tag < nextTag, "tag \(tag) not yet issued")
            }
        }
        check(tagged == tags.count, "tags without a listen")
        for (id, op) in onDisconnects where !isConnected {
            check(!op.acknowledged, "onDisconnect \(id) acknowledged off a connection")
        }
        if !isConnected { for (id, get) in gets { check(!get.sent, "get \(id) marked sent off a connection") } }
        return broken
    }

    /// Stops a debug build at the step that broke an invariant (``invariantViolations()``).
    func assertInvariants() {
        assert(invariantViolations().isEmpty, "the client core's invariants broken: \(invariantViolations())")
    }
}
