import Hearth
import HearthWire

// Connection lifecycle and protocol v5 requests.

extension ServerCore {
    /// A WebSocket connection opened: the hello goes first.
    public mutating func connect(_ id: ConnectionID, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        precondition(connections[id] == nil, "connection \(id) opened twice")
        connections[id] = Connection(
            kind: .webSocket(FrameAssembler(maxMessageLength: configuration.maxMessageBytes)),
            principal: .unauthenticated,
            lastHeard: now, lastSent: now)
        var out = ServerOutput()
        let session = String(random() % 1_000_000_000_000, radix: 36)
        let extensions = configuration.exactlyOnceWrites ? [ServerMessage.writeIDsExtension] : []
        out.send(id, .hello(timestamp: now, host: configuration.host, sessionID: session, extensions: extensions))
        return out
    }

    /// A connection closed (cleanly or not): its onDisconnect operations run, with the auth it
    /// had, and its listens go.
    public mutating func disconnect(_ id: ConnectionID, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        guard let connection = connections.removeValue(forKey: id) else { return ServerOutput() }
        pendingChecks = pendingChecks.filter { $0.value.0 != id }
        var out = ServerOutput()
        for op in connection.onDisconnect {
            // Checked again when it runs, with the auth the connection had.
            guard mayWrite(op.path, op.children, as: connection.principal).allowed else { continue }
            switch op.action {
            case .set(let node): commitSet(op.path, node, into: &out)
            case .merge(let children): commitMerge(op.path, children, into: &out)
            }
        }
        return out
    }

    /// One text frame from a WebSocket connection.
    public mutating func receive(_ id: ConnectionID, frame: String, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        guard var connection = connections[id], case .webSocket(var assembler) = connection.kind else {
            return ServerOutput()
        }
        connection.lastHeard = now
        let message: String?
        do {
            message = try assembler.receive(frame)
        } catch {
            return refuse(id, reason: error.description)
        }
        connection.kind = .webSocket(assembler)
        connections[id] = connection
        guard let message else { return ServerOutput() }
        if connection.awaitingTicket != nil {
            guard connection.queued.count < configuration.maxQueuedWhileAuthenticating else {
                return refuse(id, reason: "too many messages while the token was checked")
            }
            connections[id]!.queued.append(message)
            return ServerOutput()
        }
        return handle(id, message: message)
    }

    /// Closes a connection for a protocol violation: a shutdown message, then the close (and
    /// its onDisconnect operations).
    mutating func refuse(_ id: ConnectionID, reason: String) -> ServerOutput {
        var out = ServerOutput()
        out.send(id, .shutdown(reason: reason))
        out.closes.append(id)
        out.append(disconnect(id, now: now))
        return out
    }

    mutating func handle(_ id: ConnectionID, message: String) -> ServerOutput {
        let decoded: ClientMessage
        do { decoded = try ClientMessage.decode(message) } catch { return refuse(id, reason: error.description) }
        var out = ServerOutput()
        switch decoded {
        case .ping:
            out.send(id, .pong)
        case .otherControl:
            break
        case let .unknownRequest(number, action):
            out.send(
                id, .response(number: number, status: "invalid_request", data: .string("unknown action \"\(action)\"")))
        case let .request(number, request):
            handle(id, number: number, request, into: &out)
        }
        return out
    }

