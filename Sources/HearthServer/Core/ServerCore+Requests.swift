import Hearth
@_spi(HearthInternals) import HearthWire

// Protocol v5 requests. Every write (`p`, `m`, `o`, `om`) is checked against the access policy
// before anything about the data is compared (a transaction's hash), applied or answered
// (an exactly-once re-send's `seen`).

extension ServerCore {
    mutating func handle(_ id: ConnectionID, _ message: Result<ClientMessage, WireError>, bytes: Int) -> ServerOutput {
        let decoded: ClientMessage
        switch message {
        case .success(let m): decoded = m
        case .failure(let error): return refuse(id, reason: error.description, .permanent)
        }
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
            if request.isWrite, writesSuspended != nil {
                // Held, with everything after it, until writes resume: the client keeps
                // waiting for its answer rather than losing the write.
                connections[id]!.awaitingWrites = true
                out.append(receive(id, message: message, bytes: bytes, now: now))
                return out
            }
            handle(id, number: number, request, bytes: bytes, into: &out)
        }
        return out
    }

    mutating func handle(
        _ id: ConnectionID, number r: Int, _ request: ClientRequest, bytes: Int, into out: inout ServerOutput
    ) {
        guard let principal = connections[id]?.principal else { return }
        func answer(_ status: String, _ why: String) {
            out.send(id, .response(number: r, status: status, data: .string(why)))
        }
        if request.needsAppCheck && lacksAppCheck(id) { return answer("permission_denied", "Permission denied") }
        switch request {
        case let .listen(path, query, tag, hash, compoundHash):
            listen(
                id, number: r, path: path, query: query, tag: tag, hash: hash, compoundHash: compoundHash, into: &out)
        case let .unlisten(path, query, _):
            unlisten(id, ListenKey(path: path, query: listenQuery(query)))
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .get(path, query):
            guard mayRead(path, query, as: principal).allowed else {
                return answer("permission_denied", "Permission denied")
            }
            let node = data.child(at: path)
            out.send(id) {
                ServerMessage.response(number: r, status: "ok", data: queryView(node, query).exportJSON()).text
            }
        case let .put(path, json, hash, stamp):
            let node: Node
            do { node = try validated(json, at: path) } catch { return answer("invalid_data", error.description) }
            guard let plan = allowedWrite(path, [(.root, node)], merge: false, as: principal) else {
                return answer("permission_denied", "Permission denied")
            }
            // A compare-and-set tells whether the data matches: only to who may read it.
            if hash != nil, !mayRead(path, .default, as: principal).allowed {
                return answer("permission_denied", "Permission denied")
            }
            // A re-sent compare-and-set that applied is not judged against its own result.
            if alreadyApplied(stamp) { return answerSeen(id, number: r, writtenAt: [path], into: &out) }
            if let hash, hash != data.child(at: path).hash {
                return answer("datastale", "Transaction hash does not match")
            }
            apply(plan, weight: bytes, into: &out)
            advanceWatermark(stamp, into: &out)
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .merge(path, children, stamp):
            let nodes: [(path: Path, node: Node)]
            do { nodes = try validated(children, at: path) } catch { return answer("invalid_data", error.description) }
            guard let plan = allowedWrite(path, nodes, merge: true, as: principal) else {
                return answer("permission_denied", "Permission denied")
            }
            if alreadyApplied(stamp) {
                return answerSeen(id, number: r, writtenAt: nodes.map { path.appending($0.path) }, into: &out)
            }
            apply(plan, weight: bytes, into: &out)
            advanceWatermark(stamp, into: &out)
            out.send(id, .response(number: r, status: "ok", data: nil))
        case let .onDisconnectPut(path, json):
            queueOnDisconnect(id, number: r, path: path, .set(json), bytes: bytes, principal: principal, into: &out)
        case let .onDisconnectMerge(path, children):
            let children = children.map { OnDisconnectOperation.MergeChild(path: $0.0, value: $0.1) }
            queueOnDisconnect(
                id, number: r, path: path, .merge(children), bytes: bytes, principal: principal, into: &out)
        case let .onDisconnectCancel(path):
            cancelOnDisconnect(id, number: r, path: path, into: &out)
        case let .auth(credential, isJWT, override):
            // Messages queue while a check is pending, so an `auth` is handled only when none is.
            assert(connections[id]!.awaitingTicket == nil, "a connection waits for one token check at a time")
            let ticket = nextCheck
            nextCheck += 1
            assert(pendingChecks[ticket] == nil, "a ticket names one token check")
            pendingChecks[ticket] = (id, r, override)
            connections[id]!.awaitingTicket = ticket
            out.tokenChecks.append(TokenCheckRequest(ticket: ticket, credential: credential, isJWT: isJWT))
        case .unauth:
            connections[id]!.principal = .unauthenticated
            out.send(id, .response(number: r, status: "ok", data: nil))
            revokeListens(id, into: &out)
        case .stats:
            out.send(id, .response(number: r, status: "ok", data: nil))
        case .appCheck(let token):
            appCheckRequested(id, number: r, token: token, into: &out)
        case .unappCheck:
            connections[id]!.appCheckExpiresAt = nil
            out.send(id, .response(number: r, status: "ok", data: nil))
        }
    }
}

extension ClientRequest {
    /// Whether the request writes data now (`p`, `m`); onDisconnect operations write only when
    /// their connection closes.
    var isWrite: Bool {
        switch self {
        case .put, .merge: true
        default: false
        }
    }

    /// Whether the request reads or writes data, which App Check enforcement refuses to a
    /// connection without a valid App Check token.
    var needsAppCheck: Bool {
        switch self {
        case .listen, .get, .put, .merge, .onDisconnectPut, .onDisconnectMerge, .onDisconnectCancel: true
        case .unlisten, .auth, .unauth, .appCheck, .unappCheck, .stats: false
        }
    }
}
