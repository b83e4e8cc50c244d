import Hearth
import HearthWire

/// The server's protocol logic as a state machine, with no I/O (sans-I/O).
///
/// It is fed connection events, decoded frames, REST requests, token-check results and clock
/// ticks, and answers each with a ``ServerOutput``: the messages to send, the writes to make
/// durable, the connections to close and the tokens to check. It owns the database tree in
/// memory; the adapter (``ServerRuntime``) owns sockets and the store.
///
/// **The release rule** (the adapter relies on it, the simulator checks it): an output's
/// ``ServerOutput/writes`` must be durable before any of its messages are delivered, and
/// outputs are delivered in the order they were returned. So nothing leaves the server that
/// depends on a write a crash could still lose — not the writer's `ok`, and not the pushes
/// other listeners see.
///
/// Not thread-safe: one caller at a time (the runtime holds it under a lock).
public struct ServerCore: Sendable {
    /// Limits and behaviour.
    public struct Configuration: Sendable {
        /// The host name sent in the hello (`h`), which clients reconnect to, when neither
        /// ``publicHost`` nor the connection's own `Host` header names one: the bound address.
        public var host: String = "127.0.0.1"
        /// The host (and port) clients should reconnect to, sent in every hello (`h`):
        /// `hearth serve --public-host`, for a server behind a proxy or a name. Nil: the `Host`
        /// the client connected with.
        public var publicHost: String? = nil
        /// Emulator mode: unsigned tokens and `owner` accepted; the default policy allows all.
        public var emulator: Bool = false
        /// App Check enforcement (`hearth serve --app-check-key-file`, a test mode of
        /// Firebase's): a WebSocket connection's reads and writes are refused
        /// (`permission_denied`) until it sends a valid App Check token (`appcheck`; checked by
        /// the runtime's App Check verifier), an invalid one shuts the connection down
        /// (`Invalid appcheck token`), and one that expires is revoked (`apc`). Off: `appcheck`
        /// and `unappcheck` are acknowledged and nothing is enforced.
        public var enforcesAppCheck: Bool = false
        /// The largest WebSocket message accepted, in UTF-8 bytes (Firebase's SDKs write at
        /// most 16 MB at once).
        public var maxMessageBytes: Int = 16 << 20
        /// The largest REST request body, in bytes (Firebase allows 256 MB; this server holds
        /// its database in memory, so less).
        public var maxRESTBodyBytes: Int = 64 << 20
        /// Listens one connection may hold.
        public var maxListensPerConnection: Int = 10_000
        /// Listens across all connections (each a path, a query and a tag: about 200 bytes).
        public var maxListensTotal: Int = 1_000_000
        /// onDisconnect operations one connection may queue.
        public var maxOnDisconnectPerConnection: Int = 10_000
        /// The bytes of onDisconnect operations one connection may queue (as the messages that
        /// queued them measured).
        public var maxOnDisconnectBytesPerConnection: Int = 16 << 20
        /// The bytes of onDisconnect operations queued across all connections.
        public var maxOnDisconnectBytesTotal: Int = 256 << 20
        /// Messages one connection may send while it waits (for its token to be checked, or for
        /// writes to resume after a failed commit).
        public var maxQueuedWhileAuthenticating: Int = 1_000
        /// The bytes one connection may send while it waits (as
        /// ``maxQueuedWhileAuthenticating``, counted in UTF-8 bytes).
        public var maxQueuedBytesPerConnection: Int = 16 << 20
        /// The bytes the core holds for messages not yet handled, across all connections: the
        /// frames of multi-frame messages still being received, and messages queued while their
        /// connection waits. A connection whose frame would pass it is refused (single-frame
        /// messages are never held, so small requests still get through).
        public var maxHeldBytesTotal: Int = 256 << 20
        /// A multi-frame message must be complete this long (ms) after its first frame, or the
        /// connection is refused (a slow sender cannot hold a partial message forever).
        public var partialMessageTimeoutMs: Int64 = 60_000
        /// A WebSocket connection that sends nothing for this long (ms) is closed and its
        /// onDisconnect operations run (clients send the keepalive `"0"` every 45 s).
        public var idleTimeoutMs: Int64 = 120_000
        /// The most bytes queued to one client that does not read its socket before the
        /// server disconnects it (rather than buffer without bound).
        public var maxBufferedBytesPerConnection: Int = 64 << 20
        /// The most bytes of messages waiting to be rendered for one connection (each push
        /// weighs the request that caused it, ``OutboundMessage/weight``) before the server
        /// disconnects it: a connection whose pushes cost more to render than writes arrive
        /// cannot pin every version of the data they were made from.
        public var maxWaitingBytesPerConnection: Int = 64 << 20
        /// The most bytes of messages waiting to be rendered across all connections; past it,
        /// the connection with the most waiting is disconnected.
        public var maxWaitingBytesTotal: Int = 512 << 20
        /// The most bytes of WebSocket messages and REST requests (their UTF-8 text, plus 256
        /// bytes each) taken in and not yet committed and released by ``ServerRuntime``'s commit
        /// thread. A message that finds no room waits, first come first served, and its
        /// connection is not read meanwhile; a REST request is answered `503`. One message larger
        /// than the bound is taken alone into an empty queue.
        public var maxCommitQueueBytes: Int = 64 << 20
        /// How often an event stream gets a `keep-alive` event (ms).
        public var keepAliveIntervalMs: Int64 = 30_000
        /// The most writers whose watermark the server remembers for exactly-once writes
        /// (`WriteStamp`). When a new writer would exceed it, the least recently advanced
        /// sixteenth of the table (at least one) is evicted, durably; an evicted writer's
        /// re-sent writes are applied again (plain at-least-once, as in Firebase). About 100
        /// bytes each in memory and in the store's checkpoint.
        public var maxWriters: Int = 100_000
        /// Offer exactly-once writes in the hello (`"x": ["w"]`). Off, the server speaks plain
        /// protocol v5 and ignores stamps.
        public var exactlyOnceWrites: Bool = true
        /// The default configuration.
        public init() {}
    }

