@_spi(HearthInternals) import Hearth
import HearthModel
@_spi(HearthInternals) import HearthServer
import HearthTesting
@_spi(HearthInternals) import HearthWire
import Synchronization
@testable import HearthDatabase

/// A write a client saved, as the model sees it.
struct SimWrite: Sendable {
    let client: Int
    let id: Int64
    let path: Path
    let operation: PendingWrite.Operation

    /// The data after this write is applied to `data` (no server values in the workload), as
    /// the server decodes it from the wire.
    func applied(to data: Node) -> Node {
        switch operation {
        case .set(let node): return data.updating(path, with: SimWrite.wire(node, at: path))
        case .update(let children):
            var d = data
            for c in children {
                let at = path.appending(c.path)
                d = d.updating(at, with: SimWrite.wire(c.node, at: at))
            }
            return d
        }
    }

    /// `node` as it reads after a trip through JSON (numbers as the wire decodes them).
    static func wire(_ node: Node, at path: Path) -> Node {
        (try? Node(json: node.exportJSON(), at: path)) ?? node
    }

    var summary: String {
        switch operation {
        case .set(let node): "set /\(path.wireString) = \(node.plainJSONString())"
        case .update(let children):
            "update /\(path.wireString) {"
                + children.map { "\($0.path.wireString): \($0.node.plainJSONString())" }.joined(separator: ", ") + "}"
        }
    }
}

/// A change to the server's data that the model follows.
enum SimApplied {
    /// Client `client`'s write `id`, answered `ok`.
    case write(client: Int, id: Int64)
    /// Client `client`'s onDisconnect operation, run because the server lost connection
    /// `conn` on which it had accepted it.
    case onDisconnect(client: Int, conn: UInt64, OnDisconnectOperation)
    /// Client `client`'s write `id`, answered `ok` (`{"seen":true}`) without being applied
    /// again: a re-send the server recognised (exactly-once writes).
    case deduplicated(client: Int, id: Int64)

    /// The data after this change is applied to `data`, as the server applies it.
    func applied(to data: Node, in sim: Simulation) -> Node? {
        switch self {
        case let .write(c, id): sim.clients[c].saved[id]?.applied(to: data)
        case let .onDisconnect(_, _, op): SimApplied.applied(op, to: data)
        case .deduplicated: data
        }
    }

    static func applied(_ op: OnDisconnectOperation, to data: Node) -> Node {
        switch op.action {
        case .set(let node): data.updating(op.path, with: SimWrite.wire(node, at: op.path))
        case .remove: data.updating(op.path, with: .empty)
        case .update(let children):
            children.reduce(data) { d, c in
                let at = op.path.appending(c.path)
                return d.updating(at, with: SimWrite.wire(c.node, at: at))
            }
        case .cancel: data
        }
    }
}

/// A server output waiting for its writes to be durable (the release rule).
struct SimRelease {
    let output: ServerOutput
    /// The core's data right after this output: what the store checkpoints with its writes.
    let data: Node
    /// The changes this output made that the model follows, in order.
    let applied: [SimApplied]
}

/// The server: its core, its store on its own simulated disk, and the outputs
/// not yet released.
final class SimServer {
    let fs: SimulatedFileSystem
    var store: AuthoritativeStore
    var core: ServerCore
    /// Bumped by every restart: connections and releases of an older one are dead.
    var incarnation = 0
    var outbox: [SimRelease] = []
    var lastRelease: Int64 = 0
    var nextTick: Int64 = 0
    let clock: @Sendable () -> Int64

    static let directory = "/server"

    /// Whether the server offers exactly-once writes (off: plain protocol v5, as Firebase).
    var exactlyOnceWrites = true

    func configuration() -> ServerCore.Configuration { SimServer.configuration(exactlyOnceWrites: exactlyOnceWrites) }

    static func configuration(exactlyOnceWrites: Bool) -> ServerCore.Configuration {
        var c = ServerCore.Configuration()
        c.emulator = true
        c.exactlyOnceWrites = exactlyOnceWrites
        return c
    }

