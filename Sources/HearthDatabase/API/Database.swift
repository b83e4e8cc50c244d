import Dispatch
import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire
import Logging
import Synchronization

/// A realtime database: a server, a local Hearth store that keeps what the app has seen and
/// written, and the connection between them — Firebase's `Database`, offline-first.
///
/// ```swift
/// var options = Database.Options()
/// options.storeDirectory = "/path/to/app/support/hearth"   // nil: memory only
/// let db = try Database(url: "ws://127.0.0.1:9000?ns=demo", options: options)
/// let scores = db.reference(withPath: "scores")
/// scores.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded) { snap in … }
/// scores.child("stegosaurus").setValue(5)
/// ```
///
/// Everything the app writes is saved in the store before it is sent and is sent again after
/// a restart until the server answers; what listens load stays cached (up to the cache size,
/// least recently used pruned first) and answers listens while offline and after a restart.
/// One `Database` per store directory (the store is locked by its process).
public final class Database: Sendable {
    /// How a database is opened.
    public struct Options: Sendable {
        /// Where the store lives. `nil`: memory only — the store is kept in a temporary
        /// directory, written without syncing, and deleted by ``Database/close()``.
        public var storeDirectory: String?
        /// The cap on the store's size on disk (1 MiB … 100 MiB; default 10 MiB, Firebase's).
        public var cacheSizeBytes: Int = 10 << 20
        /// How durable a write is before it is sent. Default `.full`: on disk (fsync) before
        /// it is sent — synced on the database's own queue, never on the caller's thread (see
        /// <doc:Threading>). `.batched` and `.buffered` trade that for speed.
        public var durability: Durability = .full
        /// The app's token provider: called before each connection (`true`: the last token
        /// was refused, get a fresh one); `nil` for no user. `nil` provider: no auth.
        public var tokenProvider: (@Sendable (_ forceRefresh: Bool) async throws -> String?)?
        /// The app's App Check provider (Firebase App Check's `getToken`): called before each
        /// connection, beside ``tokenProvider`` (`true`: the last token was refused or revoked,
        /// or is halfway to its expiry — get a fresh one); `nil` for no token. The token goes to
        /// the server as `appcheck` after the connection's hello; a JWT's `exp` says when it is
        /// refreshed. Tell the database of tokens the provider refreshes on its own with
        /// ``Database/updateAppCheckToken(_:)``. `nil` provider: no App Check.
        public var appCheckTokenProvider: (@Sendable (_ forceRefresh: Bool) async throws -> String?)?
        /// Where observer and completion handlers run when a call does not name a queue.
        /// Default (`nil`): the main queue, as Firebase's SDKs do (handlers run one at a time,
        /// in order). A program whose main thread does not service the main queue (a command
        /// line tool blocked in a loop of its own) must set a queue here.
        public var callbackQueue: DispatchQueue?
        /// The connection maker; default: SwiftNIO on Linux (`WebSocketTransport`),
        /// `URLSessionWebSocketTask` on Apple platforms (`URLSessionTransport`).
        public var transport: (any Transport)?
        /// Seeds push ids and reconnect jitter; default random.
        public var seed: UInt64?
        /// The clock (ms since the epoch); tests may replace it.
        public var clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        /// Connect at the database's first use (default): the first ``Database/reference()``
        /// — or `goOnline`, `updateAuthToken`, `registerTransactionFunction` or `observe…`
        /// call — as Firebase's SDKs do, so that ``Database/useEmulator(withHost:port:)`` can
        /// come between opening and using. When false, the database stays offline until
        /// ``Database/goOnline()``.
        public var connectAtOpen = true
        /// An emulator to connect to instead of the URL's host: `HOST:PORT` (an IPv6 address
        /// in brackets), in the clear, the URL's namespace kept. `nil` (default): the
        /// environment variable `FIREBASE_DATABASE_EMULATOR_HOST` when it is set, as Firebase's
        /// SDKs read it; this option wins over it.
        public var emulatorHost: String?
        /// The most bytes of server messages (their UTF-8 text, plus 64 bytes each) received and
        /// not yet applied. When messages arrive faster than they are applied and the inbox
        /// reaches this bound, the connection stops reading (``TransportConnection/setReading(_:)``)
        /// until they are applied; none is dropped. It may pass the bound by what the transport
        /// had already read when told to stop. Default 16 MiB.
        public var maxInboxBytes: Int = 16 << 20

