@_spi(HearthInternals) import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
import HearthTesting
@_spi(HearthInternals) import HearthWire
@testable import HearthDatabase

/// A deterministic simulation of several sync clients (``ClientCore`` over a store on a
/// simulated disk) and the server (``ServerCore`` over its store on another),
/// wired by a simulated network on a virtual clock. One seed fixes everything: the workload,
/// every delay, every fault.
///
/// The network is TCP-like: per connection, messages arrive in order each way, with random
/// delays; across connections anything interleaves. Faults: a connection dropped at any
/// message (what is in flight is lost), a client partitioned (its attempts fail), a server
/// restart (unreleased outputs lost; a new core over its store, after a power cut), a client
/// restart (memory lost; store closed, or cut by a power-cut mode, and reopened), and time
/// jumps that run backoff, keepalives and idle timeouts.
///
/// The invariants are checked as the run goes (``SimChecks``) and at quiescence: the network
/// healed, every client online, the clock advanced until nothing is left to do.
///
/// Tokens: each client supplies tokens (from a simulated provider on the virtual clock, with
/// lifetimes short enough to expire during a run) or not, by the seed; the server checks them
/// with a simulated verifier that knows their expiry. A provider outage is a fault.
///
/// Transactions: named functions (increment, list append under `/t`) run by the runtime's
/// algorithm, whose decisions are the sans-I/O ``TransactionQueue`` the runtime uses too.
///
/// New operation kinds join as cases of ``Action`` with their own bookkeeping and checks (and
/// a new ``Workload`` generation, so that kept seeds replay with the generator that found them).
final class Simulation {
    struct Configuration {
        var seed: UInt64
        var clients = 3
        var steps = 200
        var faults = true
        /// Fail when a write was applied twice or a re-sent write changed the final data. On by
        /// default: Hearth's server and client deduplicate stamped writes (``WriteStamp``);
        /// Firebase's plain protocol is at-least-once there (see ``SimChecks``).
        var strictExactlyOnce = true
        /// The server offers exactly-once writes (`HEARTH_SIM_PLAIN_V5=1` turns it off, with
        /// strictness, to measure plain at-least-once delivery).
        var exactlyOnceServer = true
        /// Put every protocol message into the trace (`HEARTH_SIM_WIRE=1`).
        var traceWire = false
        /// Chance that delivering a message drops its connection instead.
        var dropPerMessage = 0.01
        /// The workload generator. A seed replays only with the generator it was found with.
        var workload = Workload.current
    }

    /// The generations of the workload generator.
    enum Workload: Sendable {
        /// set, update, push, remove, listen, unlisten, get, goOffline, goOnline; no tokens
        /// (the seeds kept before onDisconnect, keepSynced and tokens joined replay with it).
        case v1
        /// v1 with onDisconnect set/update/remove/cancel, keepSynced on/off, and tokens
        /// (each client supplies them or not, by the seed) with provider outages as a fault.
        case v2
        /// v2 with named transactions (increments, list appends under `/t`).
        case v3

        static let current = Workload.v3
    }

    /// What a run did.
    struct Stats: CustomStringConvertible {
        var steps = 0
        var actions = 0
        var faults = 0
        var drops = 0
        var partitions = 0
        var serverRestarts = 0
        var clientRestarts = 0
        var powerCuts = 0
        var writes = 0
        var acks = 0
        var delivered = 0
        var duplicates = 0
        var duplicatesChangingData = 0
        /// Re-sent writes the server recognised and answered without applying them again.
        var deduplicated = 0
        var finalDiffersFromExactlyOnce = false
        var lostUnreleased = 0
        var refusedCommits = 0
        var onDisconnects = 0
        var onDisconnectAcks = 0
        var onDisconnectRuns = 0
        var keepSynced = 0
        var tokens = 0
        var tokenOutages = 0
        var writesPaused = 0
        var transactions = 0
        var transactionAttempts = 0
        var transactionsCommitted = 0
        var transactionsDisconnected = 0
        var transactionsMaxRetry = 0
        var appends = 0
        var virtualMs: Int64 = 0
        var quiescenceMs: Int64 = 0

