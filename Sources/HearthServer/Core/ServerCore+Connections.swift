import Hearth
@_spi(HearthInternals) import HearthWire

// A WebSocket connection's life: the hello, frames assembled into messages (held within the
// budgets), the close with its onDisconnect operations, and the clock's effects (idle and
// partial-message timeouts, token expiry, event-stream keep-alives).

/// What one received frame amounts to (``ServerCore/receiveFrame(_:_:now:)``).
package enum FrameOutcome: Sendable {
    /// Nothing to decode yet (a segment, a keepalive) or the connection was refused: the
    /// output says what to do.
    case pending(ServerOutput)
    /// A whole message, to decode (off the core's lock) and pass to
    /// ``ServerCore/receive(_:message:bytes:now:)``; `isFrame` when it is the frame itself
    /// rather than assembled from segments (a decode of the frame made before is its decode).
    case complete(String, isFrame: Bool)
}

extension ServerCore {
    /// A WebSocket connection opened: the hello goes first.
    /// - Parameter id: the new connection's id (unique for the server's life).
    /// - Parameter now: the server's clock, in milliseconds since the epoch.
    /// - Parameter host: the `Host` header the WebSocket upgrade came with: where the client
    ///   found this server, so where it should reconnect (the hello's `h`) unless
    ///   ``ServerConfiguration/publicHost`` says otherwise. Not a host name and port (or too long):
    ///   ignored, and the bound address is sent.
    /// - Parameter lastSession: the `ls` of the upgrade's URL: the session id (`s`) of the hello
    ///   a reconnecting client had before. That connection, if still open, is closed and its
    ///   onDisconnect operations run first (`endStaleSession(_:into:)`).
    @_spi(HearthInternals) public mutating func connect(
        _ id: ConnectionID, now: Int64, host: String? = nil, lastSession: String? = nil
    ) -> ServerOutput {
        self.now = max(self.now, now)
        precondition(connections[id] == nil, "connection \(id) opened twice")
        var out = ServerOutput()
        endStaleSession(lastSession, into: &out)
        var session = String(random() % 1_000_000_000_000, radix: 36)
        while sessions[session] != nil { session = String(random() % 1_000_000_000_000, radix: 36) }
        sessions[session] = id
        connections[id] = Connection(
            kind: .webSocket(FrameAssembler(maxMessageLength: configuration.maxMessageBytes)),
            principal: .unauthenticated, sessionID: session, session: nextSession,
            lastHeard: now, lastSent: now)
        nextSession += 1
        let extensions = configuration.exactlyOnceWrites ? [ServerMessage.writeIDsExtension] : []
        let reconnect = configuration.publicHost ?? host.flatMap(Self.reconnectHost) ?? configuration.host
        out.send(id, .hello(timestamp: now, host: reconnect, sessionID: session, extensions: extensions))
        return out
    }

    /// A connection closed (cleanly or not): its onDisconnect operations run, each with the
    /// auth it was queued under (or wait for writes to resume, when they are suspended), and its
    /// listens go.
    package mutating func disconnect(_ id: ConnectionID, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        guard let connection = connections.removeValue(forKey: id) else { return ServerOutput() }
        listening.remove(id)
        pendingChecks = pendingChecks.filter { $0.value.0 != id }
        held.listens -= connection.listens.count
        held.heldBytes -= connection.assemblingBytes + connection.queuedBytes
        assert(held.listens >= 0 && held.heldBytes >= 0, "a closed connection released more than was held")
        if sessions[connection.sessionID] == id { sessions[connection.sessionID] = nil }
        var out = ServerOutput()
        if writesSuspended != nil {
            // Kept, still counted against the budget, until writes resume.
            if !connection.onDisconnect.isEmpty {
                deferredOnDisconnect.append((connection.session, connection.onDisconnect))
            }
        } else {
            endSession(connection.session, connection.onDisconnect, into: &out)
        }
        return out
    }

    /// One text frame from a WebSocket connection: decoded and handled at once (tests and
    /// simulations; the runtime decodes off the lock with ``receiveFrame(_:_:now:)`` and
    /// ``receive(_:message:bytes:now:)``).
    @_spi(HearthInternals) public mutating func receive(_ id: ConnectionID, frame: String, now: Int64) -> ServerOutput {
        switch receiveFrame(id, frame, now: now) {
        case .pending(let out): return out
        case .complete(let text, _):
            return receive(id, message: Self.decode(text), bytes: text.utf8.count, now: now)
        }
    }