        /// Where the database logs, through swift-log: its warnings (what Firebase's clients
        /// log: a server error, a shutdown, security debug output, a query without an index, a
        /// host cache file that could not be read) at `.warning`, and what it does (connecting,
        /// connected and disconnected, purging writes) at `.debug`, which
        /// ``Database/setLoggingEnabled(_:)`` turns on. Default: a logger labelled
        /// `hearth.database`, on the backend the app bootstrapped (`LoggingSystem.bootstrap`;
        /// without one, swift-log's standard error at `.info`).
        public var logger = Logger(label: "hearth.database")

        /// A function that takes every line ``logger`` would get instead of it — warnings,
        /// and debug lines while ``Database/setLoggingEnabled(_:)`` is on. `nil` (default):
        /// ``logger`` gets them.
        public var logHandler: (@Sendable (String) -> Void)?

        /// The store's file system (tests give a simulated one); `nil`: the real one.
        var fileSystem: (any FileSystem)?
        /// Debug logging for this database alone, whatever ``Database/setLoggingEnabled(_:)``
        /// says (tests set it; `nil`: follow that switch).
        var debugLogging: Bool?

        /// Default options: memory only, 10 MiB, full durability, no auth.
        public init() {}
    }

    /// Where the server is: the URL's, or the emulator's (``Options/emulatorHost``,
    /// ``useEmulator(withHost:port:)``).
    public var endpoint: ServerEndpoint { state.withLock { $0.endpoint } }
    /// The store that holds this database's cache, writes and kept outcomes.
    package let store: Store
    /// This incarnation's writer id for exactly-once writes (``WriterIdentity``): the writes
    /// made through this instance carry it; those an earlier one left pending keep theirs.
    let writerID: String
    let options: Options
    /// Serializes every step of the core and the store commits that follow it.
    let work: DispatchQueue
    /// Handlers' default queue.
    let callbacks: DispatchQueue
    /// Where the server's answers to transactions are handled, one at a time in the order they
    /// came: off the sync queue, and serial, so their outcomes reach ``callbacks`` in that order.
    let transactionSteps = DispatchQueue(label: "hearth.database.transactions")
    let transport: any Transport
    let state: Mutex<RuntimeState>
    /// The ack path: commits the core's output, and carries outcomes to their handlers.
    let acknowledger: WriteAcknowledger
    /// Held across saving a write and handing it to the core, so writes reach the core in
    /// write-id order.
    let writeLock = Mutex(())
    /// The app's commits on their way to the core, and the sync failure that refuses them.
    let handOffs = Mutex(HandOffGate())
    /// Push ids, and the randomness they are drawn with.
    let pushIDs: Mutex<PushIDSource>
    /// Transport reports not yet given to the core (drained together: one store commit for
    /// a burst of messages), within ``Options/maxInboxBytes``.
    let inbox: Mutex<Inbox>
    /// Whether writes are held for an expired token, and who wants to know.
    let pauseSignal = Mutex(WritesPausedSignal())
    /// The completions of this run's onDisconnect operations, by operation id, until answered.
    let onDisconnectCallbacks = Mutex<[Int64: WriteCallback]>([:])
    /// What `.info` holds, and its observers.
    let infoBoard = Mutex(InfoBoard())
    let temporaryDirectory: String?