        var description: String {
            "steps \(steps) actions \(actions) faults \(faults) (drops \(drops), partitions \(partitions), server restarts \(serverRestarts), client restarts \(clientRestarts), power cuts \(powerCuts)) writes \(writes) acks \(acks) onDisconnect \(onDisconnects) (acked \(onDisconnectAcks), ran \(onDisconnectRuns)) keepSynced \(keepSynced) tokens \(tokens) (outages \(tokenOutages), pauses \(writesPaused)) transactions \(transactions) (attempts \(transactionAttempts), committed \(transactionsCommitted), disconnect \(transactionsDisconnected), maxretry \(transactionsMaxRetry)) messages \(delivered) duplicates \(duplicates) (changing data \(duplicatesChangingData)) deduplicated \(deduplicated) virtual \(virtualMs / 1000)s"
        }
    }

    let configuration: Configuration
    var rng: SimRandom
    let clock: HarnessClock
    let start: Int64
    var now: Int64 {
        get { clock() }
        set { clock.set(newValue) }
    }
    var server: SimServer
    var clients: [SimClient] = []
    var network = SimNetwork()
    var connections: [UInt64: SimConnection] = [:]
    var nextConnection: UInt64 = 1
    let checks = SimChecks()
    var stats = Stats()
    var trace: [String] = []
    /// Every token the simulated provider issued: whose, and when it expires (the server's
    /// verifier and the checks read it).
    var tokens: [String: (client: Int, expiresAt: Int64)] = [:]
    var violations: [String] = []

    init(_ configuration: Configuration) throws {
        self.configuration = configuration
        rng = SimRandom(seed: configuration.seed)
        let clock = HarnessClock()
        self.clock = clock
        start = clock()
        server = try SimServer(
            seed: configuration.seed &+ 1, clock: { clock() }, exactlyOnceWrites: configuration.exactlyOnceServer)
        for i in 0..<configuration.clients {
            let usesTokens = configuration.workload != .v1 && rng.chance(0.5)
            clients.append(
                try SimClient(
                    index: i, seed: configuration.seed &+ 100 &+ UInt64(i), usesTokens: usesTokens, clock: { clock() }))
        }
        checks.clients = configuration.clients
    }

    // MARK: - Running

    /// Runs the steps, then quiescence and the final checks. Returns the first violation.
    func run() -> String? {
        for i in clients.indices where rng.chance(0.8) { goOnline(i) }
        for step in 1...max(1, configuration.steps) {
            stats.steps = step
            self.step(step)
            if let v = violations.first { return v }
        }
        quiesce()
        stats.virtualMs = now - start
        if let v = violations.first { return v }
        checks.final(self)
        return violations.first
    }

    func note(_ line: String) { trace.append("t=\(now - start) \(line)") }

    func fail(_ why: String) {
        if violations.isEmpty { note("VIOLATION: \(why)") }
        violations.append(why)
    }

    private func step(_ n: Int) {
        let kind = rng.weighted([40, 40, 10, 2, configuration.faults ? 8 : 0])
        switch kind {
        case 0:
            // The next thing that happens (a message, a timer).
            if let t = nextTime() { advance(to: t) } else { advance(to: now + rng.ms(1...1_000)) }
        case 1:
            stats.actions += 1
            act(rng.int(0...(clients.count - 1)))
        case 2:
            advance(to: now + rng.ms(1...5_000))
        case 3:
            let ms = rng.ms(10_000...130_000)
            note("time +\(ms)ms")
            advance(to: now + ms)
        default:
            stats.faults += 1
            fault()
        }
    }