    mutating func handle(_ id: ConnectionID, number r: Int, _ request: ClientRequest, into out: inout ServerOutput) {
        guard let principal = connections[id]?.principal else { return }
        switch request {
        case let .listen(path, query, tag, hash):
            listen(id, number: r, path: path, query: query, tag: tag, hash: hash, into: &out)
        case let .unlisten(path, query, _):
            connections[id]!.listens[ListenKey(path: path, query: listenQuery(query))] = nil
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .get(path, query):
            guard mayRead(path, query, as: principal).allowed else {
                out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
                return
            }
            out.send(id, .response(number: r, status: "ok", data: view(path, query).exportJSON()))
        case let .put(path, json, hash, stamp):
            if alreadyApplied(stamp) {
                answerSeen(id, number: r, writtenAt: [path], into: &out)
                return
            }
            let node: Node
            do { node = try validated(json, at: path) } catch {
                out.send(id, .response(number: r, status: "invalid_data", data: .string(error.description)))
                return
            }
            if let hash, hash != data.child(at: path).hash {
                out.send(
                    id, .response(number: r, status: "datastale", data: .string("Transaction hash does not match")))
                return
            }
            guard mayWrite(path, [(.root, node)], as: principal).allowed else {
                out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
                return
            }
            commitSet(path, node, into: &out)
            advanceWatermark(stamp, into: &out)
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .merge(path, children, stamp):
            if alreadyApplied(stamp) {
                answerSeen(id, number: r, writtenAt: children.map { path.appending($0.0) }, into: &out)
                return
            }
            let nodes: [(path: Path, node: Node)]
            do { nodes = try validated(children, at: path) } catch {
                out.send(id, .response(number: r, status: "invalid_data", data: .string(error.description)))
                return
            }
            guard mayWrite(path, nodes, as: principal).allowed else {
                out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
                return
            }
            commitMerge(path, nodes, into: &out)
            advanceWatermark(stamp, into: &out)
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .onDisconnectPut(path, json):
            let op = Result { () throws(WriteError) -> OnDisconnectOperation in
                OnDisconnectOperation(path: path, action: .set(try validated(json, at: path)))
            }
            queueOnDisconnect(id, number: r, op, principal: principal, into: &out)
        case let .onDisconnectMerge(path, children):
            let op = Result { () throws(WriteError) -> OnDisconnectOperation in
                OnDisconnectOperation(path: path, action: .merge(try validated(children, at: path)))
            }
            queueOnDisconnect(id, number: r, op, principal: principal, into: &out)
        case let .onDisconnectCancel(path):
            connections[id]!.onDisconnect.removeAll { path.contains($0.path) }
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .auth(credential, isJWT, override):
            let ticket = nextCheck
            nextCheck += 1
            pendingChecks[ticket] = (id, r, override)
            connections[id]!.awaitingTicket = ticket
            out.tokenChecks.append(TokenCheckRequest(ticket: ticket, credential: credential, isJWT: isJWT))
        case .unauth:
            connections[id]!.principal = .unauthenticated
            out.send(id, .response(number: r, status: "ok", data: nil))
            revokeListens(id, into: &out)
        case .stats:
            out.send(id, .response(number: r, status: "ok", data: nil))
        }
    }

    private mutating func queueOnDisconnect(
        _ id: ConnectionID, number r: Int, _ made: Result<OnDisconnectOperation, WriteError>, principal: Principal,
        into out: inout ServerOutput
    ) {
        let op: OnDisconnectOperation
        do { op = try made.get() } catch {
            out.send(id, .response(number: r, status: "invalid_data", data: .string(error.description)))
            return
        }
        guard connections[id]!.onDisconnect.count < configuration.maxOnDisconnectPerConnection else {
            out.send(
                id,
                .response(
                    number: r, status: "too_many_operations",
                    data: .string(
                        "at most \(configuration.maxOnDisconnectPerConnection) onDisconnect operations per connection"))
            )
            return
        }
        // Checked when queued, against the data as it is now.
        guard mayWrite(op.path, op.children, as: principal).allowed else {
            out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
            return
        }
        connections[id]!.onDisconnect.append(op)
        out.send(id, .response(number: r, status: "ok", data: nil))
    }

    /// The result of a token check the core asked for.
    public mutating func tokenChecked(_ ticket: UInt64, _ result: TokenCheck, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        guard let (id, r, override) = pendingChecks.removeValue(forKey: ticket), connections[id] != nil else {
            return ServerOutput()
        }
        var out = ServerOutput()
        connections[id]!.awaitingTicket = nil
        switch result {
        case .valid(var principal):
            if principal == .admin, let override { principal = Principal.override(override) }
            connections[id]!.principal = principal
            var d: [JSONMember] = []
            switch principal {
            case .user(let u):
                d.append(JSONMember(key: "auth", value: u.claims))
                if let e = u.expiresAt { d.append(JSONMember(key: "expires", value: .integer(exactly: e / 1000))) }
            case .admin: d.append(JSONMember(key: "auth", value: .null))
            case .unauthenticated: d.append(JSONMember(key: "auth", value: .null))
            }
            out.send(id, .response(number: r, status: "ok", data: .object(d)))
        case .expired:
            connections[id]!.principal = .unauthenticated
            out.send(id, .response(number: r, status: "expired_token", data: .string("Auth token is expired.")))
            revokeListens(id, into: &out)
        case .invalid(let why):
            connections[id]!.principal = .unauthenticated
            out.send(id, .response(number: r, status: "invalid_token", data: .string(why)))
            revokeListens(id, into: &out)
        }
        // The messages that waited for the check, in order (one may start another check).
        while let next = connections[id], next.awaitingTicket == nil, !next.queued.isEmpty {
            let message = connections[id]!.queued.removeFirst()
            out.append(handle(id, message: message))
        }
        return out
    }