    /// One text frame: assembled, within the per-connection and total limits on what the core
    /// holds for messages not yet complete.
    package mutating func receiveFrame(_ id: ConnectionID, _ frame: String, now: Int64) -> FrameOutcome {
        self.now = max(self.now, now)
        guard var connection = connections[id], case .webSocket(var assembler) = connection.kind else {
            return .pending(ServerOutput())
        }
        connection.lastHeard = now
        if assembler.isAssembling, held.heldBytes + frame.utf8.count > configuration.maxHeldBytesTotal {
            return .pending(
                refuse(id, reason: "the server holds too much unfinished data; try again later", .temporary))
        }
        let isFrame = !assembler.isAssembling
        let message: String?
        do { message = try assembler.receive(frame) } catch {
            return .pending(refuse(id, reason: error.description, .permanent))
        }
        let bytes = assembler.bufferedByteCount
        held.heldBytes += bytes - connection.assemblingBytes
        assert(held.heldBytes >= 0, "held bytes never count below zero")
        connection.assemblingBytes = bytes
        connection.assemblingSince = assembler.isAssembling ? (connection.assemblingSince ?? now) : nil
        connection.kind = .webSocket(assembler)
        connections[id] = connection
        return message.map { .complete($0, isFrame: isFrame) } ?? .pending(ServerOutput())
    }

    /// Decodes one whole message (no core state: callers run it off the core's lock).
    package static func decode(_ text: String) -> Result<ClientMessage, WireError> {
        Result { () throws(WireError) -> ClientMessage in try ClientMessage.decode(text) }
    }

    /// One whole message, decoded (or why it could not be): handled now, or queued while the
    /// connection waits.
    package mutating func receive(
        _ id: ConnectionID, message: Result<ClientMessage, WireError>, bytes: Int, now: Int64
    ) -> ServerOutput {
        self.now = max(self.now, now)
        // Fields, not a copy of the connection: a copy alive while the message is handled would
        // make its first change to the connection's listens copy them all.
        guard let isWaiting = connections[id]?.isWaiting else { return ServerOutput() }
        guard isWaiting else { return handle(id, message, bytes: bytes) }
        guard let queued = connections[id]?.queued.count, let queuedBytes = connections[id]?.queuedBytes,
            queued < configuration.maxQueuedWhileAuthenticating,
            queuedBytes + bytes <= configuration.maxQueuedBytesPerConnection
        else {
            return refuse(id, reason: "too many messages while the connection waited; try again later", .temporary)
        }
        guard held.heldBytes + bytes <= configuration.maxHeldBytesTotal else {
            return refuse(id, reason: "the server holds too much unfinished data; try again later", .temporary)
        }
        connections[id]!.queued.append((message, bytes))
        connections[id]!.queuedBytes += bytes
        held.heldBytes += bytes
        assert(
            connections[id]!.queued.count <= configuration.maxQueuedWhileAuthenticating
                && connections[id]!.queuedBytes <= configuration.maxQueuedBytesPerConnection,
            "a waiting connection queued past its bounds")
        return ServerOutput()
    }

    /// Handles the messages a connection queued while it waited, in order, until it waits
    /// again (one may start another token check, or a write while writes are suspended).
    mutating func drainQueue(_ id: ConnectionID, into out: inout ServerOutput) {
        while connections[id]?.isWaiting == false, let first = connections[id]?.queued.first {
            connections[id]!.queued.removeFirst()
            connections[id]!.queuedBytes -= first.bytes
            held.heldBytes -= first.bytes
            assert(connections[id]!.queuedBytes >= 0 && held.heldBytes >= 0, "a queue handed out more than it held")
            out.append(handle(id, first.message, bytes: first.bytes))
        }
    }

    /// Closes a connection for a protocol violation or a limit: the reason, then the close (and
    /// its onDisconnect operations). A ``Refusal/permanent`` refusal sends the reason as a
    /// shutdown (`s`), after which Firebase's clients never reconnect on their own
    /// (firebase-js-sdk `core/PersistentConnection.ts` `onKill_` interrupts with
    /// `server_kill`; firebase-android-sdk logs "Will not attempt reconnect"); a
    /// ``Refusal/temporary`` one sends it as a server error (`e`), which those clients log and
    /// nothing more (`realtime/Connection.ts` `onControl_`), so the close that follows is a lost
    /// connection and they reconnect after their backoff.
    mutating func refuse(_ id: ConnectionID, reason: String, _ refusal: Refusal) -> ServerOutput {
        var out = ServerOutput()
        switch refusal {
        case .permanent: out.send(id, .shutdown(reason: reason))
        case .temporary: out.send(id, .serverError(reason))
        }
        out.closes.append(id)
        out.append(disconnect(id, now: now))
        return out
    }