    /// The heal, everyone online, time until nothing is left to do.
    func quiesce() {
        note("quiesce: heal, everyone online")
        for c in clients {
            c.partitioned = false
            c.providerDownUntil = 0
        }
        for i in clients.indices where clients[i].appOffline { goOnline(i) }
        let begin = now
        for _ in 0..<2_000 {
            if isQuiet() { break }
            advance(to: now + 1_000)
            if !violations.isEmpty { return }
        }
        stats.quiescenceMs = now - begin
        if !isQuiet() {
            let states = clients.map {
                "c\($0.index): phase \($0.core.phase) unanswered \($0.core.unansweredWriteIDs) requests \($0.core.requests.count)"
            }
            fail(
                "no quiescence after \(stats.quiescenceMs / 1000)s of virtual time: network \(network.count) events, outbox \(server.outbox.count); \(states.joined(separator: "; "))"
            )
        }
        for c in clients { c.store.waitForEventDelivery() }
    }

    func isQuiet() -> Bool {
        network.isEmpty && server.outbox.isEmpty
            && clients.allSatisfy {
                $0.core.isConnected && $0.core.requests.isEmpty && $0.core.unansweredWriteIDs.isEmpty
                    && $0.core.gets.isEmpty
                    && $0.core.onDisconnects.values.allSatisfy(\.acknowledged)
            }
    }

    // MARK: - Time

    /// The earliest time something is due: a network event, a client timer, a server tick.
    func nextTime() -> Int64? {
        var t = network.nextTime
        for c in clients { if let d = c.core.nextDeadline { t = min(t ?? d, d) } }
        return t
    }

    /// Runs everything due up to `time`, in time order, then sets the clock to it.
    func advance(to time: Int64) {
        var guardCount = 0
        while violations.isEmpty {
            guardCount += 1
            if guardCount > 100_000 {
                fail("livelock: more than 100000 events before t=\(time - start)")
                return
            }
            let due = [network.nextTime, server.nextTick, clients.compactMap { $0.core.nextDeadline }.min()].compactMap
            { $0 }.min()
            guard let due, due <= time else { break }
            now = max(now, due)
            if server.nextTick <= now {
                server.nextTick = now + 1_000
                let open = Set(connections.values.filter(\.serverOpen).map(\.id))
                let out = server.core.tick(now: now)
                // Idle connections it closed ran their onDisconnect operations.
                let lost = out.closes.map(\.rawValue).filter { open.contains($0) }
                serverOutput(out, applied: attribute(out, before: server.core.data, lost: lost))
                continue
            }
            if let i = clients.firstIndex(where: { ($0.core.nextDeadline ?? .max) <= now }) {
                apply(i, clients[i].core.tick(now: now))
                continue
            }
            if let (_, event) = network.pop(dueBy: now) { process(event) }
        }
        now = max(now, time)
    }

    func latency() -> Int64 { rng.ms(1...40) }

    // MARK: - Network events

