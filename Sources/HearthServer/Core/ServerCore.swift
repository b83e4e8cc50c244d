@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthWire

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
@_spi(HearthInternals) public struct ServerCore: Sendable {
    /// Limits and behaviour: the embedder's ``ServerConfiguration``.
    @_spi(HearthInternals) public typealias Configuration = ServerConfiguration

    /// The configuration (the runtime sets the host once the port is bound).
    package internal(set) var configuration: Configuration
    /// The database.
    package internal(set) var data: Node
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
    package internal(set) var writesSuspended: String?
    /// onDisconnect operations of connections that closed while writes were suspended, by
    /// session, in order: run when writes resume.
    var deferredOnDisconnect: [(session: UInt64, ops: [OnDisconnectOperation])] = []
    /// The open WebSocket connections by the session id their hello named (for `ls`).
    var sessions: [String: ConnectionID] = [:]
    /// The journal key the next connection gets (after those recovered at startup).
    var nextSession: UInt64 = 1
    /// Per writer, the highest write id applied (as durable as the data: loaded from the store).
    package internal(set) var writerWatermarks: [String: WriterWatermark]
    var pendingChecks: [UInt64: (ConnectionID, requestNumber: Int, override: JSONValue?)] = [:]
    /// App Check token checks in flight, by ticket (numbered with the auth checks).
    var pendingAppChecks: [UInt64: (ConnectionID, requestNumber: Int)] = [:]
    var nextCheck: UInt64 = 1
    var pushIDs = PushIDGenerator()
    var rng: SeededRandom
    /// The last time the core was told (ms since the epoch).
    package internal(set) var now: Int64 = 0

    /// A core over `data` (the database as stored).
    /// - Parameters:
    ///   - data: the database's root, as the store holds it.
    ///   - configuration: the limits and modes.
    ///   - policy: the access policy; by default ``DefaultAccessPolicy`` (allow all in
    ///     emulator mode).
    ///   - seed: seeds push-id randomness and session ids (the simulator fixes it).
    ///   - writerWatermarks: the store's writer watermarks (`Store.writerWatermarks()`), so
    ///     that writes applied before a restart are still recognised.
    @_spi(HearthInternals) public init(
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
    package var connectionCount: Int { connections.count }
}

/// A write the adapter must make durable (in the server's Hearth store) before the messages
/// returned with it go out.
package enum DurableWrite: Sendable, Equatable {
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
    package mutating func apply(_ write: DurableWrite) throws(StoreError) {
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
    package mutating func apply(_ write: DurableWrite) throws(StoreError) {
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
package struct TokenCheckRequest: Sendable, Equatable {
    /// Pass back with the result.
    package let ticket: UInt64
    /// The credential.
    package let credential: String
    /// Whether it came as `auth` (a JWT) rather than `gauth`.
    package let isJWT: Bool
    /// Whether it is an App Check token (`appcheck`), for the App Check verifier, rather than
    /// an auth credential.
    package var isAppCheck = false
}

/// What the core asks the adapter to do after one input. See the release rule on
/// ``ServerCore``.
@_spi(HearthInternals) public struct ServerOutput: Sendable {
    /// Writes to make durable before anything else in this output is released.
    package var writes: [DurableWrite] = []
    /// Messages, in order: WebSocket message texts (to split with `FrameSplitter`) or, for
    /// event streams, whole Server-Sent Events — each rendered by the adapter when it delivers
    /// it (``OutboundMessage``).
    package var messages: [(ConnectionID, OutboundMessage)] = []
    /// Connections to close after their messages are sent.
    package var closes: [ConnectionID] = []
    /// Credentials to check.
    package var tokenChecks: [TokenCheckRequest] = []
    /// Changes to the onDisconnect journal, made durable after ``writes`` and before the
    /// messages (``ServerRuntime`` keeps the journal).
    var onDisconnect: [OnDisconnectChange] = []

    /// Nothing to do.
    package init() {}

    /// Whether there is nothing to do.
    package var isEmpty: Bool {
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
    @_spi(HearthInternals) public func renderedMessages() -> [(ConnectionID, String)] {
        messages.compactMap { id, m in m.render().map { (id, $0) } }
    }

    /// Appends another output's work after this one's.
    package mutating func append(_ other: ServerOutput) {
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
package struct OutboundMessage: Sendable {
    private let make: @Sendable () -> String?
    /// What the message may keep alive until it is rendered, in bytes, beyond a small fixed
    /// cost: the size of the request whose write it pushes (the data as it was before later
    /// writes replaced it), or of its text. What the adapter counts against its limits on
    /// messages waiting to be delivered.
    package let weight: Int
    /// The text, when it was known as the message was made (nothing to render).
    package let text: String?

    init(weight: Int, _ make: @escaping @Sendable () -> String?) {
        self.weight = weight
        self.make = make
        text = nil
    }

    private init(text: String) {
        weight = text.utf8.count
        make = { text }
        self.text = text
    }

    /// A message whose text is known.
    package static func text(_ text: String) -> OutboundMessage { OutboundMessage(text: text) }

    /// The text to send, or `nil` when there is nothing to send.
    package func render() -> String? { make() }
}
