import Dispatch
import Foundation
@_spi(HearthInternals) import Hearth
import HearthRules
@_spi(HearthInternals) import HearthWire
import Synchronization

/// Runs the server's sans-I/O core (`ServerCore`, package-internal) for real: one lock around
/// the core, a commit thread that makes each batch of outputs durable in the server's store
/// (`AuthoritativeStore`: one commit, one fsync, for every connection that wrote meanwhile —
/// group commit) and then releases their messages in order, a timer for ticks, and async token
/// checks.
///
/// The release rule of `ServerCore` holds because outputs enter one FIFO under the same
/// lock that produced them, and the commit thread delivers a batch only after its commit
/// returned. Delivering hands each message to its connection's `Delivery`, which renders it
/// off the lock and off the commit thread (a short text known in advance, such as an `ok`, is
/// handed to the sink at once when nothing of its connection waits), in that connection's
/// order; decoding a message and parsing a REST body happen before the lock is taken. So the
/// lock is held for what must be ordered — access checks, applying writes, choosing whom a
/// write concerns — and work that grows with the data or with one connection's listens is paid
/// by that connection.
///
/// **A failed commit** (a full disk) does not stop the server: nothing of the failed batch or
/// of the outputs after it is released; the store is reopened to learn what it holds; the core
/// goes back to that data with writes suspended (`ServerCore.suspendWrites`)
/// and the connections that waited for the dropped outputs are closed (their clients reconnect
/// and send again). Reads go on; writes wait and are retried, with a growing interval, until a
/// commit succeeds.
public final class ServerRuntime: Sendable {
    /// One input's output on its way to the commit thread, with the weight it holds in the
    /// commit queue's ``CommitBudget`` (0 for what is not taken from a client's request: a
    /// connection opening or closing, a tick, a token check's result).
    enum Item: Sendable {
        case output(ServerOutput, weight: Int = 0)
        case rest(ServerOutput, RESTReply, @Sendable (RESTResponse) -> Void, weight: Int = 0)

        var output: ServerOutput {
            switch self {
            case .output(let o, _), .rest(let o, _, _, _): o
            }
        }

        var weight: Int {
            switch self {
            case .output(_, let w), .rest(_, _, _, let w): w
            }
        }
    }

    struct State: ~Copyable {
        var core: ServerCore
        var queue: [Item] = []
        /// The bound on ``queue`` (``ServerConfiguration/maxCommitQueueBytes``).
        var budget: CommitBudget
        /// Connections not read while they wait for room in the commit queue (``Parked``).
        var parked: [ConnectionID: Parked] = [:]
        var deliveries: [ConnectionID: Delivery] = [:]
        var stopped = false
        var failure: String?
        /// When writes are suspended: when to retry them (ms).
        var retryAt: Int64?
        /// The interval before the last retry (ms); doubled on each failure, up to
        /// ``maxRetryInterval``, and forgotten after a commit succeeds.
        var retryInterval: Int64 = 0
        /// The text of the security rules in force, when they came from a rules file (or
        /// `PUT /.settings/rules.json`); `nil` for the default policy.
        var rulesText: String?
        /// onDisconnect markers whose sessions the journal has ended: removed from the store
        /// in the next commit.
        var markersToRemove: [String] = []
        /// Sessions whose operations ran (their marker is in the store) but whose end the
        /// journal has not recorded yet (a failed commit dropped it): recorded next.
        var pendingEnded: [UInt64] = []
    }

    let state: Mutex<State>
    let wake = DispatchSemaphore(value: 0)
    let store: Mutex<AuthoritativeStore?>
    let reopen: (@Sendable (_ readOnly: Bool) throws(StoreError) -> AuthoritativeStore.Opened)?
    let verifier: any TokenVerifier
    /// Checks App Check tokens under ``ServerConfiguration/enforcesAppCheck`` (none:
    /// every App Check token is invalid).
    let appCheckVerifier: (any TokenVerifier)?
    /// ``ServerConfiguration/enforcesAppCheck``, for the REST adapter's token checks.
    let enforcesAppCheck: Bool
    let nextID = Atomic<UInt64>(1)
    let clock: @Sendable () -> Int64
    let done = DispatchSemaphore(value: 0)
    let commits = Atomic<Int>(0)
    let committedWrites = Atomic<Int>(0)
    let waitingTotal = SharedCount()
    /// The bounds rules installed through `PUT /.settings/rules.json` load and run within.
    let rulesLimits: RulesSet.Limits
    /// The onDisconnect journal (``OnDisconnectJournal``).
    let journal: OnDisconnectJournal