    static func storeOptions(
        _ fs: SimulatedFileSystem, clock: @escaping @Sendable () -> Int64
    ) -> AuthoritativeStore.Options {
        var o = AuthoritativeStore.Options()
        o.fileSystem = fs
        o.durability = .full
        o.backgroundCheckpoints = false
        // Small, so that runs checkpoint and restarts open from checkpoints too.
        o.checkpointMinimumBytes = 4096
        o.segmentSize = 64 << 10
        o.clock = clock
        return o
    }

    init(seed: UInt64, clock: @escaping @Sendable () -> Int64, exactlyOnceWrites: Bool = true) throws {
        self.exactlyOnceWrites = exactlyOnceWrites
        self.clock = clock
        fs = SimulatedFileSystem(seed: seed)
        store = try AuthoritativeStore.open(
            directory: SimServer.directory, options: SimServer.storeOptions(fs, clock: clock)
        )
        .store
        core = ServerCore(
            data: .empty, configuration: SimServer.configuration(exactlyOnceWrites: exactlyOnceWrites), seed: seed)
    }

    /// The process dies (the disk cut by `mode`) and starts again over what its store holds.
    func restart(mode: SimulatedFileSystem.PowerCutMode, seed: UInt64) throws {
        outbox.removeAll()
        fs.powerCut(mode: mode)
        try? store.close()
        let opened = try AuthoritativeStore.open(
            directory: SimServer.directory, options: SimServer.storeOptions(fs, clock: clock))
        store = opened.store
        core = ServerCore(
            data: opened.data, configuration: configuration(), seed: seed,
            writerWatermarks: store.writerWatermarks())
        incarnation += 1
    }

    /// Makes an output's writes durable with the data after them, as the runtime's commit
    /// loop does.
    func commit(_ release: SimRelease) throws {
        guard !release.output.writes.isEmpty else { return }
        try store.commit(data: release.data) { (batch: inout AuthoritativeBatch) throws(StoreError) in
            for w in release.output.writes { try batch.apply(w) }
        }
    }

    /// What the store holds on disk: its directory opened again, read-only, beside it.
    func durableData() throws -> Node {
        var o = SimServer.storeOptions(fs, clock: clock)
        o.readOnly = true
        let opened = try AuthoritativeStore.open(directory: SimServer.directory, options: o)
        defer { try? opened.store.close() }
        return opened.data
    }
}

/// Collects one store listener's events and rebuilds the view they describe.
final class SimRecorder: Sendable {
    private struct State {
        var children: [ChildKey: Node] = [:]
        var value: Node?
        var count = 0
    }
    private let state = Mutex(State())

    func record(_ e: ViewEvent) {
        state.withLock { s in
            s.count += 1
            switch e.kind {
            case .childAdded, .childChanged, .childMoved:
                if let k = e.childKey { s.children[k] = e.node }
            case .childRemoved:
                if let k = e.childKey { s.children[k] = nil }
            case .value:
                s.value = e.node
            }
        }
    }

    /// The children the child events describe, and the last value event's node.
    var view: (children: [ChildKey: Node], value: Node?, events: Int) {
        state.withLock { ($0.children, $0.value, $0.count) }
    }
}

/// One registration of the app: a store listener and the core's listen for it.
struct SimRegistration {
    let location: QueryLocation
    let token: ListenerToken
    let recorder: SimRecorder
}

/// A client "process": its core, its store on its own simulated disk, and what the app did.
final class SimClient {
    let index: Int
    let fs: SimulatedFileSystem
    var store: Store
    var core: ClientCore
    /// The connection the client's transport holds (the core's current one, once opened).
    var conn: UInt64?
    /// The app asked to be offline (goOffline) and has not asked to be online since.
    var appOffline = true
    /// The network cannot reach the server from this client.
    var partitioned = false
    var registrations: [SimRegistration] = []
    /// Every write it saved, by id, and the ones the server answered.
    var saved: [Int64: SimWrite] = [:]
    var completed: Set<Int64> = []
    var maxWriteID: Int64 = 0
    var nextGet: UInt64 = 1
    /// For each get the server answered: what the server's data said then.
    var expectedGets: [UInt64: Node] = [:]
    var pushIDs = PushIDGenerator()
    var listKeys: [ChildKey] = []
    /// Every onDisconnect operation it queued, by id, and the ones the server answered `ok`.
    var ops: [Int64: OnDisconnectOperation] = [:]
    var opsAcknowledged: Set<Int64> = []
    /// keepSynced pins (the store persists them).
    var pins: Set<QueryLocation> = []
    /// Transactions in flight (memory: lost at a restart), the writes that were transactions'
    /// compare-and-sets, and what the last open found of an earlier run's transactions.
    var transactions = TransactionQueue<SimTransaction>()
    var transactionWrites: Set<Int64> = []
    var restoredTransactions: (queued: [QueuedTransaction], outcomes: [TransactionOutcome]) = ([], [])
    /// Answered plain writes whose outcome the store keeps until the app has heard it: the
    /// record's id by write id.
    var writeOutcomeRecords: [Int64: Int64] = [:]
    /// The app supplies tokens (from the simulated provider).
    let usesTokens: Bool
    /// Bumped by every restart: a token fetch of an earlier process is moot.
    var tokenGeneration = 0
    /// The provider fails every fetch until then (a fault).
    var providerDownUntil: Int64 = 0
    var tokensIssued = 0
    /// This incarnation's writer id: its writes are saved and stamped under it.
    var writerID: String
    let clock: @Sendable () -> Int64