    /// The configuration (the runtime sets the host once the port is bound).
    public internal(set) var configuration: Configuration
    /// The database.
    public internal(set) var data: Node
    /// Who decides reads and writes.
    var policy: any AccessPolicy

    var connections: [ConnectionID: Connection] = [:]
    /// The connections that hold at least one listen: a write visits these, so idle
    /// connections cost it nothing (`notify`). Invariant: exactly the ids in ``connections``
    /// whose `listens` is not empty (checked by ``checkBudget()``).
    var listening: Set<ConnectionID> = []
    /// What all connections hold against the totals in ``Configuration`` (`Budget`).
    var held = Budget()
    /// Why writes are suspended (a failed commit), if they are: see ``suspendWrites(_:durable:writerWatermarks:)``.
    public internal(set) var writesSuspended: String?
    /// onDisconnect operations of connections that closed while writes were suspended, by
    /// session, in order: run when writes resume.
    var deferredOnDisconnect: [(session: UInt64, ops: [OnDisconnectOperation])] = []
    /// The open WebSocket connections by the session id their hello named (for `ls`).
    var sessions: [String: ConnectionID] = [:]
    /// The journal key the next connection gets (after those recovered at startup).
    var nextSession: UInt64 = 1
    /// Per writer, the highest write id applied (as durable as the data: loaded from the store).
    public internal(set) var writerWatermarks: [String: WriterWatermark]
    var pendingChecks: [UInt64: (ConnectionID, requestNumber: Int, override: JSONValue?)] = [:]
    /// App Check token checks in flight, by ticket (numbered with the auth checks).
    var pendingAppChecks: [UInt64: (ConnectionID, requestNumber: Int)] = [:]
    var nextCheck: UInt64 = 1
    var pushIDs = PushIDGenerator()
    var rng: SeededRandom
    /// The last time the core was told (ms since the epoch).
    public internal(set) var now: Int64 = 0

    /// A core over `data` (the database as stored).
    /// - Parameters:
    ///   - data: the database's root, as the store holds it.
    ///   - configuration: the limits and modes.
    ///   - policy: the access policy; by default ``DefaultAccessPolicy`` (allow all in
    ///     emulator mode).
    ///   - seed: seeds push-id randomness and session ids (the simulator fixes it).
    ///   - writerWatermarks: the store's writer watermarks (`Store.writerWatermarks()`), so
    ///     that writes applied before a restart are still recognised.
    public init(
        data: Node, configuration: Configuration = Configuration(), policy: (any AccessPolicy)? = nil, seed: UInt64,
        writerWatermarks: [String: WriterWatermark] = [:]
    ) {
        self.data = data
        self.writerWatermarks = Self.clientWatermarks(writerWatermarks)
        self.configuration = configuration
        self.policy = policy ?? DefaultAccessPolicy(allowAll: configuration.emulator)
        self.rng = SeededRandom(seed: seed)
    }

    mutating func random() -> UInt64 { rng.next() }

    /// The number of open connections (WebSocket and event streams).
    public var connectionCount: Int { connections.count }
}

/// A write the adapter must make durable (in the server's Hearth store) before the messages
/// returned with it go out.
public enum DurableWrite: Sendable, Equatable {
    /// The data at `path` is now `node` (resolved: no server values).
    case set(Path, Node)
    /// These children (paths relative to `path`) are now these nodes.
    case merge(Path, [ChildUpdate])
    /// The writer's writes up to this id are applied (in the same commit as the write).
    case writerWatermark(writer: String, id: Int64)
    /// These writers' watermarks are forgotten (the table's bound).
    case writerWatermarksRemoved([String])
}