    /// Store commits made so far (each one fsync under full durability).
    public var commitCount: Int { commits.load(ordering: .relaxed) }
    /// Writes made durable so far; divided by ``commitCount``, the mean group-commit batch.
    public var committedWriteCount: Int { committedWrites.load(ordering: .relaxed) }

    /// A runtime over an open store: the core starts from the data the store opened with, after the
    /// onDisconnect operations of the connections open when the server last stopped (kept in
    /// the store directory's `ondisconnect/` journal) have run — before any client is served.
    /// - Parameters:
    ///   - opened: the database and its store; the runtime serves that data and commits every
    ///     write, with the data after it, to the store.
    ///   - configuration: the core's limits and modes.
    ///   - verifier: checks credentials, off the lock.
    ///   - appCheckVerifier: checks App Check tokens when the configuration enforces App Check
    ///     (``AppCheckVerifier``).
    ///   - policy: who may read and write what; ``DefaultAccessPolicy`` when nil.
    ///   - clock: milliseconds since 1970, for server timestamps, token expiry and timeouts.
    ///   - reopen: opens the store again (read-only when asked), after a commit failed:
    ///     without it, a failed commit stops the runtime (``failure``).
    ///   - rulesText: the rules file `policy` was made from, which `GET /.settings/rules.json`
    ///     answers with.
    ///   - rulesLimits: the bounds rules replaced through `PUT /.settings/rules.json` load and
    ///     run within.
    @_spi(HearthInternals) public init(
        store opened: AuthoritativeStore.Opened, configuration: ServerConfiguration, verifier: any TokenVerifier,
        appCheckVerifier: (any TokenVerifier)? = nil, policy: (any AccessPolicy)? = nil,
        clock: @escaping @Sendable () -> Int64 = Store.systemClock,
        reopen: (@Sendable (_ readOnly: Bool) throws(StoreError) -> AuthoritativeStore.Opened)? = nil,
        rulesText: String? = nil, rulesLimits: RulesSet.Limits = RulesSet.Limits()
    ) throws(StoreError) {
        let store = opened.store
        self.store = Mutex(store)
        self.rulesLimits = rulesLimits
        self.reopen = reopen
        self.verifier = verifier
        self.appCheckVerifier = appCheckVerifier
        enforcesAppCheck = configuration.enforcesAppCheck
        self.clock = clock
        let data = opened.data
        var system = SystemRandomNumberGenerator()
        let seed = system.next()
        var core = ServerCore(
            data: data, configuration: configuration, policy: policy, seed: seed,
            writerWatermarks: store.writerWatermarks())
        journal = try OnDisconnectJournal(
            directory: OnDisconnectJournal.directory(inStore: store.directory), fileSystem: store.options.fileSystem)
        try Self.recoverOnDisconnect(&core, store: store, journal: journal, now: clock())
        state = Mutex(
            State(core: core, budget: CommitBudget(limit: configuration.maxCommitQueueBytes), rulesText: rulesText))
        // Named from inside: on Linux, Foundation names the OS thread (what `top -H`, `perf`
        // and /proc show) only when the name is set on the thread itself.
        let thread = Thread { [self] in
            Thread.current.name = "hearth-commit"
            self.commitLoop()
        }
        thread.start()
    }

    /// Sets the host the hello names (`h`, where clients reconnect), once the port is known.
    public func setHost(_ host: String) {
        state.withLock { $0.core.configuration.host = host }
    }

    /// Open connections (WebSocket and event streams).
    public var connectionCount: Int { state.withLock { $0.core.connectionCount } }

    /// Why writes are suspended, if they are (a failed commit; they resume by themselves).
    public var writesSuspended: String? { state.withLock { $0.core.writesSuspended } }

