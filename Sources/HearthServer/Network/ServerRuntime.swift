import Dispatch
import Foundation
import Hearth
import HearthWire
import Synchronization

/// Where the runtime delivers a connection's messages: a WebSocket or an event stream.
protocol ConnectionSink: Sendable {
    /// Sends one message (a protocol message, split into frames by the sink, or an event).
    func send(_ text: String)
    /// Closes the connection after what was sent.
    func close()
}

/// Runs a ``ServerCore`` for real: one lock around the core, a commit thread that makes each
/// batch of outputs durable in the Hearth store (one commit, one fsync, for every connection
/// that wrote meanwhile — group commit) and then releases their messages in order, a timer
/// for ticks, and async token checks.
///
/// The release rule of ``ServerCore`` holds because outputs enter one FIFO under the same
/// lock that produced them, and the commit thread delivers a batch only after its commit
/// returned.
public final class ServerRuntime: Sendable {
    enum Item: Sendable {
        case output(ServerOutput)
        case rest(ServerOutput, RESTResponse, @Sendable (RESTResponse) -> Void)
    }

    struct State: ~Copyable {
        var core: ServerCore
        var queue: [Item] = []
        var sinks: [ConnectionID: any ConnectionSink] = [:]
        var stopped = false
        var failure: String?
    }

    let state: Mutex<State>
    let wake = DispatchSemaphore(value: 0)
    let store: Store
    let verifier: any TokenVerifier
    let nextID = Atomic<UInt64>(1)
    let clock: @Sendable () -> Int64
    let done = DispatchSemaphore(value: 0)
    let commits = Atomic<Int>(0)
    let committedWrites = Atomic<Int>(0)

    /// Store commits made so far (each one fsync under full durability).
    public var commitCount: Int { commits.load(ordering: .relaxed) }
    /// Writes made durable so far; divided by ``commitCount``, the mean group-commit batch.
    public var committedWriteCount: Int { committedWrites.load(ordering: .relaxed) }

    /// A runtime over an open store: the core starts from the store's data.
    public init(
        store: Store, configuration: ServerCore.Configuration, verifier: any TokenVerifier,
        policy: (any AccessPolicy)? = nil, clock: @escaping @Sendable () -> Int64 = Store.systemClock
    ) throws(StoreError) {
        self.store = store
        self.verifier = verifier
        self.clock = clock
        let data = try store.serverValue(at: .root)
        var system = SystemRandomNumberGenerator()
        let seed = system.next()
        let core = ServerCore(
            data: data, configuration: configuration, policy: policy, seed: seed,
            writerWatermarks: store.writerWatermarks())
        state = Mutex(State(core: core))
        let thread = Thread { [self] in self.commitLoop() }
        thread.name = "hearth-commit"
        thread.start()
    }

    /// Sets the host the hello names (`h`, where clients reconnect), once the port is known.
    public func setHost(_ host: String) {
        state.withLock { $0.core.configuration.host = host }
    }

    /// The outbound limit per connection (``ServerCore/Configuration/maxBufferedBytesPerConnection``).
    var maxBufferedBytes: Int { state.withLock { $0.core.configuration.maxBufferedBytesPerConnection } }

    /// Open connections (WebSocket and event streams).
    public var connectionCount: Int { state.withLock { $0.core.connectionCount } }

    /// A fresh connection id.
    func makeID() -> ConnectionID { ConnectionID(nextID.add(1, ordering: .relaxed).oldValue) }

    /// Runs `body` on the core and queues what it returns, under one lock.
    func input(_ body: (inout ServerCore) -> ServerOutput) {
        state.withLock { s in
            guard !s.stopped else { return }
            let out = body(&s.core)
            if !out.isEmpty { s.queue.append(.output(out)) }
        }
        wake.signal()
    }

    /// A WebSocket connection opened.
    func connected(_ id: ConnectionID, sink: any ConnectionSink) {
        let now = clock()
        state.withLock { $0.sinks[id] = sink }
        input { $0.connect(id, now: now) }
    }

    /// A text frame arrived.
    func received(_ id: ConnectionID, _ frame: String) {
        let now = clock()
        input { $0.receive(id, frame: frame, now: now) }
    }