extension StoreBatch {
    /// Records a ``DurableWrite`` (what ``ServerRuntime`` and test harnesses commit).
    /// - Throws: `StoreError` for an invalid path, data or writer id.
    public mutating func apply(_ write: DurableWrite) throws(StoreError) {
        switch write {
        case let .set(path, node): try applyServerOverwrite(node, at: path)
        case let .merge(path, children): try applyServerMerge(children, at: path)
        case let .writerWatermark(writer, id): try recordWriterWatermark(writer, id: id)
        case .writerWatermarksRemoved(let writers): try removeWriterWatermarks(writers)
        }
    }
}

extension AuthoritativeBatch {
    /// Records a ``DurableWrite`` (what ``ServerRuntime`` commits).
    /// - Throws: `StoreError` for an invalid path, data or writer id.
    public mutating func apply(_ write: DurableWrite) throws(StoreError) {
        switch write {
        case let .set(path, node): try overwrite(node, at: path)
        case let .merge(path, children): try merge(children, at: path)
        case let .writerWatermark(writer, id): try recordWriterWatermark(writer, id: id)
        case .writerWatermarksRemoved(let writers): try removeWriterWatermarks(writers)
        }
    }
}

/// A credential the adapter must check (asynchronously), then report with
/// ``ServerCore/tokenChecked(_:_:now:)``. The connection's later messages wait for it.
public struct TokenCheckRequest: Sendable, Equatable {
    /// Pass back with the result.
    public let ticket: UInt64
    /// The credential.
    public let credential: String
    /// Whether it came as `auth` (a JWT) rather than `gauth`.
    public let isJWT: Bool
    /// Whether it is an App Check token (`appcheck`), for the App Check verifier, rather than
    /// an auth credential.
    public var isAppCheck = false
}

/// What the core asks the adapter to do after one input. See the release rule on
/// ``ServerCore``.
public struct ServerOutput: Sendable {
    /// Writes to make durable before anything else in this output is released.
    public var writes: [DurableWrite] = []
    /// Messages, in order: WebSocket message texts (to split with `FrameSplitter`) or, for
    /// event streams, whole Server-Sent Events — each rendered by the adapter when it delivers
    /// it (``OutboundMessage``).
    public var messages: [(ConnectionID, OutboundMessage)] = []
    /// Connections to close after their messages are sent.
    public var closes: [ConnectionID] = []
    /// Credentials to check.
    public var tokenChecks: [TokenCheckRequest] = []
    /// Changes to the onDisconnect journal, made durable after ``writes`` and before the
    /// messages (``ServerRuntime`` keeps the journal).
    var onDisconnect: [OnDisconnectChange] = []

    /// Nothing to do.
    public init() {}

    /// Whether there is nothing to do.
    public var isEmpty: Bool {
        writes.isEmpty && messages.isEmpty && closes.isEmpty && tokenChecks.isEmpty && onDisconnect.isEmpty
    }

    mutating func send(_ id: ConnectionID, _ message: ServerMessage) { messages.append((id, .text(message.text))) }

    /// Queues a message rendered at delivery, from values captured now; `weight` as
    /// ``OutboundMessage/weight``.
    mutating func send(_ id: ConnectionID, weight: Int = 0, rendering: @escaping @Sendable () -> String?) {
        messages.append((id, OutboundMessage(weight: weight, rendering)))
    }

    /// The messages rendered now, in order, without those that render to nothing (tests and
    /// simulations, which deliver synchronously).
    public func renderedMessages() -> [(ConnectionID, String)] {
        messages.compactMap { id, m in m.render().map { (id, $0) } }
    }

    /// Appends another output's work after this one's.
    public mutating func append(_ other: ServerOutput) {
        writes += other.writes
        messages += other.messages
        closes += other.closes
        tokenChecks += other.tokenChecks
        onDisconnect += other.onDisconnect
    }
}

/// One message for one connection. Its text is rendered by whoever delivers it, after the
/// output's writes are durable and outside the lock the core runs under: a push of a large
/// value, a query's window, a hash comparison or a read's answer costs the connection that
/// asked for it, not every request waiting for the core.
///
/// Rendering is a pure function of immutable values (`Node`s are persistent) captured when
/// the core produced the output, so it gives the same text whenever and wherever it runs. It
/// may render to nothing: a filtered query's window that the write did not change, a listen
/// whose data the client already has.
public struct OutboundMessage: Sendable {
    private let make: @Sendable () -> String?
    /// What the message may keep alive until it is rendered, in bytes, beyond a small fixed
    /// cost: the size of the request whose write it pushes (the data as it was before later
    /// writes replaced it), or of its text. What the adapter counts against its limits on
    /// messages waiting to be delivered.
    public let weight: Int

    init(weight: Int, _ make: @escaping @Sendable () -> String?) {
        self.weight = weight
        self.make = make
    }

    /// A message whose text is known.
    public static func text(_ text: String) -> OutboundMessage { OutboundMessage(weight: text.utf8.count) { text } }

    /// The text to send, or `nil` when there is nothing to send.
    public func render() -> String? { make() }
}