    var directory: String { "/client\(index)" }

    static func storeOptions(_ fs: SimulatedFileSystem, clock: @escaping @Sendable () -> Int64) -> Store.Options {
        var o = Store.Options()
        o.fileSystem = fs
        o.durability = .full
        o.backgroundMaintenance = false
        o.lazyCacheLoad = false
        o.clock = clock
        return o
    }

    init(index: Int, seed: UInt64, usesTokens: Bool, clock: @escaping @Sendable () -> Int64) throws {
        self.index = index
        self.clock = clock
        self.usesTokens = usesTokens
        fs = SimulatedFileSystem(seed: seed)
        let store = try Store.open(directory: "/client\(index)", options: SimClient.storeOptions(fs, clock: clock))
        self.store = store
        (core, restoredTransactions, writerID) = try SimClient.makeCore(store, seed: seed, usesTokens: usesTokens)
    }

    /// The core, as `Database.open` makes it: the onDisconnect operations the server had
    /// acknowledged ran when the last run's connection went, so they are applied locally
    /// first; the transactions the last run left are restored (their writes reverted: a
    /// transaction's write is only ever sent as a compare-and-set); the rest are handed to the
    /// core with the pending writes and the writer ids they were created under. Also returns
    /// the incarnation's own writer id.
    static func makeCore(
        _ store: Store, seed: UInt64, usesTokens: Bool
    ) throws -> (ClientCore, (queued: [QueuedTransaction], outcomes: [TransactionOutcome]), String) {
        let ran = store.onDisconnectOperations().filter(\.acknowledged)
        if !ran.isEmpty {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                for op in ran.sorted(by: { $0.id < $1.id }) { try b.applyOnDisconnectLocally(op.id) }
            }
        }
        let restored = try Database.restoreTransactions(store)
        var configuration = ClientCore.Configuration()
        configuration.usesTokens = usesTokens
        // The incarnation's writer id, from the seed: deterministic, and distinct per client
        // and per restart (each draws a new seed).
        var rng = SeededRandom(seed: seed ^ 0x5752_4954_4552)
        let writerID = WriterIdentity.make { rng.next() }
        let core = ClientCore(
            configuration: configuration, pendingWrites: store.pendingWrites(), writers: store.writerIdentities(),
            onDisconnect: store.onDisconnectOperations(), token: store.auth(), seed: seed,
            hash: { location in Database.cachedHash(store, location) },
            cache: { location in Database.cachedNode(store, location) })
        return (core, restored, writerID)
    }

    /// The process dies (with the disk cut by `mode`, or a clean close when nil) and starts
    /// again: memory lost, store reopened.
    func restart(mode: SimulatedFileSystem.PowerCutMode?, seed: UInt64) throws {
        if let mode {
            fs.powerCut(mode: mode)
            try? store.close()
        } else {
            store.waitForEventDelivery()
            try store.close()
        }
        store = try Store.open(directory: directory, options: SimClient.storeOptions(fs, clock: clock))
        (core, restoredTransactions, writerID) = try SimClient.makeCore(store, seed: seed, usesTokens: usesTokens)
        transactions = TransactionQueue()
        writeOutcomeRecords = [:]
        conn = nil
        registrations = []
        tokenGeneration += 1
    }
}