    /// A connection closed (by the peer or by us).
    func closed(_ id: ConnectionID) {
        let now = clock()
        input { $0.disconnect(id, now: now) }
        state.withLock { _ = $0.sinks.removeValue(forKey: id) }
    }

    /// Answers a REST request (after its writes are durable).
    func rest(_ request: RESTRequest, respond: @escaping @Sendable (RESTResponse) -> Void) {
        let now = clock()
        state.withLock { s in
            guard !s.stopped else { return respond(.error(503, "the server is stopping")) }
            let (response, out) = s.core.rest(request, now: now)
            s.queue.append(.rest(out, response, respond))
        }
        wake.signal()
    }

    /// Opens an event stream, or answers the refusal.
    func openStream(
        _ request: RESTRequest, sink: any ConnectionSink, refuse: @escaping @Sendable (RESTResponse) -> Void
    ) -> ConnectionID? {
        let id = makeID()
        let now = clock()
        let opened = state.withLock { s -> Bool in
            switch s.core.openEventStream(id, request, now: now) {
            case .success(let out):
                s.sinks[id] = sink
                s.queue.append(.output(out))
                return true
            case .failure(let response):
                s.queue.append(.rest(ServerOutput(), response, refuse))
                return false
            }
        }
        wake.signal()
        return opened ? id : nil
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

    /// Ticks the core (idle timeouts, token expiry, keep-alives).
    func tick() {
        let now = clock()
        input { $0.tick(now: now) }
    }

    /// Stops: closes every connection, lets the commit thread finish, closes nothing else
    /// (the caller closes the store).
    public func stop() {
        let sinks = state.withLock { s -> [any ConnectionSink] in
            s.stopped = true
            return Array(s.sinks.values)
        }
        wake.signal()
        done.wait()
        for sink in sinks { sink.close() }
    }

    /// Why the runtime stopped accepting writes, if it did (a failed commit).
    public var failure: String? { state.withLock { $0.failure } }

    func commitLoop() {
        while true {
            wake.wait()
            let (items, stopped) = state.withLock { s -> ([Item], Bool) in
                defer { s.queue.removeAll(keepingCapacity: true) }
                return (s.queue, s.stopped)
            }
            if !items.isEmpty { release(items) }
            if stopped && state.withLock({ $0.queue.isEmpty }) {
                done.signal()
                return
            }
        }
    }

    /// Commits every write of the batch in one store commit, then delivers in order.
    func release(_ items: [Item]) {
        var writes: [DurableWrite] = []
        for item in items {
            switch item {
            case .output(let o): writes += o.writes
            case .rest(let o, _, _): writes += o.writes
            }
        }
        if !writes.isEmpty {
            do {
                try store.commit { (batch: inout StoreBatch) throws(StoreError) in
                    for w in writes { try batch.apply(w) }
                }
                commits.add(1, ordering: .relaxed)
                committedWrites.add(writes.count, ordering: .relaxed)
            } catch {
                // Nothing of this batch was acknowledged; the server stops rather than
                // answer from data it could not make durable.
                let reason = "the database could not be written: \(error)"
                let sinks = state.withLock { s -> [any ConnectionSink] in
                    s.failure = reason
                    s.stopped = true
                    return Array(s.sinks.values)
                }
                FileHandle.standardError.write(Data("hearth serve: \(reason); stopping\n".utf8))
                for item in items { if case .rest(_, _, let respond) = item { respond(.error(503, reason)) } }
                for sink in sinks { sink.close() }
                return
            }
        }
        for item in items {
            switch item {
            case .output(let o): deliver(o)
            case .rest(let o, let response, let respond):
                deliver(o)
                respond(response)
            }
        }
    }

    func deliver(_ out: ServerOutput) {
        let sinks = state.withLock { $0.sinks }
        for (id, text) in out.messages { sinks[id]?.send(text) }
        for id in out.closes { sinks[id]?.close() }
        for check in out.tokenChecks {
            Task { [self] in
                let result = await verifier.check(check.credential, now: clock())
                let now = clock()
                input { $0.tokenChecked(check.ticket, result, now: now) }
            }
        }
    }
}
