import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

/// The client's protocol logic as a state machine, with no I/O (sans-I/O): Firebase's
/// `PersistentConnection` (firebase-js-sdk `core/PersistentConnection.ts`, firebase-ios-sdk
/// `FPersistentConnection.m`) over a Hearth store.
///
/// It is fed the app's intents (a saved write, a listen, a get, going on- or offline),
/// connection reports (opened, a message, closed), token-provider answers and clock ticks,
/// and answers each with a ``ClientOutput``: connections to open or close, store commits,
/// messages to send and events for the app. Time is only what the caller passes as `now`
/// (ms since the epoch) and randomness comes from a seeded generator, so a simulator drives
/// it deterministically.
///
/// **What it relies on** (the runtime's side of the contract):
/// - every write it is given is already in the store (`saveWrite` committed), so a write
///   sent is a write that survives a crash — and the restored
///   ``init(configuration:pendingWrites:writers:onDisconnect:token:seed:host:hash:cache:)`` list is the
///   store's pending writes in id order, with the writer id each was created under;
/// - an output's commits are applied, in order, before its events are delivered; its messages
///   go out on the connection it was produced for, in order.
///
/// **Reconnect order** (Firebase's `restoreState_`): `auth` first, then `appcheck` (App Check:
/// ClientCore+AppCheck.swift), then every listen (with the
/// hash of its cached data, so the server sends nothing when it is unchanged), then every
/// pending write in write-id order, then the unanswered gets.
///
/// **Exactly-once writes** (Hearth's extension, `WriteStamp`): when the server's hello offers
/// it (`"x": ["w"]`), every `p`/`m` of a write that has a writer id carries that id and the
/// write's id, so a write re-sent after its answer was lost is not applied twice. A write's
/// writer id is the one it was created under — the runtime takes a fresh one each time it
/// opens the store and writes (Hearth's `WriterIdentities`) — so the pending writes of one
/// store may carry several. Writes go out in strictly increasing id order on every
/// connection, so each writer's do too (the server relies on it). A transaction's
/// compare-and-set whose connection dropped is given up, stamped or not (see
/// `dropConnectionState`). Without the offer the core speaks plain protocol v5.
///
/// Not thread-safe: one caller at a time (the runtime holds it under a lock).
package struct ClientCore: Sendable {
    /// Limits and timings.
    package struct Configuration: Sendable {
        /// A keepalive (`"0"`) is sent after this long without sending anything (Firebase:
        /// 45 s, under the servers' 60 s idle limit).
        package var keepAliveIntervalMs: Int64 = 45_000
        /// A get made while not connected fails with ``DatabaseError/offline`` after this long
        /// without a connection (Firebase: 3 s).
        package var getOfflineTimeoutMs: Int64 = 3_000
        /// The app supplies tokens: every connection attempt asks for one first.
        package var usesTokens = false
        /// The app supplies App Check tokens: every connection attempt asks for one first
        /// (beside the auth token), and it goes out as `appcheck` after the hello.
        package var usesAppCheck = false
        /// After this many refused tokens in a row, reconnects wait the longest delay
        /// (Firebase: 3).
        package var invalidTokenThreshold = 3
        /// Listens one client may hold.
        package var maxListens = 100_000
        /// The host the database URL names (`HOST[:PORT]`, as in a `Host` header). When set,
        /// the core follows the servers' redirects (a reset, a hello naming another host) and
        /// keeps the host they name in ``ClientCore/host``; `nil`: every connection goes to
        /// the configured host.
        package var host: String?
        /// Resets one connection attempt may follow before it counts as failed (and the next
        /// waits the backoff): servers that redirect to each other cannot make the client loop.
        package var maxResetsPerAttempt = 8
        /// Default configuration.
        package init() {}
    }

    enum Phase: Sendable, Equatable {
        /// Not connected and not trying: the app went offline (or never online).
        case offline
        /// Waiting to retry until this time.
        case waiting(until: Int64)
        /// Waiting for the token provider before opening this connection.
        case fetchingToken(ConnectionID)
        /// The connection is opening; no hello yet.
        case connecting(ConnectionID)
        /// Hello received: requests flow.
        case connected(ConnectionID)
    }

    /// One request in flight on the current connection.
    enum Request: Sendable {
        /// An `auth` with this credential (`nil`: an `unauth`).
        case auth(String?)
        /// An `appcheck` with this token (`nil`: an `unappcheck`).
        case appCheck(String?)
        case listen(QueryLocation)
        case unlisten
        case write(Int64)
        case get(UInt64)
        case onDisconnect(Int64)
    }

    struct Listen: Sendable {
        /// Registrations (observers and pins) that want this listen.
        var count: Int
        /// The wire tag of a filtered query.
        let tag: Int?
        /// Listens are restored in the order they were made.
        let order: UInt64
    }

    struct PendingGet: Sendable {
        let location: QueryLocation
        /// Fails offline at this time unless sent first.
        var deadline: Int64?
        var sent = false
    }

    /// The configuration.
    package internal(set) var configuration: Configuration
    var phase: Phase = .offline
    var backoff = Backoff()
    var rng: SeededRandom
    var nextConnection: UInt64 = 1
    var nextRequest = 1
    var nextTag = 1
    var nextListenOrder: UInt64 = 1
    /// Requests awaiting a response on the current connection, by number.
    var requests: [Int: Request] = [:]
    var listens: [QueryLocation: Listen] = [:]
    var tags: [Int: QueryLocation] = [:]
    /// Writes not yet answered, by id (ids increase in write order).
    var writes: [Int64: PendingWrite] = [:]
    var gets: [UInt64: PendingGet] = [:]
    /// The compare-and-set condition of a transaction's write (Firebase's `p` with `h`).
    package struct WriteCondition: Sendable, Hashable {
        /// The hash of the data the update function ran on; the server refuses the write
        /// (`datastale`) unless its data still has it.
        package let hash: String
        /// The persisted transaction it belongs to, if any (marked sent before it goes out).
        package let transactionID: Int64?
        /// A condition.
        package init(hash: String, transactionID: Int64?) {
            self.hash = hash
            self.transactionID = transactionID
        }
    }

    /// Conditions of the conditional writes, by write id.
    var conditions: [Int64: WriteCondition] = [:]
    /// onDisconnect operations not yet run or removed, by id.
    var onDisconnects: [Int64: OnDisconnectOperation] = [:]
    /// Writes and onDisconnect operations sent on the current connection.
    var sentWrites: Set<Int64> = []
    /// The highest write id sent on the current connection (ids go out in increasing order).
    var lastSentWriteID: Int64 = .min
    /// The writer id each unanswered write was created under, by write id (a write without
    /// one is sent unstamped).
    var writerIDs: [Int64: String] = [:]
    /// Whether the current connection's server offered exactly-once writes (then writes with
    /// a writer id go out stamped).
    package internal(set) var stampsWrites = false
    var sentOnDisconnects: Set<Int64> = []
    /// Writes are held (the token expired) — reported once per change.
    var pausedReported = false
    /// A fresh token was asked for while connected.
    var refreshingToken = false
    /// The token in use, if any.
    ///
    /// A token comes from the app (``authTokenUpdated(_:now:)``) or as the provider's answer
    /// to a numbered request (``tokenFetched(_:fetch:now:)``), and answers can arrive late: a
    /// refresh asked for because the token expired may finish after the app handed over a
    /// newer token. The newest token wins: an answer to a request made before the token was
    /// last set is dropped (see `tokenFetchesBeforeToken`), so a late answer never replaces
    /// a newer token and never pauses writes again.
    package internal(set) var token: AuthToken?
    /// The number of the last token request made (requests are numbered from 1).
    var tokenFetches: Int64 = 0
    /// Requests numbered up to this one were made before ``token`` was set: their answers
    /// are stale. The app's token sets it to `tokenFetches`; an answer, to its number.
    var tokenFetchesBeforeToken: Int64 = 0
    var forceTokenRefresh = false
    var invalidTokens = 0
    /// The App Check token in use, if any (its expiry from the token's `exp`; see
    /// ClientCore+AppCheck.swift). Its answers follow the same newest-wins rule as ``token``.
    package internal(set) var appCheckToken: AuthToken?
    /// The number of the last App Check token request made.
    var appCheckFetches: Int64 = 0
    /// App Check requests numbered up to this one are stale.
    var appCheckFetchesBeforeToken: Int64 = 0
    /// When the App Check token in use is to be refreshed (halfway to its expiry).
    var appCheckRefreshAt: Int64?
    /// A fresh App Check token was asked for while connected.
    var refreshingAppCheck = false
    var forceAppCheckRefresh = false
    /// App Check tokens refused as invalid in a row.
    var invalidAppCheckTokens = 0
    /// Shutdowns for an invalid App Check token in a row.
    var appCheckShutdowns = 0
    /// The attempt being prepared waits for the auth token provider's answer.
    var awaitingAuth = false
    /// The attempt being prepared waits for the App Check provider's answer.
    var awaitingAppCheck = false
    /// Whether the server accepted the current token on this connection.
    package internal(set) var isAuthenticated = false
    /// The server's clock minus ours (ms), from the last hello.
    package internal(set) var serverTimeOffsetMs: Double = 0
    /// The newest write id handed to the core (ids increase: checked, not scanned).
    var newestWriteID: Int64 = .min
    /// The last session id, sent as `ls` when reconnecting.
    package internal(set) var lastSessionID: String?
    /// Where connections go when not the configured host (Firebase's `RepoInfo.internalHost`):
    /// the host a server redirected the client to, `HOST[:PORT]`. `nil`: the configured one.
    package internal(set) var host: String?
    /// Why the server shut the connection down (control `s`): no attempt follows until
    /// ``goOnline(now:)``.
    package internal(set) var shutdownReason: String?
    /// Whether the transport reported the current connection open (a connection that never
    /// opened is a failed connect: the cached host is dropped).
    var currentOpened = false
    /// Resets followed in the current attempt (bounded by ``Configuration/maxResetsPerAttempt``).
    var resetsInAttempt = 0
    var lastSend: Int64 = 0
    /// The hash of the cached data for a listen (`""` for none).
    let hash: @Sendable (QueryLocation) -> String
    /// The cached data a listen would show when it is complete (what ``hash`` is taken of):
    /// a listen of more than ``CompoundHash/sizeThreshold`` sends its ``CompoundHash``, and a
    /// range merge (`rm`) is applied to it.
    let cache: (@Sendable (QueryLocation) -> Node?)?

    /// A core with the store's pending writes (in any order; they are sent in id order) and
    /// its saved token, drawing randomness from `seed`; `hash` gives the hash of the cached
    /// data a listen would show (Firebase sends it so that the server sends nothing when it
    /// matches), and `cache` that data itself, when complete — a listen whose data is large
    /// sends its compound hash, and the server's range merges apply to it (with `cache`, the
    /// hash is taken of its data and `hash` is not asked; without it, listens send only the
    /// hash).
    ///
    /// `onDisconnect` holds the store's queued onDisconnect operations that the server has not
    /// acknowledged (they are sent on connect); acknowledged ones belong to a connection that
    /// is gone — the runtime applies them locally at open (`StoreBatch.applyOnDisconnectLocally(_:)`).
    ///
    /// `writers` says which writer id each pending write was created under (the store's
    /// `Store.writerIdentities()`): to a server that offers exactly-once writes, those
    /// writes carry `WriteStamp`s with it.
    ///
    /// `host` is the host a server redirected an earlier run to (``host``), if it was kept:
    /// the first connection goes there (when ``Configuration/host`` is set and it is a valid
    /// `HOST[:PORT]`).
    package init(
        configuration: Configuration = Configuration(), pendingWrites: [PendingWrite],
        writers: WriterIdentities = WriterIdentities(), onDisconnect: [OnDisconnectOperation] = [],
        token: AuthToken?, seed: UInt64, host: String? = nil, hash: @escaping @Sendable (QueryLocation) -> String,
        cache: (@Sendable (QueryLocation) -> Node?)? = nil
    ) {
        self.configuration = configuration
        if let configured = configuration.host, let host, host != configured, ServerEndpoint.isValidHost(host) {
            self.host = host
        }
        self.rng = SeededRandom(seed: seed)
        self.token = token
        self.hash = hash
        self.cache = cache
        for w in pendingWrites {
            writes[w.id] = w
            writerIDs[w.id] = writers.writer(of: w.id)
        }
        for op in onDisconnect where !op.acknowledged { onDisconnects[op.id] = op }
    }

    /// Points the core at another configured host before its first connection (an emulator
    /// chosen after the core was made): the host a server redirected the old one to belongs
    /// to the old one, so it is dropped.
    mutating func reconfigure(host configured: String?) {
        precondition(phase == .offline && nextConnection == 1, "the host changes only before the first connection")
        configuration.host = configured
        host = nil
    }

    /// Whether writes are held now: the token in use has expired. (Firebase: "If the auth
    /// token expires while your app is offline, the client pauses write operations until your
    /// app re-authenticates the user".)
    package func writesPaused(now: Int64) -> Bool {
        guard let token else { return false }
        return token.expiresAt <= now
    }

    /// Whether a connection is up (hello received).
    package var isConnected: Bool {
        if case .connected = phase { return true }
        return false
    }

    /// The connection the core considers current (opening or open).
    package var currentConnection: ConnectionID? {
        switch phase {
        case .connecting(let id), .connected(let id), .fetchingToken(let id): id
        case .offline, .waiting: nil
        }
    }

    /// The writes not yet answered by the server, in id order.
    package var unansweredWriteIDs: [Int64] { writes.keys.sorted() }

    /// The listens the core holds (wire locations: a query that loads all data is the
    /// default query at its path).
    package var listenLocations: Set<QueryLocation> { Set(listens.keys) }

    /// The earliest time ``tick(now:)`` has something to do, if any.
    package var nextDeadline: Int64? {
        var d: Int64?
        func consider(_ t: Int64) { d = min(d ?? t, t) }
        if case .waiting(let until) = phase { consider(until) }
        if isConnected { consider(lastSend + configuration.keepAliveIntervalMs) }
        if isConnected && configuration.usesAppCheck && !refreshingAppCheck, let t = appCheckRefreshAt { consider(t) }
        if let t = token, !pausedReported, t.expiresAt < Int64.max { consider(t.expiresAt) }
        for g in gets.values { if let t = g.deadline { consider(t) } }
        return d
    }

    /// The location the server keys a listen by: a query that loads all data is listened as
    /// the default query (Firebase's clients do the same).
    static func wireLocation(_ location: QueryLocation) -> QueryLocation {
        location.query.loadsAllData ? QueryLocation(path: location.path, query: .default) : location
    }
}
