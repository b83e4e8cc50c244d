import Hearth
@_spi(HearthInternals) import HearthWire

// Event streams (`GET` with `Accept: text/event-stream`): one listen per stream, its changes as
// Server-Sent Events (`put`, `patch`, `keep-alive`, `auth_revoked`), as firebase-admin reads them.

extension ServerCore {
    /// Opens an event stream (`GET` with `Accept: text/event-stream`) as connection `id`:
    /// the first event puts the current data; every change after is a `put` or `patch`.
    /// A refusal is answered as a plain response instead.
    package mutating func openEventStream(
        _ id: ConnectionID, _ request: RESTRequest, now: Int64
    ) -> Result<ServerOutput, RESTResponse> {
        self.now = max(self.now, now)
        let query: QuerySpec
        switch ServerCore.restQuery(request.parameters) {
        case .failure(let r): return .failure(r)
        case .success(let q): query = q
        }
        guard !lacksAppCheck(request), mayRead(request.path, query, as: request.principal).allowed else {
            return .failure(.error(401, "Permission denied"))
        }
        guard held.listens < configuration.maxListensTotal else {
            return .failure(.error(503, "the server holds as many listens as it allows; try again later"))
        }
        precondition(connections[id] == nil, "connection \(id) opened twice")
        var c = Connection(kind: .eventStream, principal: request.principal, lastHeard: now, lastSent: now)
        if configuration.enforcesAppCheck { c.appCheckExpiresAt = request.appCheckExpiresAt }
        let listen = Listen(path: request.path, query: listenQuery(query), tag: nil)
        c.listens[ListenKey(path: listen.path, query: listen.query)] = listen
        connections[id] = c
        listening.insert(id)
        held.listens += 1
        var out = ServerOutput()
        let node = data.child(at: request.path)
        out.send(id) { ServerCore.streamEvent("put", "/", queryView(node, listen.query).plainJSON()) }
        return .success(out)
    }

    static func streamEvent(_ name: String, _ path: String, _ data: JSONValue) -> String {
        EventStreamFormat.event(
            name,
            JSONValue.object([
                JSONMember(key: "path", value: .string(path)), JSONMember(key: "data", value: data),
            ]).serialized())
    }

    /// The events a write makes on a stream's listen `l`, given its data `before` and `after`
    /// (rendered at delivery, as ``notify(changedAt:old:into:merge:)`` does for WebSockets).
    mutating func notifyEventStream(
        _ id: ConnectionID, _ l: Listen, before: Node, after: Node, changedAt paths: [Path],
        merged: (Path, [(Path, Node)])?, weight: Int, into out: inout ServerOutput
    ) {
        func rel(_ p: Path) -> String { "/" + (l.path.relativePath(to: p) ?? .root).wireString }
        connections[id]?.lastSent = now
        if !l.query.loadsAllData {
            out.send(id, weight: weight) {
                let window = queryView(after, l.query)
                guard queryView(before, l.query) != window else { return nil }
                return ServerCore.streamEvent("put", "/", window.plainJSON())
            }
            return
        }
        if let (at, values) = merged, l.path.contains(at) {
            let relative = rel(at)
            out.send(id, weight: weight) {
                let d = JSONValue.object(values.map { JSONMember(key: $0.0.wireString, value: $0.1.plainJSON()) })
                return ServerCore.streamEvent("patch", relative, d)
            }
            return
        }
        if merged == nil, paths.count == 1, l.path.contains(paths[0]) {
            let relative = rel(paths[0]), node = data.child(at: paths[0])
            out.send(id, weight: weight) { ServerCore.streamEvent("put", relative, node.plainJSON()) }
            return
        }
        out.send(id, weight: weight) { before == after ? nil : ServerCore.streamEvent("put", "/", after.plainJSON()) }
    }
}
