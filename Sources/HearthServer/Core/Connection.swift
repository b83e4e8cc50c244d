import HearthWire

/// One client's state in the core: a WebSocket connection or a REST event stream.
struct Connection: Sendable {
    enum Kind: Sendable {
        /// Protocol v5 over a WebSocket.
        case webSocket(FrameAssembler)
        /// `Accept: text/event-stream`: one listen, events formatted as Server-Sent Events.
        case eventStream
    }

    var kind: Kind
    var principal: Principal
    /// Listens by location (path and query): at most one per location, as in Firebase.
    var listens: [ListenKey: Listen] = [:]
    /// onDisconnect operations, in the order queued.
    var onDisconnect: [OnDisconnectOperation] = []
    /// When the peer was last heard from (ms).
    var lastHeard: Int64
    /// When an event stream last got anything (ms).
    var lastSent: Int64
    /// The token check this connection waits for; messages queue meanwhile.
    var awaitingTicket: UInt64?
    var queued: [String] = []

    var isEventStream: Bool {
        if case .eventStream = kind { return true }
        return false
    }
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
}

/// A queued onDisconnect operation (server values resolved when it runs).
struct OnDisconnectOperation: Sendable {
    enum Action: Sendable {
        case set(Node)
        case merge([(path: Path, node: Node)])
    }
    let path: Path
    let action: Action

    /// The operation as children of ``path`` (a set is one child at the empty path).
    var children: [(path: Path, node: Node)] {
        switch action {
        case .set(let node): [(.root, node)]
        case .merge(let children): children
        }
    }
}
