import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import Synchronization
import Testing
@testable import HearthDatabase

/// A temporary directory, removed when released.
final class TempDir: Sendable {
    let path: String
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-db-test-\(UUID().uuidString)").path
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A clock the harness moves and the stores read.
final class HarnessClock: Sendable {
    private let ms = Mutex<Int64>(1_700_000_000_000)
    func callAsFunction() -> Int64 { ms.withLock { $0 } }
    func set(_ value: Int64) { ms.withLock { $0 = value } }
}

/// Client cores, each on its own store, wired to a server core by an in-memory network with
/// no sockets and no threads: a FIFO of messages that the test delivers, drops or reorders
/// around connection events. Every client output is applied as the runtime applies it
/// (commits, then messages, then events). Deterministic for a seed.
final class SyncHarness {
    struct Client {
        var core: ClientCore
        let store: Store
        let dir: String
        var link: ConnectionID?
        var serverConnection: ConnectionID?
        var events: [ClientEvent] = []
        var opened = 0
        var tokenRequests: [Bool] = []
        /// The last token request the core made.
        var lastTokenFetch: TokenFetch?
        /// This incarnation's writer id (`nil`: writes are saved and sent without one).
        var writerID: String?
        /// Which incarnation of the client this is: 1, then one more per restart.
        var incarnation = 1
    }

    enum Delivery {
        case toServer(client: Int, link: ConnectionID, text: String)
        case toClient(client: Int, link: ConnectionID, text: String)
    }

    var server: ServerCore
    var clients: [Client] = []
    var network: [Delivery] = []
    let clock = HarnessClock()
    var now: Int64 {
        get { clock() }
        set { clock.set(newValue) }
    }
    var nextServerConnection: UInt64 = 1
    /// Every message a client sent, in order, per client.
    var sent: [[String]] = []
    /// Every message a client received, in order, per client.
    var received: [[String]] = []
    let dirs = TempDir()

    init(data: Node = .empty) {
        var c = ServerCore.Configuration()
        c.emulator = true
        server = ServerCore(data: data, configuration: c, seed: 7)
    }

    static func storeOptions(clock: @escaping @Sendable () -> Int64) -> Store.Options {
        var o = Store.Options()
        o.backgroundMaintenance = false
        o.durability = .buffered
        o.clock = clock
        return o
    }

    /// Adds a client on a fresh store, or on the store in `dir` (a copy of another's, say).
    /// `writerIDs`: each incarnation of the client — this one and each ``restart(_:)`` —
    /// saves and stamps its writes under a writer id of its own, `c<i>.<n>`, as the runtime
    /// does; otherwise writes carry none.
    @discardableResult
    func addClient(
        configuration: ClientCore.Configuration = ClientCore.Configuration(), dir: String? = nil,
        writerIDs: Bool = false
    ) throws -> Int {
        let d = dir ?? dirs.path + "/c\(clients.count)-\(UUID().uuidString.prefix(6))"
        let clock = self.clock
        let store = try Store.open(directory: d, options: SyncHarness.storeOptions(clock: { clock() }))
        let core = ClientCore(
            configuration: configuration, pendingWrites: store.pendingWrites(), writers: store.writerIdentities(),
            token: store.auth(), seed: UInt64(clients.count + 1),
            hash: { location in Database.cachedHash(store, location) },
            cache: { location in Database.cachedNode(store, location) }
        )
        var client = Client(core: core, store: store, dir: d)
        if writerIDs { client.writerID = "c\(clients.count).1" }
        clients.append(client)
        sent.append([])
        received.append([])
        return clients.count - 1
    }

    /// Client `i`'s process dies and restarts on the same store. `copy`: while it is down, its
    /// store directory is copied there (a backup, restored later with `addClient(dir:)`).
    func restart(_ i: Int, copyingStoreTo copy: String? = nil) throws {
        disconnect(i)
        try clients[i].store.close()
        let d = clients[i].dir
        if let copy { try FileManager.default.copyItem(atPath: d, toPath: copy) }
        let clock = self.clock
        let store = try Store.open(directory: d, options: SyncHarness.storeOptions(clock: { clock() }))
        // As the runtime does at open: the old connection is gone, so the server ran the
        // onDisconnect operations it had acknowledged.
        let ran = store.onDisconnectOperations().filter { $0.acknowledged }.map(\.id).sorted()
        if !ran.isEmpty {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                for id in ran { try b.applyOnDisconnectLocally(id) }
            }
        }
        let core = ClientCore(
            configuration: clients[i].core.configuration, pendingWrites: store.pendingWrites(),
            writers: store.writerIdentities(), onDisconnect: store.onDisconnectOperations(),
            token: store.auth(), seed: 99, hash: { location in Database.cachedHash(store, location) },
            cache: { location in Database.cachedNode(store, location) }
        )
        let incarnation = clients[i].incarnation + 1
        let writerID = clients[i].writerID == nil ? nil : "c\(i).\(incarnation)"
        clients[i] = Client(core: core, store: store, dir: d, writerID: writerID, incarnation: incarnation)
    }

