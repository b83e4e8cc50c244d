@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthServer
import HearthModel
@_spi(HearthInternals) import HearthWire
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
/// **onDisconnect.** The simulator follows, per connection, the operations the server core
/// accepted on it (a cancel it accepted removes those at and below its path). When the server
/// loses the connection — the client closed it (goOffline, a refused token), the network
/// dropped it, the server timed it out — exactly those run, once, in order: they are server
/// writes the model applies when they are durable. A server restart runs none (the process
/// died). A client does not know whether an operation whose ack it never got was accepted, so
/// it sends it again on its next connection (Hearth keeps them in the store): it may then run
/// once per connection that accepted it, which the model follows.
///
/// **Tokens.** No write (`p`, `m`) and no onDisconnect request (`o`, `om`, `oc`) goes out on a
/// connection whose last `auth` carried a token that has expired by the virtual clock (the
/// provider's record, not the core's); writes held meanwhile go out in order once a new token
/// comes (the write-order check), and at quiescence none is left.
///
/// **Transactions** (``SimTransactions``): each ends exactly once — committed without an error,
/// or aborted `disconnect` or `maxretry`. `disconnect` means the connection dropped after its
/// compare-and-set was sent (or the app restarted with it in flight): as in Firebase, it may or
/// may not have been applied. So at quiescence a counter holds at least its committed
/// increments and at most those plus the ones that ended `disconnect`; the list holds each
/// committed append exactly once, a `disconnect` one at most once, nothing else. A
/// transaction's write is never re-sent as a plain write (none is pending after a restart), so
/// the at-least-once re-send above never duplicates one.
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
    /// Every transaction started, by client and store id (`c0#3`).
    var transactions: [String: SimTransactionRecord] = [:]

    static func isWrite(_ message: String) -> Bool {
        guard case let .request(_, request)? = try? ClientMessage.decode(message) else { return false }
        switch request {
        case .put, .merge: return true
        default: return false
        }
    }

    static func isHeldWhilePaused(_ request: ClientRequest) -> Bool {
        switch request {
        case .put, .merge, .onDisconnectPut, .onDisconnectMerge, .onDisconnectCancel: true
        default: false
        }
    }

    static func summary(_ op: OnDisconnectOperation) -> String {
        switch op.action {
        case .set(let node): "set /\(op.path.wireString) = \(node.plainJSONString())"
        case .update(let children):
            "update /\(op.path.wireString) {"
                + children.map { "\($0.path.wireString): \($0.node.plainJSONString())" }.joined(separator: ", ") + "}"
        case .remove: "remove /\(op.path.wireString)"
        case .cancel: "cancel /\(op.path.wireString)"
        }
    }

    /// Client `i`'s core sends `message` on connection `conn`: the token check.
    func sending(_ message: String, client i: Int, conn: UInt64, in sim: Simulation) {
        guard case let .request(_, request)? = try? ClientMessage.decode(message) else { return }
        if case let .auth(credential, _, _) = request {
            sim.connections[conn]?.credential = credential
            return
        }
        guard sim.clients[i].usesTokens, SimChecks.isHeldWhilePaused(request) else { return }
        guard let credential = sim.connections[conn]?.credential else {
            sim.fail("c\(i) sent \(message) on conn \(conn) before any auth")
            return
        }
        if let t = sim.tokens[credential], t.expiresAt <= sim.now {
            sim.fail(
                "c\(i) sent \(message) on conn \(conn) while its token \(credential) had expired (at t=\(t.expiresAt - sim.start))"
            )
        }
    }

    /// The server released an output that made these changes (now durable).
    func durablyApplied(_ changes: [SimApplied], in sim: Simulation) {
        for change in changes {
            guard case let .write(c, id) = change else {
                if case let .deduplicated(c, id) = change { deduplicated([(c, id)], in: sim) }
                if case let .onDisconnect(_, _, op) = change {
                    sim.stats.onDisconnectRuns += 1
                    modelData = SimApplied.applied(op, to: modelData)
                    exactlyOnceData = SimApplied.applied(op, to: exactlyOnceData)
                }
                continue
            }
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
        let durable = (try? sim.server.durableData()) ?? .empty
        if durable != modelData {
            sim.fail("the server's store holds \(durable.plainJSONString()), the model \(modelData.plainJSONString())")
        }
        if sim.server.outbox.isEmpty, sim.server.core.data != modelData {
            sim.fail(
                "the server core holds \(sim.server.core.data.plainJSONString()) with nothing unreleased, the model \(modelData.plainJSONString())"
            )
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
        case let .writeCompleted(id, error) where client.transactions.contains(id):
            if error == nil { acked(id, client: i, in: sim) } else { client.completed.insert(id) }
            sim.transactionAnswered(i, writeID: id, error: error, interrupted: false)
        case let .conditionalWriteInterrupted(id):
            guard client.transactions.contains(id) else {
                sim.fail("c\(i) got \(event) for a write that is no transaction's")
                return
            }
            client.completed.insert(id)
            sim.transactionAnswered(i, writeID: id, error: nil, interrupted: true)
        case let .writeCompleted(id, error):
            writeResult(WriteResult(id: WriteID(rawValue: id), error: error), client: i, in: sim)
            if let record = client.writeOutcomeRecords.removeValue(forKey: id) { sim.acknowledgeOutcome(i, record) }
        case let .getCompleted(id, .success(node)):
            guard let expected = client.expectedGets[id] else {
                sim.fail("c\(i)'s get \(id) completed without the server having answered it")
                return
            }
            if node != expected {
                sim.fail(
                    "c\(i)'s get \(id) returned \(node.plainJSONString()), the server held \(expected.plainJSONString())"
                )
            }
        case .getCompleted(_, .failure(.offline)):
            break
        case let .getCompleted(id, .failure(error)):
            sim.fail("c\(i)'s get \(id) failed: \(error)")
        case let .listenRevoked(location, error):
            sim.fail("c\(i)'s listen \(location) was revoked: \(error)")
        case let .protocolWarning(why):
            sim.fail("c\(i) protocol warning: \(why)")
        case .notice:
            break
        case let .hostChanged(host):
            sim.fail("c\(i) was sent to \(host ?? "its configured host"), by a server that redirects no one")
        case .writesPaused(let paused):
            if paused { sim.stats.writesPaused += 1 }
            if paused, !client.usesTokens { sim.fail("c\(i) paused its writes without tokens") }
        case .connected, .serverTimeOffset, .authenticated:
            break
        case let .onDisconnectCompleted(id, nil):
            guard client.ops[id] != nil else {
                sim.fail("c\(i) got an ack for onDisconnect \(id), which it never queued")
                return
            }
            sim.stats.onDisconnectAcks += 1
            client.opsAcknowledged.insert(id)
        case let .onDisconnectCompleted(id, error?):
            sim.fail("c\(i)'s onDisconnect \(id) was refused: \(error)")
        }
    }

    /// Client `i` heard that the server applied its write `id`.
    /// A plain write's result reached the app — this run's answer, or one an earlier run kept
    /// in the store: once (the app's handler and the record's removal are one step here, so
    /// no crash falls between them), and never a refusal (the workload makes none).
    func writeResult(_ result: WriteResult, client i: Int, in sim: Simulation) {
        let id = result.id.rawValue
        if sim.clients[i].completed.contains(id) {
            sim.fail("c\(i)'s write \(id) was reported twice")
        }
        if let error = result.error {
            sim.fail("c\(i)'s write \(id) was refused: \(error)")
        } else {
            acked(id, client: i, in: sim)
        }
    }

    func acked(_ id: Int64, client i: Int, in sim: Simulation) {
        let client = sim.clients[i]
        sim.stats.acks += 1
        guard client.saved[id] != nil else {
            sim.fail("c\(i) got an ack for write \(id), which it never saved")
            return
        }
        if !applied[i, default: []].contains(id) {
            sim.fail("c\(i) got the ack of write \(id) before the server made it durable (release rule)")
        }
        client.completed.insert(id)
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
        let all = client.store.pendingWrites().map(\.id)
        let pending = all.filter { !client.transactionWrites.contains($0) }
        if pending != all {
            sim.fail(
                "c\(i)'s store still holds transaction writes \(all.filter { client.transactionWrites.contains($0) }) after a restart (they must be reverted: only ever sent as compare-and-set)"
            )
        }
        let expected = client.saved.keys.filter {
            !client.completed.contains($0) && !client.transactionWrites.contains($0)
        }.sorted()
        if pending != expected {
            sim.fail("c\(i)'s store holds pending writes \(pending) after a restart, expected \(expected)")
        }
        if client.store.pins() != client.pins {
            sim.fail("c\(i)'s store holds pins \(client.store.pins()) after a restart, expected \(client.pins)")
        }
    }

    /// After the server restarted: it holds exactly what it made durable.
    func afterServerRestart(in sim: Simulation) {
        if sim.server.core.data != modelData {
            sim.fail(
                "the restarted server holds \(sim.server.core.data.plainJSONString()), the model \(modelData.plainJSONString())"
            )
        }
    }

    /// At quiescence.
    func final(_ sim: Simulation) {
        let data = sim.server.core.data
        if data != modelData {
            sim.fail(
                "at quiescence the server holds \(data.plainJSONString()), the model \(modelData.plainJSONString())")
        }
        if exactlyOnceData != modelData {
            sim.stats.finalDiffersFromExactlyOnce = true
            sim.note(
                "AT-LEAST-ONCE: final data \(modelData.plainJSONString()) differs from each write applied once \(exactlyOnceData.plainJSONString())"
            )
            if sim.configuration.strictExactlyOnce {
                sim.fail(
                    "a re-sent write changed the final data: \(modelData.plainJSONString()), applied once: \(exactlyOnceData.plainJSONString())"
                )
            }
        }
        finalTransactions(sim, data: data)
        for client in sim.clients {
            let i = client.index
            for id in client.saved.keys.sorted() where !client.transactionWrites.contains(id) {
                if !applied[i, default: []].contains(id) {
                    sim.fail("c\(i)'s write \(id) never reached the server (lost)")
                }
                if !client.completed.contains(id) { sim.fail("c\(i)'s write \(id) was never answered") }
            }
            let pending = client.store.pendingWrites().map(\.id)
            if !pending.isEmpty || !client.core.unansweredWriteIDs.isEmpty {
                sim.fail(
                    "c\(i) has pending writes at quiescence: store \(pending), core \(client.core.unansweredWriteIDs)")
            }
            do {
                if let why = try client.store.state().checkInvariants() {
                    sim.fail("c\(i)'s store at quiescence: \(why)")
                }
            } catch {
                sim.fail("c\(i)'s store state at quiescence: \(error)")
            }
            for id in client.ops.keys.sorted() where !client.opsAcknowledged.contains(id) {
                sim.fail("c\(i)'s onDisconnect \(id) was never acknowledged")
            }
            if client.core.writesPaused(now: sim.now) { sim.fail("c\(i)'s writes are paused at quiescence") }
            for location in client.pins.sorted(by: { $0.description < $1.description }) {
                let expected = location.query.window(of: data.child(at: location.path))
                do {
                    let local = try client.store.query(location.query, at: location.path)
                    if !local.complete { sim.fail("c\(i)'s kept query \(location) is not complete at quiescence") }
                    if local.window != expected {
                        sim.fail(
                            "c\(i)'s kept query \(location) is \(local.window.node.plainJSONString()), the server's \(expected.node.plainJSONString())"
                        )
                    }
                } catch {
                    sim.fail("c\(i) query \(location): \(error)")
                }
            }
            client.store.waitForEventDelivery()
            for r in client.registrations {
                let expected = r.location.query.window(of: data.child(at: r.location.path))
                do {
                    let local = try client.store.query(r.location.query, at: r.location.path)
                    if !local.complete { sim.fail("c\(i)'s view of \(r.location) is not complete at quiescence") }
                    if local.window != expected {
                        sim.fail(
                            "c\(i)'s view of \(r.location) is \(local.window.node.plainJSONString()) \(local.window.keys.map(\.string)), the server's \(expected.node.plainJSONString()) \(expected.keys.map(\.string))"
                        )
                    }
                } catch {
                    sim.fail("c\(i) query \(r.location): \(error)")
                }
                let seen = r.recorder.view
                var children: [ChildKey: Node] = [:]
                for e in expected.entries { children[e.key] = e.value }
                if seen.children != children || seen.value != expected.node {
                    let kids = seen.children.sorted { ChildKey.compare($0.key, $1.key) < 0 }.map {
                        "\($0.key.string): \($0.value.plainJSONString())"
                    }
                    sim.fail(
                        "c\(i)'s listener on \(r.location) saw children {\(kids.joined(separator: ", "))} and value \(seen.value?.plainJSONString() ?? "none") after \(seen.events) events; the server's \(expected.node.plainJSONString())"
                    )
                }
            }
        }
    }
}