    /// The clock moved on: idle connections close (running their onDisconnect operations),
    /// expired tokens are revoked, event streams get their keep-alive.
    public mutating func tick(now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        var out = ServerOutput()
        for id in connections.keys.sorted(by: { $0.raw < $1.raw }) {
            guard let c = connections[id] else { continue }
            if !c.isEventStream, now - c.lastHeard > configuration.idleTimeoutMs {
                out.closes.append(id)
                out.append(disconnect(id, now: now))
                continue
            }
            if let expires = c.principal.expiresAt, expires <= now {
                connections[id]!.principal = .unauthenticated
                if c.isEventStream {
                    out.messages.append((id, EventStreamFormat.event("auth_revoked", "credential is no longer valid")))
                    out.closes.append(id)
                    connections[id] = nil
                } else {
                    out.send(id, .authRevoked(status: "expired_token", reason: "Auth token is expired."))
                    revokeListens(id, into: &out)
                }
                continue
            }
            if c.isEventStream, now - c.lastSent >= configuration.keepAliveIntervalMs {
                connections[id]!.lastSent = now
                out.messages.append((id, EventStreamFormat.event("keep-alive", "null")))
            }
        }
        return out
    }

    /// Revokes (`c`) the connection's listens its principal may no longer read.
    mutating func revokeListens(_ id: ConnectionID, into out: inout ServerOutput) {
        guard let c = connections[id] else { return }
        for (key, l) in c.listens.sorted(by: {
            ($0.key.path, $0.key.query.identifier) < ($1.key.path, $1.key.query.identifier)
        })
        where !mayRead(l.path, l.query, as: c.principal).allowed {
            connections[id]!.listens[key] = nil
            out.send(id, .listenRevoked(path: l.path, query: l.query))
        }
    }

    /// The query a listen is keyed by: a query that loads all data is the default one
    /// (Firebase's clients listen that way).
    func listenQuery(_ query: QuerySpec) -> QuerySpec {
        query.loadsAllData ? .default : query
    }

    mutating func listen(
        _ id: ConnectionID, number r: Int, path: Path, query: QuerySpec, tag: Int?, hash: String,
        into out: inout ServerOutput
    ) {
        guard let c = connections[id] else { return }
        let decision = mayRead(path, query, as: c.principal)
        guard decision.allowed else {
            out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
            return
        }
        let key = ListenKey(path: path, query: listenQuery(query))
        guard c.listens[key] != nil || c.listens.count < configuration.maxListensPerConnection else {
            out.send(
                id,
                .response(
                    number: r, status: "too_many_listens",
                    data: .string("at most \(configuration.maxListensPerConnection) listens per connection")))
            return
        }
        let isTagged = tag != nil && !query.loadsAllData
        let listen = Listen(path: path, query: key.query, tag: isTagged ? tag : nil)
        connections[id]!.listens[key] = listen
        let current = view(path, listen.query)
        // A matching hash means the client has this data already: send none.
        if current.hash != hash || hash.isEmpty && current.isEmpty {
            out.send(id, .set(path: path, data: current.exportJSON(), tag: listen.tag))
        }
        var warnings: JSONValue? = nil
        if !decision.warnings.isEmpty {
            warnings = .object([JSONMember(key: "w", value: .array(decision.warnings.map(JSONValue.string)))])
        }
        out.send(id, .response(number: r, status: "ok", data: warnings))
    }

    /// What a listen at `path` with `query` sees: the data there, or the query's window.
    func view(_ path: Path, _ query: QuerySpec) -> Node {
        let node = data.child(at: path)
        return query.loadsAllData ? node : query.window(of: node).node
    }
}

/// Server-Sent Event text.
enum EventStreamFormat {
    /// One event: `event: NAME`, `data: DATA`, blank line.
    static func event(_ name: String, _ data: String) -> String {
        "event: \(name)\ndata: \(data)\n\n"
    }
}