    func process(_ event: SimEvent) {
        switch event {
        case let .toServer(id, text):
            guard let c = connections[id], c.serverOpen, c.incarnation == server.incarnation else { return }
            if configuration.faults && rng.chance(configuration.dropPerMessage) {
                note("drop conn \(id) of c\(c.client) at a message to the server")
                stats.drops += 1
                drop(id)
                return
            }
            deliverToServer(c, text)
        case let .toClient(id, text):
            guard let c = connections[id], clients[c.client].conn == id else { return }
            if configuration.faults && rng.chance(configuration.dropPerMessage) {
                note("drop conn \(id) of c\(c.client) at a message to the client")
                stats.drops += 1
                drop(id)
                return
            }
            stats.delivered += 1
            if configuration.traceWire { note("  → c\(c.client) \(text)") }
            apply(c.client, clients[c.client].core.received(text, on: c.link, now: now))
        case let .accept(id):
            guard var c = connections[id], c.up else { return }
            c.incarnation = server.incarnation
            c.serverOpen = true
            connections[id] = c
            serverOutput(server.core.connect(ConnectionID(id), now: now), applied: [])
        case let .opened(id):
            guard let c = connections[id], clients[c.client].conn == id else { return }
            apply(c.client, clients[c.client].core.connectionOpened(c.link, now: now))
        case let .clientClosed(id):
            guard let c = connections[id], clients[c.client].conn == id else { return }
            clients[c.client].conn = nil
            apply(c.client, clients[c.client].core.connectionClosed(c.link, now: now))
        case let .serverClosed(id):
            guard var c = connections[id], c.serverOpen, c.incarnation == server.incarnation else { return }
            c.serverOpen = false
            connections[id] = c
            let out = server.core.disconnect(ConnectionID(id), now: now)
            serverOutput(out, applied: attribute(out, before: server.core.data, lost: [id]))
        case let .release(incarnation):
            guard incarnation == server.incarnation, !server.outbox.isEmpty else { return }
            release(server.outbox.removeFirst())
        case let .tokenAnswer(i, generation, fetch):
            guard generation == clients[i].tokenGeneration else { return }
            tokenAnswer(i, fetch: fetch)
        case let .tokenCheck(incarnation, ticket, credential):
            guard incarnation == server.incarnation else { return }
            let result: TokenCheck
            if let t = tokens[credential] {
                result =
                    t.expiresAt <= now
                    ? .expired
                    : .valid(.user(Principal.User(uid: "c\(t.client)", claims: .object([]), expiresAt: t.expiresAt)))
            } else {
                result = .invalid("not a token the simulated provider issued")
                fail("the server checked a credential no provider issued: \(credential)")
            }
            let before = server.core.data
            let out = server.core.tokenChecked(ticket, result, now: now)
            serverOutput(out, applied: attribute(out, before: before, lost: []))
        }
    }

    /// A client message reaches the server core (which may hold it while the connection's
    /// token is checked).
    func deliverToServer(_ c: SimConnection, _ text: String) {
        stats.delivered += 1
        if configuration.traceWire { note("  c\(c.client) → \(text)") }
        let before = server.core.data
        var out = ServerOutput()
        let sc = ConnectionID(c.id)
        for frame in FrameSplitter.frames(for: text) { out.append(server.core.receive(sc, frame: frame, now: now)) }
        if !out.closes.isEmpty { fail("the server closed \(out.closes) on receiving c\(c.client)'s \(text)") }
        serverOutput(out, applied: attribute(out, before: before, lost: []))
    }

    /// What a server output did, from its answers in order (the server core answers each
    /// request as it handles it): the client writes it applied (`ok`), what each get saw (the
    /// data before the output with the writes answered before it applied), the onDisconnect
    /// operations it accepted or cancelled on their connection; then the onDisconnect
    /// operations of the connections in `lost`, which the output ran (checked against its
    /// durable writes: each exactly once).
    func attribute(_ out: ServerOutput, before: Node, lost: [UInt64]) -> [SimApplied] {
        var applied: [SimApplied] = []
        var data = before
        var clientWrites = 0
        for (to, reply) in out.renderedMessages() {
            guard var c = connections[to.rawValue],
                case let .response(n, status, body)? = try? ServerMessage.decode(reply),
                let sent = c.requests[n]
            else { continue }
            let client = clients[c.client]
            switch sent {
            case .write(let id):
                if status == "ok", body?["seen"] == .bool(true) {
                    // Answered without applying it again: a re-send the server recognised
                    // (exactly-once writes).
                    applied.append(.deduplicated(client: c.client, id: id))
                } else if status == "ok" {
                    applied.append(.write(client: c.client, id: id))
                    clientWrites += 1
                    if let w = client.saved[id] { data = w.applied(to: data) }
                } else if !(status == "datastale" && client.transactionWrites.contains(id)) {
                    fail("the server refused c\(c.client)'s write \(id): \(status) \(body.map { "\($0)" } ?? "")")
                }
            case let .get(id, location):
                guard status == "ok" else { continue }
                let node = data.child(at: location.path)
                let view = location.query.loadsAllData ? node : location.query.window(of: node).node
                client.expectedGets[id] = (try? Node(json: view.exportJSON(), at: location.path)) ?? view
            case .onDisconnect(let id):
                guard status == "ok", let op = client.ops[id] else {
                    fail("the server refused c\(c.client)'s onDisconnect \(id): \(status)")
                    continue
                }
                if case .cancel = op.action {
                    c.armed.removeAll { op.path.contains($0.path) }
                } else {
                    c.armed.append(op)
                }
                connections[to.rawValue] = c
            }
        }
        var expectedPaths: [Path] = []
        for id in lost {
            guard var c = connections[id] else { continue }
            for op in c.armed {
                applied.append(.onDisconnect(client: c.client, conn: id, op))
                expectedPaths.append(op.path)
            }
            if !c.armed.isEmpty {
                note(
                    "server lost conn \(id) of c\(c.client): runs onDisconnect \(c.armed.map { "o\($0.id)" }.joined(separator: ", "))"
                )
            }
            c.armed = []
            connections[id] = c
        }
        // Data writes only (a write's writer watermark rides in the same output).
        let ran = out.writes.compactMap { w -> Path? in
            switch w {
            case .set(let p, _), .merge(let p, _): p
            case .writerWatermark, .writerWatermarksRemoved: nil
            }
        }.dropFirst(clientWrites).map { $0 }
        if ran != expectedPaths {
            fail(
                "the server's output made writes at \(ran.map { "/\($0.wireString)" }) beyond its answered client writes; the onDisconnect operations of the connections it lost (\(lost)) are at \(expectedPaths.map { "/\($0.wireString)" })"
            )
        }
        return applied
    }

