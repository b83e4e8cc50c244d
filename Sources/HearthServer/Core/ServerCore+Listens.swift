import Hearth
@_spi(HearthInternals) import HearthWire

// Listens and credentials: a listen is granted by the access policy and held within the
// per-connection and total limits; a change of credential re-checks every listen the
// connection holds and revokes (`c`) those its new principal may not read.

extension ServerCore {
    /// The query a listen is keyed by: a query that loads all data is the default one
    /// (Firebase's clients listen that way).
    func listenQuery(_ query: QuerySpec) -> QuerySpec {
        query.loadsAllData ? .default : query
    }

    mutating func listen(
        _ id: ConnectionID, number r: Int, path: Path, query: QuerySpec, tag: Int?, hash: String,
        compoundHash: CompoundHash? = nil, into out: inout ServerOutput
    ) {
        // The principal and the count, not a copy of the connection: a copy held across the
        // insertion below would copy all its listens on every listen.
        guard let principal = connections[id]?.principal, let count = connections[id]?.listens.count else { return }
        let decision = mayRead(path, query, as: principal)
        guard decision.allowed else {
            out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
            return
        }
        let key = ListenKey(path: path, query: listenQuery(query))
        if connections[id]!.listens[key] == nil {
            let limit = configuration.maxListensPerConnection
            guard count < limit, held.listens < configuration.maxListensTotal else {
                let why = "at most \(limit) listens per connection, within the server's total"
                out.send(id, .response(number: r, status: "too_many_listens", data: .string(why)))
                return
            }
            held.listens += 1
        }
        let isTagged = tag != nil && !query.loadsAllData
        let listen = Listen(path: path, query: key.query, tag: isTagged ? tag : nil)
        connections[id]!.listens[key] = listen
        listening.insert(id)
        assert(
            connections[id]!.listens.count <= configuration.maxListensPerConnection
                && held.listens <= configuration.maxListensTotal, "a listen was granted past its bounds")
        let node = data.child(at: path)
        // A matching hash means the client has this data already: send none. A compound hash
        // (checked only now, after the rules) lets the ranges that differ be sent alone.
        out.send(id) {
            let current = queryView(node, listen.query)
            guard current.hash != hash || hash.isEmpty && current.isEmpty else { return nil }
            if let compoundHash, let rm = ServerCore.rangeMerges(current, for: compoundHash, at: path, tag: listen.tag)
            {
                return rm
            }
            return ServerMessage.set(path: path, data: current.exportJSON(), tag: listen.tag).text
        }
        var warnings: JSONValue? = nil
        if !decision.warnings.isEmpty {
            warnings = .object([JSONMember(key: "w", value: .array(decision.warnings.map(JSONValue.string)))])
        }
        out.send(id, .response(number: r, status: "ok", data: warnings))
    }

    /// The `rm` push that brings data hashed as `compoundHash` to `current`: the ranges whose
    /// hash differs, each with `current`'s data in it. `nil` when the whole data is as small
    /// (the `d` push is sent instead) or a range cannot be written as a node (a lone
    /// priority, see `Node.range(after:through:)`).
    static func rangeMerges(_ current: Node, for compoundHash: CompoundHash, at path: Path, tag: Int?) -> String? {
        guard compoundHash.isWellFormed else { return nil }
        let ours = compoundHash.rangeHashes(of: current)
        var ranges: [WireRangeMerge] = []
        for i in ours.indices where ours[i] != compoundHash.hashes[i] {
            let start = i > 0 ? compoundHash.posts[i - 1] : nil
            let end = i < compoundHash.posts.count ? compoundHash.posts[i] : nil
            guard let part = current.range(after: start, through: end) else { return nil }
            ranges.append(WireRangeMerge(RangeMerge(start: start, end: end, update: part)))
        }
        // Equal hashes everywhere, the simple hash differing: a server that splits
        // priorities otherwise; the whole data settles it.
        guard !ranges.isEmpty else { return nil }
        let text = ServerMessage.rangeMerge(path: path, ranges: ranges, tag: tag).text
        return text.utf8.count < current.estimatedJSONSize ? text : nil
    }

    mutating func unlisten(_ id: ConnectionID, _ key: ListenKey) {
        guard connections[id]?.listens.removeValue(forKey: key) != nil else { return }
        held.listens -= 1
        assert(held.listens >= 0, "more listens released than held")
        if connections[id]?.listens.isEmpty == true { listening.remove(id) }
    }

    /// What a listen at `path` with `query` sees now: the data there, or the query's window.
    func view(_ path: Path, _ query: QuerySpec) -> Node { queryView(data.child(at: path), query) }

    /// The result of a token check the core asked for.
    package mutating func tokenChecked(_ ticket: UInt64, _ result: TokenCheck, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        if let (id, r) = pendingAppChecks.removeValue(forKey: ticket) {
            return appCheckChecked(id, number: r, ticket: ticket, result)
        }
        guard let (id, r, override) = pendingChecks.removeValue(forKey: ticket), connections[id] != nil else {
            return ServerOutput()
        }
        var out = ServerOutput()
        assert(connections[id]!.awaitingTicket == ticket, "a token check answers the one its connection waits for")
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
        case .invalid(let why):
            connections[id]!.principal = .unauthenticated
            out.send(id, .response(number: r, status: "invalid_token", data: .string(why)))
        }
        // Whatever the new credential, the listens granted to the old one are checked again.
        revokeListens(id, into: &out)
        drainQueue(id, into: &out)
        return out
    }

    /// Revokes (`c`) the connection's listens its principal may no longer read.
    mutating func revokeListens(_ id: ConnectionID, into out: inout ServerOutput) {
        // The listens are copied out first: a held copy of the connection would make each
        // revocation copy them all.
        guard let principal = connections[id]?.principal,
            let listens = connections[id]?.listens.values.sorted(by: Listen.inOrder)
        else { return }
        for l in listens where !mayRead(l.path, l.query, as: principal).allowed {
            revoke(id, l, into: &out)
        }
    }

    /// Replaces the access policy (new security rules, `PUT /.settings/rules.json`): every
    /// connection's listens are checked again under it, and those it refuses are revoked.
    mutating func replacePolicy(_ policy: any AccessPolicy, now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        self.policy = policy
        var out = ServerOutput()
        for id in connections.keys.sorted(by: { $0.rawValue < $1.rawValue }) { revokeListens(id, into: &out) }
        return out
    }

    /// Revokes one listen its connection may no longer read: `c` on a WebSocket; on an event
    /// stream, whose one listen it is, a `cancel` event and the close.
    mutating func revoke(_ id: ConnectionID, _ l: Listen, into out: inout ServerOutput) {
        guard let isEventStream = connections[id]?.isEventStream else { return }
        if isEventStream {
            // Firebase: "cancel" with null data when the rules no longer allow the read.
            out.send(id) { EventStreamFormat.event("cancel", "null") }
            out.closes.append(id)
            out.append(disconnect(id, now: now))
            return
        }
        unlisten(id, ListenKey(path: l.path, query: l.query))
        out.send(id, .listenRevoked(path: l.path, query: l.query))
    }
}

/// What a listen with `query` sees of `node`: all of it, or the query's window.
func queryView(_ node: Node, _ query: QuerySpec) -> Node {
    query.loadsAllData ? node : query.window(of: node).node
}
