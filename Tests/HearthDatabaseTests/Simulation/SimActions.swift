import Hearth
import HearthModel
import HearthTesting
@_spi(HearthInternals) import HearthWire
@testable import HearthDatabase

// The workload (what apps do) and the faults (what the world does).
extension Simulation {
    /// The kinds of app operation (each with its bookkeeping in ``SimChecks``).
    enum Action: CaseIterable {
        case set, update, push, remove, listen, unlisten, get, goOffline, goOnline
        case onDisconnectSet, onDisconnectUpdate, onDisconnectRemove, onDisconnectCancel
        case keepSynced, unkeepSynced
        case transaction

        func weight(_ workload: Workload) -> Double {
            switch (self, workload) {
            case (.onDisconnectSet, .v1), (.onDisconnectUpdate, .v1), (.onDisconnectRemove, .v1),
                (.onDisconnectCancel, .v1),
                (.keepSynced, .v1), (.unkeepSynced, .v1), (.transaction, .v1), (.transaction, .v2):
                return 0
            default: return weight
            }
        }

        var weight: Double {
            switch self {
            case .set: 20
            case .update: 10
            case .push: 6
            case .remove: 5
            case .listen: 10
            case .unlisten: 5
            case .get: 4
            case .goOffline: 2
            case .goOnline: 4
            case .onDisconnectSet: 3
            case .onDisconnectUpdate: 2
            case .onDisconnectRemove: 1
            case .onDisconnectCancel: 2
            case .keepSynced: 3
            case .unkeepSynced: 2
            case .transaction: 6
            }
        }
    }

    enum Fault: CaseIterable {
        case drop, partition, heal, restartClient, restartServer, tokenOutage

        var weight: Double {
            switch self {
            case .drop: 35
            case .partition: 8
            case .heal: 10
            case .restartClient: 20
            case .restartServer: 8
            case .tokenOutage: 6
            }
        }
    }

    /// One app operation on client `i`.
    func act(_ i: Int) {
        let client = clients[i]
        let action = Action.allCases[rng.weighted(Action.allCases.map { $0.weight(configuration.workload) })]
        switch action {
        case .set:
            write(i, .set(SimWorkload.value(&rng)), at: SimWorkload.setPath(&rng, listKeys: client.listKeys))
        case .update:
            let (path, children) = SimWorkload.update(&rng)
            write(i, .update(children), at: path)
        case .push:
            let key = ChildKey(client.pushIDs.next(now: now, using: &rng))
            client.listKeys.append(key)
            write(i, .set(SimWorkload.value(&rng, allowNull: false)), at: Path(keys: ["k", "list", key]))
        case .remove:
            write(i, .set(.empty), at: SimWorkload.setPath(&rng, listKeys: client.listKeys))
        case .listen:
            listen(i, SimWorkload.location(&rng))
        case .unlisten:
            guard !client.registrations.isEmpty else { return }
            let k = rng.int(0...(client.registrations.count - 1))
            let r = client.registrations.remove(at: k)
            note("c\(i) unlisten \(r.location)")
            do { try client.store.removeListener(r.token) } catch { fail("c\(i) removeListener: \(error)") }
            apply(i, client.core.unlisten(r.location, now: now))
        case .get:
            let location = SimWorkload.location(&rng)
            let id = client.nextGet
            client.nextGet += 1
            note("c\(i) get#\(id) \(location)")
            apply(i, client.core.get(id, at: location, now: now))
        case .goOffline:
            goOffline(i)
        case .goOnline:
            goOnline(i)
        case .onDisconnectSet:
            onDisconnect(
                i, .set(SimWorkload.value(&rng, allowNull: false)),
                at: SimWorkload.setPath(&rng, listKeys: client.listKeys))
        case .onDisconnectUpdate:
            let (path, children) = SimWorkload.update(&rng)
            onDisconnect(i, .update(children), at: path)
        case .onDisconnectRemove:
            onDisconnect(i, .remove, at: SimWorkload.setPath(&rng, listKeys: client.listKeys))
        case .onDisconnectCancel:
            onDisconnect(i, .cancel, at: rng.chance(0.3) ? "k" : Path(keys: ["k", rng.pick(SimWorkload.keys)]))
        case .keepSynced:
            keepSynced(i, SimWorkload.location(&rng), true)
        case .unkeepSynced:
            guard !client.pins.isEmpty else { return }
            keepSynced(i, rng.pick(client.pins.sorted { $0.description < $1.description }), false)
        case .transaction:
            let tx: SimTransaction
            if rng.chance(0.6) {
                tx = SimTransaction(
                    storeID: 0, name: "increment", path: rng.pick(SimTransactions.counters), argument: .empty)
            } else {
                stats.appends += 1
                tx = SimTransaction(
                    storeID: 0, name: "append", path: SimTransactions.list,
                    argument: Node(.string("c\(i)-a\(stats.appends)")))
            }
            runTransaction(i, tx, retries: 0, new: true)
        }
    }

