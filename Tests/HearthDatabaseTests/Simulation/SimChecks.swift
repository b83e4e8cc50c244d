import Hearth
import HearthModel
import HearthWire
@testable import HearthDatabase

/// The invariants, and the model they compare against.
///
/// **The model.** The server's durable data must equal every client write the server made
/// durable, applied in the order it made them durable (``modelData``). Writes are tracked by
/// client and write id: the simulator knows which request number carried which write.
///
/// **Where the protocol is at-least-once.** A client forgets the requests of a connection
/// when it ends and sends every unanswered write again on the next one (Firebase's
/// `restoreState_`). So a write the server applied whose `ok` did not reach the client — the
/// connection dropped after the server applied it, the client went offline or restarted
/// with the write in flight, the ack was in flight when the server restarted after making the
/// write durable — is applied again. Firebase's protocol has no request ids to deduplicate
/// with. A re-applied overwrite or merge is harmless unless another write touched the same
/// data in between: then the re-send undoes that later write (``Simulation/Stats/duplicatesChangingData``),
/// and the final data can differ from applying each write once, at its first arrival
/// (``exactlyOnceData``). That difference is counted, and fails the run only with
/// ``Simulation/Configuration/strictExactlyOnce``.
///
/// **Exactly-once writes.** Hearth's server offers write stamps (``WriteStamp``) and the
/// simulated clients have writer ids, so a re-send is recognised: answered `ok` with no
/// durable write (``Simulation/Stats/deduplicated``), which must be a write the server applied
/// before. With ``Simulation/Configuration/strictExactlyOnce`` (the default) any write applied
/// twice fails the run.
///
/// **Checked always:** each client's writes first reach the server in write order; every ack
/// follows the write's durability (the release rule); every saved write reaches the server
/// and is answered; after every restart a client's store passes `checkInvariants` and holds
/// exactly its unanswered writes, and the server holds exactly the model; gets answer what
/// the server held; no write is sent while the app asked to be offline; at quiescence every
/// listened query, in the store and as rebuilt from its listener's events, equals the query
/// over the server's data, and no write is pending.
final class SimChecks {
    var clients = 0
    /// The client writes the server made durable, in order (re-sends included).
    var log: [(client: Int, id: Int64)] = []
    /// Every durable write applied in order.
    var modelData: Node = .empty
    /// Only first arrivals applied.
    var exactlyOnceData: Node = .empty
    var applied: [Int: Set<Int64>] = [:]
    var lastFirstArrival: [Int: Int64] = [:]

    static func isWrite(_ message: String) -> Bool {
        guard case let .request(_, request)? = try? ClientMessage.decode(message) else { return false }
        switch request {
        case .put, .merge: return true
        default: return false
        }
    }

    /// The server released an output that applied these writes (now durable).
    func durablyApplied(_ writes: [(client: Int, id: Int64)], in sim: Simulation) {
        for (c, id) in writes {
            guard let w = sim.clients[c].saved[id] else {
                sim.fail("the server applied c\(c)'s write \(id), which the client never saved")
                continue
            }
            log.append((c, id))
            let after = w.applied(to: modelData)
            if applied[c, default: []].contains(id) {
                sim.stats.duplicates += 1
                if sim.configuration.strictExactlyOnce {
                    sim.fail("c\(c)'s write \(id) was applied twice (\(w.summary))")
                }
                if after != modelData {
                    sim.stats.duplicatesChangingData += 1
                    sim.note("RESEND c\(c) w\(id) applied again and changed the data (\(w.summary))")
                } else {
                    sim.note("RESEND c\(c) w\(id) applied again (no change)")
                }
            } else {
                if let last = lastFirstArrival[c], id <= last {
                    sim.fail("c\(c)'s write \(id) reached the server after its write \(last): write order broken")
                }
                lastFirstArrival[c] = id
                applied[c, default: []].insert(id)
                exactlyOnceData = w.applied(to: exactlyOnceData)
            }
            modelData = after
        }
        let durable = (try? sim.server.store.serverValue(at: .root)) ?? .empty
        if durable != modelData {
            sim.fail("the server's store holds \(durable.plainJSONString()), the model \(modelData.plainJSONString())")
        }
        if sim.server.outbox.isEmpty, sim.server.core.data != modelData {
            sim.fail("the server core holds \(sim.server.core.data.plainJSONString()) with nothing unreleased, the model \(modelData.plainJSONString())")
        }
    }

    /// The server released `ok`s for writes it did not apply again: each must be one it made
    /// durable before (released earlier: outputs release in order).
    func deduplicated(_ writes: [(client: Int, id: Int64)], in sim: Simulation) {
        for (c, id) in writes {
            sim.stats.deduplicated += 1
            sim.note("DEDUP c\(c) w\(id) recognised as a re-send")
            if !applied[c, default: []].contains(id) {
                sim.fail("the server answered c\(c)'s write \(id) ok without ever applying it")
            }
        }
    }