    /// Applies a client output the way the runtime does.
    func apply(_ i: Int, _ out: ClientOutput) {
        #expect(clients[i].core.invariantViolations() == [], "client \(i)'s core after its step")
        if let id = out.close, clients[i].link == id { disconnect(i, notifyClient: false) }
        if let id = out.open {
            clients[i].opened += 1
            clients[i].link = id
            let sc = ConnectionID(nextServerConnection)
            nextServerConnection += 1
            clients[i].serverConnection = sc
            route(server.connect(sc, now: now))
            apply(i, clients[i].core.connectionOpened(id, now: now))
        }
        if let fetch = out.fetchToken {
            clients[i].tokenRequests.append(fetch.force)
            clients[i].lastTokenFetch = fetch
        }
        if !out.commits.isEmpty {
            let commits = out.commits
            _ = try! clients[i].store.commit { (b: inout StoreBatch) throws(StoreError) in
                for c in commits { try? c.apply(to: &b) }
            }
        }
        if let link = clients[i].link, clients[i].core.currentConnection == link {
            for m in out.messages {
                sent[i].append(m)
                network.append(.toServer(client: i, link: link, text: m))
            }
        }
        clients[i].events += out.events
    }

    /// Routes a server output to the clients' inbound queues.
    func route(_ out: ServerOutput) {
        for (sc, text) in out.renderedMessages() {
            guard let i = clients.firstIndex(where: { $0.serverConnection == sc }), let link = clients[i].link else {
                continue
            }
            network.append(.toClient(client: i, link: link, text: text))
        }
        // Tokens: "owner" is the admin (the emulator's convention), "expired" has expired,
        // anything else is invalid.
        for check in out.tokenChecks {
            let result: TokenCheck =
                check.credential == "owner"
                ? .valid(.admin) : check.credential == "expired" ? .expired : .invalid("unknown token")
            route(server.tokenChecked(check.ticket, result, now: now))
        }
        for sc in out.closes {
            if let i = clients.firstIndex(where: { $0.serverConnection == sc }) { disconnect(i) }
        }
    }

    /// Drops client `i`'s connection (both sides learn; in-flight messages are lost).
    func disconnect(_ i: Int, notifyClient: Bool = true) {
        guard let link = clients[i].link else { return }
        network.removeAll {
            switch $0 {
            case .toServer(let c, let l, _), .toClient(let c, let l, _): c == i && l == link
            }
        }
        if let sc = clients[i].serverConnection { route(server.disconnect(sc, now: now)) }
        clients[i].serverConnection = nil
        clients[i].link = nil
        if notifyClient { apply(i, clients[i].core.connectionClosed(link, now: now)) }
    }

    /// Delivers queued messages until the network is quiet (bounded); a message `lose` picks
    /// is lost in transit instead.
    func run(maxSteps: Int = 1_000_000, losing lose: (Delivery) -> Bool = { _ in false }) {
        var steps = 0
        while !network.isEmpty && steps < maxSteps {
            steps += 1
            let delivery = network.removeFirst()
            if lose(delivery) { continue }
            switch delivery {
            case let .toServer(i, link, text):
                guard clients[i].link == link, let sc = clients[i].serverConnection else { continue }
                for frame in FrameSplitter.frames(for: text) { route(server.receive(sc, frame: frame, now: now)) }
            case let .toClient(i, link, text):
                guard clients[i].link == link else { continue }
                received[i].append(text)
                apply(i, clients[i].core.received(text, on: link, now: now))
            }
        }
        for c in clients { c.store.waitForEventDelivery() }
    }

    /// Moves the clock and ticks every client core.
    func advance(_ ms: Int64) {
        now += ms
        for i in clients.indices { apply(i, clients[i].core.tick(now: now)) }
    }

    /// Client `i` saves a write in its store and hands it to its core (the runtime's order).
    @discardableResult
    func write(_ i: Int, _ operation: PendingWrite.Operation, at path: Path) throws -> Int64 {
        var id: Int64 = 0
        let writer = clients[i].writerID
        try clients[i].store.commit { (b: inout StoreBatch) throws(StoreError) in
            if let writer {
                id = try b.saveWrite(operation, at: path, writer: writer)
            } else {
                id = try b.saveWrite(operation, at: path)
            }
        }
        apply(
            i, clients[i].core.write(PendingWrite(id: id, path: path, operation: operation), writer: writer, now: now))
        return id
    }

    func call(_ i: Int, _ body: (inout ClientCore, Int64) -> ClientOutput) {
        let out = body(&clients[i].core, now)
        apply(i, out)
    }

    /// The action names client `i` sent, in order (`q`, `p`, `auth`, …).
    func actions(_ i: Int) -> [String] {
        sent[i].compactMap { (try? JSONValue.parse($0))?["d"]?["a"]?.stringValue }
    }
}