    /// The runtime's onDisconnect (`Database.saveOnDisconnect`): queued in the store (durable),
    /// then handed to the core.
    func onDisconnect(_ i: Int, _ action: OnDisconnectOperation.Action, at path: Path) {
        let client = clients[i]
        var op: OnDisconnectOperation?
        do {
            try client.store.commit { (b: inout StoreBatch) throws(StoreError) in
                op = try b.queueOnDisconnect(action, at: path)
            }
        } catch {
            fail("c\(i) could not queue an onDisconnect operation: \(error)")
            return
        }
        guard let op else { return }
        if client.ops[op.id] != nil { fail("c\(i) onDisconnect id \(op.id) reused") }
        client.ops[op.id] = op
        stats.onDisconnects += 1
        note("c\(i) o\(op.id) onDisconnect \(SimChecks.summary(op))")
        apply(i, client.core.onDisconnect(op, now: now))
    }

    /// The runtime's keepSynced (`Database.keepSynced`): a persisted pin, the query active
    /// (unless an observer still uses it when turned off), and the core's listen.
    func keepSynced(_ i: Int, _ location: QueryLocation, _ on: Bool) {
        let client = clients[i]
        guard on ? client.pins.insert(location).inserted : client.pins.remove(location) != nil else { return }
        note("c\(i) keepSynced \(location) \(on)")
        stats.keepSynced += 1
        let observed = client.registrations.contains { $0.location == location }
        do {
            try client.store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.keepSynced(location, on)
                if on { try b.setQueryActive(location) } else if !observed { try b.setQueryInactive(location) }
            }
        } catch {
            fail("c\(i) keepSynced \(location) \(on): \(error)")
            return
        }
        apply(i, on ? client.core.listen(location, now: now) : client.core.unlisten(location, now: now))
    }

    /// The token provider answers client `i`: a fresh token (registered with its expiry for
    /// the server's verifier), or a failure during an outage.
    func tokenAnswer(_ i: Int, fetch: Int64) {
        let client = clients[i]
        if now < client.providerDownUntil {
            note("c\(i) token fetch failed (provider down)")
            apply(i, client.core.tokenFetchFailed(fetch: fetch, now: now))
            return
        }
        client.tokensIssued += 1
        stats.tokens += 1
        let credential = "sim-c\(i)-\(client.tokenGeneration)-\(client.tokensIssued)"
        // Short lifetimes so that tokens expire during a run, connected or not.
        let expiresAt = now + (rng.chance(0.3) ? rng.ms(5_000...30_000) : rng.ms(30_000...300_000))
        tokens[credential] = (i, expiresAt)
        note("c\(i) token \(credential) until t=\(expiresAt - start)")
        apply(i, client.core.tokenFetched(AuthToken(token: credential, expiresAt: expiresAt), fetch: fetch, now: now))
    }

    /// The runtime's write: saved in the store (durable, `.full`), then handed to the core.
    func write(_ i: Int, _ operation: PendingWrite.Operation, at path: Path) {
        let client = clients[i]
        var id: Int64 = 0
        do {
            try client.store.commit { (b: inout StoreBatch) throws(StoreError) in
                id = try b.saveWrite(operation, at: path, writer: client.writerID)
            }
        } catch {
            fail("c\(i) could not save a write: \(error)")
            return
        }
        if id <= client.maxWriteID { fail("c\(i) write id \(id) reused (last was \(client.maxWriteID))") }
        client.maxWriteID = max(client.maxWriteID, id)
        let w = SimWrite(client: i, id: id, path: path, operation: operation)
        client.saved[id] = w
        stats.writes += 1
        note("c\(i) w\(id) \(w.summary)")
        apply(
            i,
            client.core.write(PendingWrite(id: id, path: path, operation: operation), writer: client.writerID, now: now)
        )
    }

    /// The runtime's observe: a store listener, and the core listens.
    func listen(_ i: Int, _ location: QueryLocation) {
        let client = clients[i]
        note("c\(i) listen \(location)")
        let recorder = SimRecorder()
        do {
            let token = try client.store.addListener(at: location.path, query: location.query) { recorder.record($0) }
            client.registrations.append(SimRegistration(location: location, token: token, recorder: recorder))
        } catch {
            fail("c\(i) addListener \(location): \(error)")
            return
        }
        apply(i, client.core.listen(location, now: now))
    }

    /// One fault.
    func fault() {
        let fault = Fault.allCases[
            rng.weighted(Fault.allCases.map { configuration.workload == .v1 && $0 == .tokenOutage ? 0 : $0.weight })]
        switch fault {
        case .drop:
            let up = connections.values.filter { $0.up }.map(\.id).sorted()
            guard !up.isEmpty else { return }
            let id = rng.pick(up)
            note("FAULT drop conn \(id) of c\(connections[id]!.client)")
            stats.drops += 1
            drop(id)
        case .partition:
            let i = rng.int(0...(clients.count - 1))
            guard !clients[i].partitioned else { return }
            note("FAULT partition c\(i)")
            stats.partitions += 1
            clients[i].partitioned = true
            if let id = clients[i].conn, connections[id]?.up == true { drop(id) }
        case .heal:
            guard let i = clients.firstIndex(where: \.partitioned) else { return }
            note("heal c\(i)")
            clients[i].partitioned = false
        case .restartClient:
            restartClient(rng.int(0...(clients.count - 1)))
        case .restartServer:
            restartServer()
        case .tokenOutage:
            let users = clients.indices.filter { clients[$0].usesTokens }
            guard !users.isEmpty else { return }
            let i = rng.pick(users)
            let until = now + rng.ms(5_000...180_000)
            note("FAULT token provider of c\(i) down until t=\(until - start)")
            stats.tokenOutages += 1
            clients[i].providerDownUntil = max(clients[i].providerDownUntil, until)
        }
    }

    /// Client `i`'s process dies and starts again: its connection drops (the server learns
    /// later), its memory is gone, its store is closed — or its disk cut by a power-cut mode —
    /// and reopened; the app registers its listens again and, unless it chose to be offline,
    /// goes online.
    func restartClient(_ i: Int) {
        let client = clients[i]
        let mode: SimulatedFileSystem.PowerCutMode? =
            rng.chance(0.5) ? rng.pick(SimulatedFileSystem.PowerCutMode.all) : nil
        note("FAULT restart c\(i)" + (mode.map { " with power cut \($0)" } ?? ""))
        stats.clientRestarts += 1
        if mode != nil { stats.powerCuts += 1 }
        if let id = client.conn, connections[id]?.up == true {
            connections[id]!.up = false
            network.drop(conn: id)
            network.schedule(.serverClosed(conn: id), at: now + rng.ms(0...2_000))
        }
        let locations = client.registrations.map(\.location)
        do { try client.restart(mode: mode, seed: rng.next()) } catch {
            fail("c\(i)'s store did not reopen after a restart (\(mode.map { "\($0)" } ?? "clean")): \(error)")
            return
        }
        checks.afterClientRestart(i, in: self)
        if rng.chance(0.2) { client.appOffline = true }
        // The runtime's open: keepSynced pins listen again (Database.open), then the app's
        // observers.
        let pins = client.store.pins()
        if !pins.isEmpty {
            do {
                try client.store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
                    for location in pins.sorted(by: { $0.description < $1.description }) {
                        try b.setQueryActive(location)
                    }
                }
            } catch { fail("c\(i) reactivating pins: \(error)") }
        }
        for location in pins.sorted(by: { $0.description < $1.description }) {
            apply(i, client.core.listen(location, now: now))
        }
        for l in locations { listen(i, l) }
        restoreTransactions(i)
        if !client.appOffline { goOnline(i) }
    }

    /// The server process dies and starts again over what its store made durable: every
    /// connection drops, unreleased outputs are lost.
    func restartServer() {
        let mode = rng.pick(SimulatedFileSystem.PowerCutMode.all)
        note("FAULT restart server with power cut \(mode)")
        stats.serverRestarts += 1
        stats.powerCuts += 1
        stats.lostUnreleased += server.outbox.reduce(0) { $0 + $1.applied.count }
        for id in connections.keys.sorted() {
            guard var c = connections[id], c.up || c.serverOpen else { continue }
            c.up = false
            c.serverOpen = false
            connections[id] = c
            network.drop(conn: id)
            if clients[c.client].conn == id { network.schedule(.clientClosed(conn: id), at: now + rng.ms(0...500)) }
        }
        network.dropReleases()
        for id in connections.keys { connections[id]!.armed = [] }  // the process died: nothing runs
        do { try server.restart(mode: mode, seed: rng.next()) } catch {
            fail("the server's store did not reopen (\(mode)): \(error)")
            return
        }
        checks.afterServerRestart(in: self)
    }
}