    /// A fresh connection id.
    func makeID() -> ConnectionID { ConnectionID(nextID.add(1, ordering: .relaxed).oldValue) }

    /// Runs `body` on the core and queues the output it returns, under one lock. `weight` is
    /// room already taken in the commit queue for the input: it goes with the output, or is
    /// given back at once when there is none.
    @discardableResult
    func input<T>(weight: Int = 0, _ body: (inout ServerCore) -> (ServerOutput, T)) -> T? {
        var admitted: [ConnectionID] = []
        let result = state.withLock { s -> T? in
            guard !s.stopped else { return nil }
            let (out, result) = body(&s.core)
            admitted = s.enqueue(out, weight: weight)
            return result
        }
        wake.signal()
        resume(admitted)
        return result
    }

    func input(_ body: (inout ServerCore) -> ServerOutput) {
        input { core -> (ServerOutput, Void) in (body(&core), ()) }
    }

    /// A WebSocket connection opened.
    func connected(_ id: ConnectionID, sink: any ConnectionSink, host: String? = nil, lastSession: String? = nil) {
        let now = clock()
        let delivery = Delivery(sink: sink, total: waitingTotal)
        state.withLock { $0.deliveries[id] = delivery }
        input { $0.connect(id, now: now, host: host, lastSession: lastSession) }
    }

    /// A text frame arrived: assembled under the lock, a whole message decoded outside it and
    /// handled once it has room in the commit queue. Without room, the message and the frames
    /// after it are kept, the connection is no longer read (``ConnectionSink/setReading(_:)``)
    /// and waits its turn (``CommitBudget``).
    ///
    /// A frame that may be a whole message (it opens a JSON object; a segment count never
    /// does) is decoded before the lock, and when it is one and has room it is handled in the
    /// same lock section that assembled it: one section per message rather than two. A segment
    /// decoded that way is decoded again once its message is whole, and a message that waits
    /// for room again when it is let in — extra work bounded by the bytes received.
    func received(_ id: ConnectionID, _ frame: String) {
        let early = frame.utf8.first == UInt8(ascii: "{") ? ServerCore.decode(frame) : nil
        let now = clock()
        var admitted: [ConnectionID] = []
        let (step, sink) = state.withLock { s -> (Assembled, (any ConnectionSink)?) in
            guard !s.stopped else { return (.pending, nil) }
            if s.parked[id] != nil {
                s.parked[id]?.frames.append(frame)
                return (.pending, nil)
            }
            let step = assemble(id, frame, now: now, &s)
            if case let .taken(text, weight, true) = step, let early {
                let out = s.core.receive(id, message: early, bytes: text.utf8.count, now: now)
                admitted = s.enqueue(out, weight: weight)
                return (.pending, nil)
            }
            return (step, step == .waiting ? s.deliveries[id]?.sink : nil)
        }
        switch step {
        case .pending: wake.signal()
        case .waiting: sink?.setReading(false)
        case let .taken(text, weight, _): handle(id, text, weight: weight)
        }
        resume(admitted)
    }

    /// A connection closed (by the peer or by us).
    func closed(_ id: ConnectionID) {
        let now = clock()
        let admitted = state.withLock { s in unpark(id, &s) }
        resume(admitted)
        input { $0.disconnect(id, now: now) }
        state.withLock { _ = $0.deliveries.removeValue(forKey: id) }
    }

    /// Answers a REST request (after its writes are durable). The body is parsed here, before
    /// the lock. Answered `503` at once, with nothing applied, when the commit queue has no room
    /// for it (``CommitBudget``): an HTTP client retries, and no connection is kept waiting.
    func rest(_ request: RESTRequest, respond: @escaping @Sendable (RESTResponse) -> Void) {
        var request = request
        let weight = CommitBudget.weight(ofBytes: request.body?.utf8.count ?? 0)
        request.parseBody()
        let now = clock()
        state.withLock { s in
            guard !s.stopped else { return respond(.error(503, "the server is stopping")) }
            guard s.budget.take(weight) else {
                return respond(.error(503, "the server is busy: its commit queue is full; try again later"))
            }
            let (reply, out) = s.core.rest(request, now: now)
            s.queue.append(.rest(out, reply, respond, weight: weight))
        }
        wake.signal()
    }