    /// An event a client core raised for the app.
    func event(_ event: ClientEvent, client i: Int, in sim: Simulation) {
        let client = sim.clients[i]
        switch event {
        case let .writeCompleted(id, nil):
            sim.stats.acks += 1
            guard client.saved[id] != nil else {
                sim.fail("c\(i) got an ack for write \(id), which it never saved")
                return
            }
            if !applied[i, default: []].contains(id) {
                sim.fail("c\(i) got the ack of write \(id) before the server made it durable (release rule)")
            }
            client.completed.insert(id)
        case let .writeCompleted(id, error?):
            sim.fail("c\(i)'s write \(id) was refused: \(error)")
        case let .getCompleted(id, .success(node)):
            guard let expected = client.expectedGets[id] else {
                sim.fail("c\(i)'s get \(id) completed without the server having answered it")
                return
            }
            if node != expected {
                sim.fail("c\(i)'s get \(id) returned \(node.plainJSONString()), the server held \(expected.plainJSONString())")
            }
        case .getCompleted(_, .failure(.offline)):
            break
        case let .getCompleted(id, .failure(error)):
            sim.fail("c\(i)'s get \(id) failed: \(error)")
        case let .listenRevoked(location, error):
            sim.fail("c\(i)'s listen \(location) was revoked: \(error)")
        case let .protocolWarning(why):
            sim.fail("c\(i) protocol warning: \(why)")
        case .connected, .serverTimeOffset, .authenticated, .writesPaused:
            break
        case .onDisconnectCompleted, .conditionalWriteInterrupted:
            // Not in the workload yet (transactions and onDisconnect join later).
            sim.fail("c\(i) got \(event), which the workload never asks for")
        }
    }

    /// After client `i` restarted: its store passes its invariants and holds exactly the
    /// writes it saved and has not had answered.
    func afterClientRestart(_ i: Int, in sim: Simulation) {
        let client = sim.clients[i]
        do {
            if let why = try client.store.state().checkInvariants() {
                sim.fail("c\(i)'s store after a restart: \(why)")
            }
        } catch {
            sim.fail("c\(i)'s store state after a restart: \(error)")
        }
        let pending = client.store.pendingWrites().map(\.id)
        let expected = client.saved.keys.filter { !client.completed.contains($0) }.sorted()
        if pending != expected {
            sim.fail("c\(i)'s store holds pending writes \(pending) after a restart, expected \(expected)")
        }
    }

    /// After the server restarted: it holds exactly what it made durable.
    func afterServerRestart(in sim: Simulation) {
        if sim.server.core.data != modelData {
            sim.fail("the restarted server holds \(sim.server.core.data.plainJSONString()), the model \(modelData.plainJSONString())")
        }
    }

    /// At quiescence.
    func final(_ sim: Simulation) {
        let data = sim.server.core.data
        if data != modelData {
            sim.fail("at quiescence the server holds \(data.plainJSONString()), the model \(modelData.plainJSONString())")
        }
        if exactlyOnceData != modelData {
            sim.stats.finalDiffersFromExactlyOnce = true
            sim.note("AT-LEAST-ONCE: final data \(modelData.plainJSONString()) differs from each write applied once \(exactlyOnceData.plainJSONString())")
            if sim.configuration.strictExactlyOnce {
                sim.fail("a re-sent write changed the final data: \(modelData.plainJSONString()), applied once: \(exactlyOnceData.plainJSONString())")
            }
        }
        for client in sim.clients {
            let i = client.index
            for id in client.saved.keys.sorted() {
                if !applied[i, default: []].contains(id) { sim.fail("c\(i)'s write \(id) never reached the server (lost)") }
                if !client.completed.contains(id) { sim.fail("c\(i)'s write \(id) was never answered") }
            }
            let pending = client.store.pendingWrites().map(\.id)
            if !pending.isEmpty || !client.core.unansweredWriteIDs.isEmpty {
                sim.fail("c\(i) has pending writes at quiescence: store \(pending), core \(client.core.unansweredWriteIDs)")
            }
            do {
                if let why = try client.store.state().checkInvariants() { sim.fail("c\(i)'s store at quiescence: \(why)") }
            } catch {
                sim.fail("c\(i)'s store state at quiescence: \(error)")
            }
            client.store.waitForEventDelivery()
            for r in client.registrations {
                let expected = r.location.query.window(of: data.child(at: r.location.path))
                do {
                    let local = try client.store.query(r.location.query, at: r.location.path)
                    if !local.complete { sim.fail("c\(i)'s view of \(r.location) is not complete at quiescence") }
                    if local.window != expected {
                        sim.fail("c\(i)'s view of \(r.location) is \(local.window.node.plainJSONString()) \(local.window.keys.map(\.string)), the server's \(expected.node.plainJSONString()) \(expected.keys.map(\.string))")
                    }
                } catch {
                    sim.fail("c\(i) query \(r.location): \(error)")
                }
                let seen = r.recorder.view
                var children: [ChildKey: Node] = [:]
                for e in expected.entries { children[e.key] = e.value }
                if seen.children != children || seen.value != expected.node {
                    let kids = seen.children.sorted { ChildKey.compare($0.key, $1.key) < 0 }.map { "\($0.key.string): \($0.value.plainJSONString())" }
                    sim.fail("c\(i)'s listener on \(r.location) saw children {\(kids.joined(separator: ", "))} and value \(seen.value?.plainJSONString() ?? "none") after \(seen.events) events; the server's \(expected.node.plainJSONString())")
                }
            }
        }
    }
}