    /// A server output: the core's connection closes take effect now; the rest waits for its
    /// writes to be durable (released in order).
    func serverOutput(_ out: ServerOutput, applied: [SimApplied]) {
        guard !out.isEmpty else { return }
        for sc in out.closes { connections[sc.rawValue]?.serverOpen = false }
        for check in out.tokenChecks {
            network.schedule(
                .tokenCheck(incarnation: server.incarnation, ticket: check.ticket, credential: check.credential),
                at: now + rng.ms(0...30))
        }
        server.outbox.append(SimRelease(output: out, data: server.core.data, applied: applied))
        server.lastRelease = max(now + rng.ms(0...3), server.lastRelease)
        network.schedule(.release(incarnation: server.incarnation), at: server.lastRelease)
    }

    /// The release rule: the writes are made durable, then the messages go out and the
    /// connections close.
    func release(_ r: SimRelease) {
        do { try server.commit(r) } catch {
            fail("the server's store refused a commit: \(error)")
            return
        }
        checks.durablyApplied(r.applied, in: self)
        for (sc, text) in r.output.renderedMessages() {
            guard var c = connections[sc.rawValue], c.up else { continue }
            c.lastToClient = max(now + latency(), c.lastToClient)
            connections[sc.rawValue] = c
            network.schedule(.toClient(conn: c.id, text: text), at: c.lastToClient)
        }
        for sc in r.output.closes {
            guard var c = connections[sc.rawValue], c.up else { continue }
            // The server closes after its messages: they still arrive; the client's in-flight
            // messages are lost.
            c.up = false
            connections[sc.rawValue] = c
            network.drop(conn: c.id) { if case .toServer = $0 { true } else { false } }
            network.schedule(.clientClosed(conn: c.id), at: max(now + latency(), c.lastToClient) + 1)
        }
    }

    // MARK: - Clients

