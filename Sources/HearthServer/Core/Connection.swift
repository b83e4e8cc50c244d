@_spi(HearthInternals) import HearthWire

/// One client's state in the core: a WebSocket connection or a REST event stream.
///
/// The core keeps one per open connection, in a dictionary, so its size is paid by every idle
/// connection (times the dictionary's spare capacity): what most connections never set —
/// onDisconnect operations, a message being assembled from frames, a token check or App Check
/// expiry, messages queued while waiting — lives in ``Details``, on the heap, allocated the
/// first time one of them is set to something other than its default.
struct Connection: Sendable {
    enum Kind: Sendable {
        /// Protocol v5 over a WebSocket.
        case webSocket(FrameAssembler)
        /// `Accept: text/event-stream`: one listen, events formatted as Server-Sent Events.
        case eventStream
    }

    var kind: Kind
    var principal: Principal
    /// The session id its hello named (`s`), which a reconnecting client sends back as `ls`.
    var sessionID: String = ""
    /// The key its onDisconnect operations are journaled under: unique for the server's life
    /// and past restarts (``ServerCore/nextSession``).
    var session: UInt64 = 0
    /// Listens by location (path and query): at most one per location, as in Firebase.
    var listens: [ListenKey: Listen] = [:]
    /// When the peer was last heard from (ms).
    var lastHeard: Int64
    /// When an event stream last got anything (ms).
    var lastSent: Int64
    /// The rest, shared until changed (copy on write); nil while all of it is at its default.
    private var details: DetailsBox?

    init(
        kind: Kind, principal: Principal, sessionID: String = "", session: UInt64 = 0, lastHeard: Int64, lastSent: Int64
    ) {
        self.kind = kind
        self.principal = principal
        self.sessionID = sessionID
        self.session = session
        self.lastHeard = lastHeard
        self.lastSent = lastSent
    }

    /// What a connection holds only while it uses a feature.
    struct Details: Sendable {
        var onDisconnect: [OnDisconnectOperation] = []
        var assemblingSince: Int64?
        var assemblingBytes = 0
        var appCheckExpiresAt: Int64?
        var awaitingTicket: UInt64?
        var awaitingWrites = false
        var queued: [(message: Result<ClientMessage, WireError>, bytes: Int)] = []
        var queuedBytes = 0
    }

    /// ``Details`` on the heap. Mutated only while uniquely referenced (``detail``'s `_modify`
    /// copies it first otherwise), so a value shared between copies of a connection never
    /// changes: the same discipline as the standard library's own buffers.
    private final class DetailsBox: @unchecked Sendable {
        var value: Details
        init(_ value: Details) { self.value = value }
    }

    private var detail: Details {
        get { details?.value ?? Details() }
        _modify {
            if details == nil {
                details = DetailsBox(Details())
            } else if !isKnownUniquelyReferenced(&details!) {
                details = DetailsBox(details!.value)
            }
            yield &details!.value
        }
    }

    /// onDisconnect operations, in the order queued.
    var onDisconnect: [OnDisconnectOperation] {
        get { detail.onDisconnect }
        _modify { yield &detail.onDisconnect }
    }
    /// When the first frame of the multi-frame message being received arrived (ms).
    var assemblingSince: Int64? {
        get { detail.assemblingSince }
        set { if details != nil || newValue != nil { detail.assemblingSince = newValue } }
    }
    /// The bytes the assembler held when last counted against ``Budget/heldBytes``.
    var assemblingBytes: Int {
        get { detail.assemblingBytes }
        set { if details != nil || newValue != 0 { detail.assemblingBytes = newValue } }
    }
    /// When the connection's App Check token expires (ms), if it sent a valid one (enforced
    /// only under ``ServerConfiguration/enforcesAppCheck``).
    var appCheckExpiresAt: Int64? {
        get { detail.appCheckExpiresAt }
        set { if details != nil || newValue != nil { detail.appCheckExpiresAt = newValue } }
    }
    /// The token check this connection waits for; messages queue meanwhile.
    var awaitingTicket: UInt64? {
        get { detail.awaitingTicket }
        set { if details != nil || newValue != nil { detail.awaitingTicket = newValue } }
    }
    /// Whether the connection waits for writes to resume (it sent a write while they were
    /// suspended); messages queue meanwhile.
    var awaitingWrites: Bool {
        get { detail.awaitingWrites }
        set { if details != nil || newValue { detail.awaitingWrites = newValue } }
    }
    /// Messages received while the connection waits, decoded, with their sizes.
    var queued: [(message: Result<ClientMessage, WireError>, bytes: Int)] {
        get { detail.queued }
        _modify { yield &detail.queued }
    }
    /// The sum of ``queued``'s sizes.
    var queuedBytes: Int {
        get { detail.queuedBytes }
        set { if details != nil || newValue != 0 { detail.queuedBytes = newValue } }
    }

    var isEventStream: Bool {
        if case .eventStream = kind { return true }
        return false
    }

    /// Whether messages must queue rather than be handled now.
    var isWaiting: Bool { details.map { $0.value.awaitingTicket != nil || $0.value.awaitingWrites } ?? false }

    /// The bytes of its onDisconnect operations.
    var onDisconnectBytes: Int { onDisconnect.reduce(0) { $0 + $1.bytes } }
}

/// What all connections hold, against the totals in ``ServerCore/Configuration``.
///
/// Invariant (``ServerCore/checkBudget()``): each figure is the sum over the open connections
/// (and, for onDisconnect bytes, the operations deferred until writes resume).
struct Budget: Sendable, Equatable {
    /// Listens held.
    var listens = 0
    /// Bytes of partly assembled messages and of messages queued while connections wait.
    var heldBytes = 0
    /// Bytes of queued onDisconnect operations.
    var onDisconnectBytes = 0
}

/// Where a listen is: path and query.
struct ListenKey: Hashable, Sendable {
    let path: Path
    let query: QuerySpec
}

/// A granted listen.
struct Listen: Sendable {
    let path: Path
    let query: QuerySpec
    /// The tag a non-default query was listened with; pushes for it carry it.
    let tag: Int?
    /// `query.identifier`, made once: listens are sorted by (path, identifier) under the core's
    /// lock for every write that reaches them, and making the identifier is an encoding.
    let queryIdentifier: String

    init(path: Path, query: QuerySpec, tag: Int?) {
        self.path = path
        self.query = query
        self.tag = tag
        self.queryIdentifier = query.identifier
    }

    /// The order listens are visited in, so that the same input gives the same output, message
    /// for message (the simulator replays seeds by it).
    static func inOrder(_ a: Listen, _ b: Listen) -> Bool {
        (a.path, a.queryIdentifier) < (b.path, b.queryIdentifier)
    }
}

/// A queued onDisconnect operation, kept as the JSON it was written with: server values
/// (priorities too) are resolved when it runs, against the data and the time then.
struct OnDisconnectOperation: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case set(JSONValue)
        case merge([MergeChild])
    }
    /// One child of a merge, its path relative to the operation's.
    struct MergeChild: Sendable, Equatable {
        let path: Path
        let value: JSONValue
    }
    let path: Path
    let action: Action
    /// Who registered it: it runs as them, checked against the rules again when it runs.
    let principal: Principal
    /// The size of the message that queued it (what it counts against the budgets).
    let bytes: Int
}