    /// Opens (or creates) the store. The connection starts at the database's first use (the
    /// first ``reference()``), unless ``Options/connectAtOpen`` is false; then writes left
    /// pending by an earlier run are sent again and keepSynced queries listen again.
    /// - Throws: ``DatabaseError/invalidValue(_:)`` for a bad URL or option,
    ///   ``DatabaseError/storage(_:)`` when the store cannot be opened.
    public init(url: String, options: Options = Options()) throws(DatabaseError) {
        let endpoint: ServerEndpoint
        do {
            endpoint = try Database.emulated(
                ServerEndpoint(url: url),
                by: Database.emulatorHost(
                    option: options.emulatorHost, environment: ProcessInfo.processInfo.environment))
        } catch { throw .invalidValue("\(error)") }
        guard options.maxInboxBytes > 0 else { throw .invalidValue("maxInboxBytes must be positive") }
        self.options = options
        let work = DispatchQueue(label: "hearth.database.sync")
        self.work = work
        self.callbacks = options.callbackQueue ?? DispatchQueue.main
        self.transport = options.transport ?? PlatformTransport.make()
        var storeOptions = Store.Options()
        storeOptions.cacheSizeBytes = options.cacheSizeBytes
        storeOptions.durability = options.durability
        storeOptions.clock = options.clock
        if let fs = options.fileSystem { storeOptions.fileSystem = fs }
        let directory: String
        if let d = options.storeDirectory {
            directory = d
            temporaryDirectory = nil
        } else {
            directory = NSTemporaryDirectory() + "hearth-memory-\(UUID().uuidString)"
            temporaryDirectory = directory
            storeOptions.durability = .buffered
        }
        do { store = try Store.open(directory: directory, options: storeOptions) } catch { throw DatabaseError(error) }
        let seed = options.seed ?? UInt64.random(in: .min ... .max)
        var configuration = ClientCore.Configuration()
        configuration.usesTokens = options.tokenProvider != nil
        configuration.usesAppCheck = options.appCheckTokenProvider != nil
        configuration.host = endpoint.hostHeader
        let hostCache =
            temporaryDirectory == nil
            ? HostCache(fs: options.fileSystem ?? POSIXFileSystem(), directory: directory, endpoint: endpoint) : nil
        let log = Database.logger(options)
        let cachedHost = hostCache?.load(warn: log)
        let store = self.store
        // The connection of the last run is gone, so the server ran the onDisconnect
        // operations it had acknowledged: their effect is server data now.
        let ran = store.onDisconnectOperations().filter(\.acknowledged)
        if !ran.isEmpty {
            do {
                try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    for op in ran.sorted(by: { $0.id < $1.id }) { try b.applyOnDisconnectLocally(op.id) }
                }
            } catch { throw DatabaseError(error) }
        }
        let restored: (queued: [QueuedTransaction], outcomes: [TransactionOutcome])
        let keptWrites: [KeptOutcome<WriteResult>]
        do {
            restored = try Database.restoreTransactions(store)
            keptWrites = try Database.keptWriteResults(store, warn: log)
        } catch { throw DatabaseError(error) }
        // A fresh id for this incarnation's writes, committed with the first of them. Always
        // the system's randomness (not the seed): two incarnations must never share an id.
        var system = SystemRandomNumberGenerator()
        writerID = WriterIdentity.make { system.next() }
        let pending = store.pendingWrites()
        let core = ClientCore(
            configuration: configuration, pendingWrites: pending, writers: store.writerIdentities(),
            onDisconnect: store.onDisconnectOperations(), token: store.auth(), seed: seed, host: cachedHost,
            hash: { location in Database.cachedHash(store, location) },
            cache: { location in Database.cachedNode(store, location) }
        )
        acknowledger = WriteAcknowledger(
            store: store, work: work, log: log,
            ledger: OutcomeLedger(
                firstWriteOfRun: (pending.map(\.id).max() ?? 0) + 1, limit: WriteAcknowledger.maxUndeliveredOutcomes,
                waitingWrites: keptWrites,
                waitingTransactions: restored.outcomes.map { KeptOutcome(record: $0.id, value: $0) }))
        pushIDs = Mutex(PushIDSource(random: SeededRandom(seed: seed ^ 0x5DEE_CE66_D1CE_4E5B)))
        inbox = Mutex(Inbox(limit: options.maxInboxBytes))
        state = Mutex(RuntimeState(core: core, endpoint: endpoint, hostCache: hostCache))
        state.withLock { s in s.restoredTransactions = restored.queued }
        let offset = store.serverTimeOffset()
        infoBoard.withLock { board in _ = board.update { $0.serverTimeOffset = offset } }
        // keepSynced queries listen again; the connection waits for the first use.
        let pins = store.pins()
        if !pins.isEmpty {
            do {
                try store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
                    for location in pins { try b.setQueryActive(location) }
                }
            } catch { throw DatabaseError(error) }
        }
        work.sync {
            for location in pins.sorted(by: { $0.description < $1.description }) {
                _ = state.withLock { $0.pinned.insert(location) }
                step { (core, now) in core.listen(location, now: now) }
            }
        }
    }

    /// The hash of what the client holds for a listen — the server sends nothing when it
    /// matches, so it must describe exactly what the listen's view shows: its view's server
    /// cache (which may have come from a complete view above it), or without a view the
    /// store's server cache by Firebase's persistence rules (a filtered query holds only its
    /// tracked keys, which follow its view — a window the server emptied stays empty there
    /// although the children stay cached) — ``Store/listenServerCache(for:)`` — windowed by the
    /// query. Only a complete cache is worth a hash (Firebase sends `""` otherwise).
    static func cachedHash(_ store: Store, _ location: QueryLocation) -> String {
        cachedNode(store, location)?.hash ?? ""
    }

    /// What ``cachedHash(_:_:)`` is taken of: the complete cached data a listen shows, or `nil`.
    static func cachedNode(_ store: Store, _ location: QueryLocation) -> Node? {
        guard let (node, complete) = (try? store.listenServerCache(for: location)) ?? nil, complete else { return nil }
        return location.query.loadsAllData ? node : location.query.window(of: node).node
    }

    /// A reference to the root of the database.
    public func reference() -> DatabaseReference {
        startIfNeeded()
        return DatabaseReference(database: self, path: .root)
    }

    /// A reference to `path` (slash-separated) from the root.
    public func reference(withPath path: String) -> DatabaseReference { reference().child(path) }

    /// Disconnects and stays offline until ``goOnline()``: writes keep queueing (durably),
    /// listens answer from the cache.
    public func goOffline() {
        state.withLock { $0.started = true }
        work.sync { step { (core, now) in core.goOffline(now: now) } }
    }

    /// Connects again after ``goOffline()``.
    public func goOnline() {
        state.withLock { $0.started = true }
        work.sync { step { (core, now) in core.goOnline(now: now) } }
    }

    /// Disconnects, removes every observer, and closes the store. Pending writes stay in the
    /// store for the next run. Further calls fail with ``DatabaseError/closed``.
    public func close() throws(DatabaseError) {
        let wasOpen: Bool = work.sync {
            // Outcomes whose handlers have run leave the store before it closes (durably).
            acknowledger.close()
            let open = state.withLock { s in
                defer { s.closed = true }
                return !s.closed
            }
            guard open else { return false }
            step(allowClosed: true) { (core, now) in core.goOffline(now: now) }
            state.withLock { s in
                s.timer?.cancel()
                s.timer = nil
            }
            return true
        }
        guard wasOpen else { return }
        store.waitForEventDelivery()
        do { try store.close() } catch { throw DatabaseError(error) }
        if let t = temporaryDirectory { try? FileManager.default.removeItem(atPath: t) }
    }

    /// Whether the client is connected (what `.info/connected` says).
    public var isConnected: Bool { infoBoard.withLock { $0.info.connected } }

    /// The server's clock minus this device's, in ms (what `.info/serverTimeOffset` says): the
    /// last one measured, kept across restarts.
    public var serverTimeOffset: Double { infoBoard.withLock { $0.info.serverTimeOffset } }

    deinit {
        state.withLock { $0.timer?.cancel() }
        // A memory-only database's files go with it, closed or not.
        if let t = temporaryDirectory {
            try? store.close()
            try? FileManager.default.removeItem(atPath: t)
        }
    }
}