    /// Does what a client output says, as the runtime does: close, open, the commits (one
    /// store commit, durable when it holds an ack, keeping the outcomes of the plain writes it
    /// ends), the messages, the events.
    func apply(_ i: Int, _ out: ClientOutput) {
        let client = clients[i]
        for broken in client.core.invariantViolations() { fail("c\(i)'s core: \(broken)") }
        if let link = out.close, let id = client.conn, connections[id]?.link == link { clientClose(i, id) }
        if let link = out.open {
            if let id = client.conn { clientClose(i, id) }
            open(i, link)
        }
        if let fetch = out.fetchToken {
            if client.usesTokens {
                network.schedule(
                    .tokenAnswer(client: i, generation: client.tokenGeneration, fetch: fetch.number),
                    at: now + rng.ms(1...300))
            } else {
                fail("c\(i) asked for a token without a token provider")
            }
        }
        if !out.commits.isEmpty {
            var refused: [String] = []
            var answers: [Int64: DatabaseError?] = [:]
            for case let .writeCompleted(id, error) in out.events where !client.transactions.contains(id) {
                answers[id] = .some(error)
            }
            do {
                let (kept, failed) = try WriteAcknowledger.commit(out.commits, keeping: answers, to: client.store)
                refused = failed.map { "\($0.commit): \($0.error)" }
                client.writeOutcomeRecords.merge(kept) { $1 }
            } catch {
                fail("c\(i)'s store failed a commit: \(error)")
            }
            if !refused.isEmpty {
                stats.refusedCommits += refused.count
                note("c\(i) store refused: \(refused.joined(separator: "; "))")
            }
        }
        if !out.messages.isEmpty {
            if client.appOffline, out.messages.contains(where: SimChecks.isWrite) {
                fail("c\(i) sent a write while offline by request")
            }
            if let id = client.conn, let link = client.core.currentConnection, connections[id]?.link == link {
                for m in out.messages {
                    checks.sending(m, client: i, conn: id, in: self)
                    send(i, id, m)
                }
            } else {
                fail("c\(i)'s core sent \(out.messages.count) messages with no connection of its own")
            }
        }
        for event in out.events { checks.event(event, client: i, in: self) }
    }

    func send(_ i: Int, _ id: UInt64, _ text: String) {
        guard var c = connections[id] else { return }
        if case let .request(r, _)? = try? ClientMessage.decode(text), let kind = clients[i].core.requests[r] {
            switch kind {
            case .write(let w): c.requests[r] = .write(w)
            case .get(let g): if let p = clients[i].core.gets[g] { c.requests[r] = .get(g, p.location) }
            case .onDisconnect(let o): c.requests[r] = .onDisconnect(o)
            default: break
            }
        }
        if c.up {
            c.lastToServer = max(now + latency(), c.lastToServer)
            network.schedule(.toServer(conn: id, text: text), at: c.lastToServer)
        }
        connections[id] = c
    }

    /// The client's transport opens a connection: it fails when the client is partitioned.
    func open(_ i: Int, _ link: ConnectionID) {
        let id = nextConnection
        nextConnection += 1
        connections[id] = SimConnection(id: id, client: i, link: link)
        clients[i].conn = id
        if clients[i].partitioned {
            connections[id]!.up = false
            network.schedule(.clientClosed(conn: id), at: now + rng.ms(10...3_000))
            return
        }
        let t = now + latency()
        network.schedule(.accept(conn: id), at: t)
        network.schedule(.opened(conn: id), at: t + latency())
    }

    /// The client closes its connection: what it sent still arrives, then the server learns;
    /// what the server sends is not read.
    func clientClose(_ i: Int, _ id: UInt64) {
        clients[i].conn = nil
        guard var c = connections[id], c.up else { return }
        c.up = false
        connections[id] = c
        network.drop(conn: id) { if case .toServer = $0 { false } else { true } }
        network.schedule(.serverClosed(conn: id), at: max(now + latency(), c.lastToServer) + 1)
    }

    /// The network drops a connection: everything in flight is lost; each side learns after
    /// its own delay.
    func drop(_ id: UInt64) {
        guard var c = connections[id] else { return }
        c.up = false
        connections[id] = c
        network.drop(conn: id)
        network.schedule(.serverClosed(conn: id), at: now + rng.ms(0...500))
        if clients[c.client].conn == id { network.schedule(.clientClosed(conn: id), at: now + rng.ms(0...500)) }
    }

    func goOnline(_ i: Int) {
        note("c\(i) goOnline")
        clients[i].appOffline = false
        apply(i, clients[i].core.goOnline(now: now))
    }

    func goOffline(_ i: Int) {
        note("c\(i) goOffline")
        clients[i].appOffline = true
        apply(i, clients[i].core.goOffline(now: now))
    }
}