    /// The clock moved on: idle connections and messages that take too long to arrive close
    /// the connection (running its onDisconnect operations), expired tokens are revoked, event
    /// streams get their keep-alive.
    @_spi(HearthInternals) public mutating func tick(now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        var out = ServerOutput()
        // Only the connections the clock reached are sorted and visited: ten thousand idle
        // connections cost a tick one scan, not a sort and a copy each under the core's lock.
        let due = connections.compactMap { id, c in tickAction(c, now: now) == nil ? nil : id }
        for id in due.sorted(by: { $0.rawValue < $1.rawValue }) {
            // Asked again at the visit, as an earlier visit's writes may have reached this
            // connection. Only the action and the flag outlive the expression: a copy of the
            // connection held across the visit would share its listens and make each revocation
            // below copy them all.
            guard
                let (action, isEventStream) = connections[id].flatMap({ c in
                    tickAction(c, now: now).map { ($0, c.isEventStream) }
                })
            else { continue }
            switch action {
            case .idleClose:
                out.closes.append(id)
                out.append(disconnect(id, now: now))
            case .slowMessage:
                out.append(refuse(id, reason: "a message took too long to arrive", .temporary))
            case .tokenExpired:
                connections[id]!.principal = .unauthenticated
                if isEventStream {
                    out.send(id) { EventStreamFormat.event("auth_revoked", "credential is no longer valid") }
                    out.closes.append(id)
                    out.append(disconnect(id, now: now))
                } else {
                    out.send(id, .authRevoked(status: "expired_token", reason: "Auth token is expired."))
                    revokeListens(id, into: &out)
                }
            case .appCheckExpired:
                connections[id]!.appCheckExpiresAt = nil
                if isEventStream {
                    // An event stream cannot send a new token: it ends, as when its credential expires.
                    out.send(id) { EventStreamFormat.event("auth_revoked", "App Check token is no longer valid") }
                    out.closes.append(id)
                    out.append(disconnect(id, now: now))
                } else {
                    out.send(id, .appCheckRevoked(status: "expired_token", reason: ServerCore.appCheckExpired))
                }
            case .keepAlive:
                connections[id]!.lastSent = now
                out.send(id) { EventStreamFormat.event("keep-alive", "null") }
            }
        }
        return out
    }

    /// What the clock asks of a connection, the first that applies in this order.
    enum TickAction {
        /// A WebSocket heard nothing for ``ServerConfiguration/idleTimeoutMs``: closed.
        case idleClose
        /// A message's frames took longer than ``ServerConfiguration/partialMessageTimeoutMs``: refused.
        case slowMessage
        /// The credential expired: revoked.
        case tokenExpired
        /// The App Check token expired (under enforcement): revoked (`apc`).
        case appCheckExpired
        /// An event stream sent nothing for ``ServerConfiguration/keepAliveIntervalMs``: a keep-alive.
        case keepAlive
    }

    /// What `tick` does for `c` at `now`, or `nil`: one function for the scan and the visit, so
    /// that a connection is visited exactly when something is due.
    private func tickAction(_ c: Connection, now: Int64) -> TickAction? {
        if !c.isEventStream, now - c.lastHeard > configuration.idleTimeoutMs { return .idleClose }
        if let since = c.assemblingSince, now - since > configuration.partialMessageTimeoutMs { return .slowMessage }
        if let expires = c.principal.expiresAt, expires <= now { return .tokenExpired }
        if configuration.enforcesAppCheck, let expires = c.appCheckExpiresAt, expires <= now { return .appCheckExpired }
        if c.isEventStream, now - c.lastSent >= configuration.keepAliveIntervalMs { return .keepAlive }
        return nil
    }

    /// Checks `Budget`'s invariant — every total is the sum over the connections — and that the
    /// listening set is the connections holding a listen (tests and simulations call it after
    /// every input; O(connections), so the serving path never does).
    package func checkBudget() {
        var sum = Budget()
        var holding: Set<ConnectionID> = []
        for (id, c) in connections {
            if !c.listens.isEmpty { holding.insert(id) }
            sum.listens += c.listens.count
            sum.heldBytes += c.assemblingBytes + c.queuedBytes
            sum.onDisconnectBytes += c.onDisconnectBytes
            precondition(c.queuedBytes == c.queued.reduce(0) { $0 + $1.bytes }, "a queue's byte count drifted")
        }
        for (_, ops) in deferredOnDisconnect { sum.onDisconnectBytes += ops.reduce(0) { $0 + $1.bytes } }
        precondition(sum == held, "the budget's totals \(held) are not the connections' sums \(sum)")
        precondition(holding == listening, "the listening set is not the connections holding a listen")
    }
}

/// Whether a refused client should come back (``ServerCore/refuse(_:reason:_:)``).
enum Refusal {
    /// The client broke the protocol or sent a message over the size limit: the same client
    /// would send the same bytes again, so it is told to stop (`s`).
    case permanent
    /// A limit that lifts — the server's memory for unfinished messages, a connection that
    /// queued too much while its token was checked, a message that arrived too slowly: the
    /// client may retry after its backoff (`e`, then the close).
    case temporary
}

/// Server-Sent Event text.
enum EventStreamFormat {
    /// One event: `event: NAME`, `data: DATA`, blank line.
    static func event(_ name: String, _ data: String) -> String {
        "event: \(name)\ndata: \(data)\n\n"
    }
}

extension ServerCore {
    /// `host` when it is a host name or address with an optional port (RFC 3986's reg-name,
    /// IPv4, or a bracketed IPv6 literal: letters, digits, `.-_:[]`), at most 255 bytes;
    /// otherwise nil. It is echoed to the client that sent it, so nothing else may pass.
    package static func reconnectHost(_ host: String) -> String? {
        let allowed = { (b: UInt8) -> Bool in
            (b >= 0x30 && b <= 0x3A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2E || b == 0x2D || b == 0x5F || b == 0x5B || b == 0x5D
        }
        guard (1...255).contains(host.utf8.count), host.utf8.allSatisfy(allowed) else { return nil }
        return host
    }
}