    /// Opens an event stream, or answers the refusal.
    func openStream(
        _ request: RESTRequest, sink: any ConnectionSink, refuse: @escaping @Sendable (RESTResponse) -> Void
    ) -> ConnectionID? {
        let id = makeID()
        let now = clock()
        let delivery = Delivery(sink: sink, total: waitingTotal)
        let opened = state.withLock { s -> Bool in
            switch s.core.openEventStream(id, request, now: now) {
            case .success(let out):
                s.deliveries[id] = delivery
                s.queue.append(.output(out))
                return true
            case .failure(let response):
                s.queue.append(.rest(ServerOutput(), .ready(response), refuse))
                return false
            }
        }
        wake.signal()
        return opened ? id : nil
    }

    /// Resolves a REST request's credential to a principal and, under App Check enforcement,
    /// its App Check token to the token's expiry: an invalid or expired token is refused here
    /// (401), a missing one by the core. Without enforcement the App Check token is not read.
    func caller(credential: String?, override: String?, appCheck: String?) async -> Result<RESTCaller, RESTResponse> {
        let principal: Principal
        switch await self.principal(credential: credential, override: override) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let p): principal = p
        }
        guard enforcesAppCheck, let appCheck, !appCheck.isEmpty else {
            return .success(RESTCaller(principal: principal))
        }
        switch await appCheckVerifier?.check(appCheck, now: clock()) ?? .invalid("no App Check key") {
        case .valid(.user(let app)) where app.expiresAt != nil:
            return .success(RESTCaller(principal: principal, appCheckExpiresAt: app.expiresAt))
        case .expired: return .failure(.error(401, "App Check token is expired"))
        case .invalid(let why): return .failure(.error(401, "Invalid App Check token: \(why)"))
        case .valid: return .failure(.error(401, "Invalid App Check token: it has no expiry"))
        }
    }

    /// Resolves a REST request's credential to a principal.
    func principal(credential: String?, override: String?) async -> Result<Principal, RESTResponse> {
        guard let credential, !credential.isEmpty else { return .success(.unauthenticated) }
        switch await verifier.check(credential, now: clock()) {
        case .valid(let p):
            if p == .admin, let override {
                guard let json = try? JSONValue.parse(override) else {
                    return .failure(.error(400, "auth_variable_override must be JSON"))
                }
                return .success(Principal.override(json))
            }
            return .success(p)
        case .expired: return .failure(.error(401, "Auth token is expired"))
        case .invalid(let why): return .failure(.error(401, "Could not parse auth token: \(why)"))
        }
    }

    /// Ticks the core (idle timeouts, token expiry, keep-alives); wakes the commit thread,
    /// which retries suspended writes when their time has come.
    func tick() {
        let now = clock()
        input { $0.tick(now: now) }
    }

    /// Stops: closes every connection, lets the commit thread finish, closes nothing else
    /// (the caller closes the store). Stopping again returns at once.
    public func stop() {
        let deliveries = state.withLock { s -> [Delivery] in
            s.stopped = true
            return Array(s.deliveries.values)
        }
        wake.signal()
        // The commit thread signals `done` once, as it ends; signalled again here, every later
        // stop's wait returns at once instead of waiting for a thread that is gone.
        done.wait()
        done.signal()
        journal.close()
        for delivery in deliveries { delivery.close() }
        for delivery in deliveries { delivery.drain() }
    }

    /// Why the runtime stopped accepting writes for good, if it did (a failed commit with no
    /// way to reopen the store).
    public var failure: String? { state.withLock { $0.failure } }

    /// The data at `path` as the runtime serves it now: every write acknowledged so far, and any
    /// applied since whose commit is still on its way (tests and tools).
    package func servedValue(at path: Path) -> Node { state.withLock { $0.core.data.child(at: path) } }

    /// The store the runtime writes to now (it changes when a failed commit reopens it).
    @_spi(HearthInternals) public var currentStore: AuthoritativeStore? { store.withLock { $0 } }
}
