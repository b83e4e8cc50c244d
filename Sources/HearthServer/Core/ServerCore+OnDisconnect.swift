@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthWire

// onDisconnect operations: queued (checked against the rules, within the limits), journaled
// durably before their `ok` is released, run when their connection closes — or, for the
// connections that were open when the server stopped or crashed, when it starts again.
//
// **Exactly once.** The writes of a session's operations go to the store in one commit with a
// marker, the writer watermark ``ServerCore/onDisconnectMarker(_:)``; only after that commit
// does the journal record the session as ended, and only after that is the marker removed.
// So a crash between the store commit and the journal's record leaves the marker, and the
// restart sees that the session's operations ran (an increment is not applied twice); a crash
// before the store commit leaves neither, and the restart runs them.

/// A change to the onDisconnect journal, made durable by the adapter after the output's
/// writes and before its messages (the release rule).
enum OnDisconnectChange: Sendable, Equatable {
    /// An operation queued by `session`.
    case registered(session: UInt64, OnDisconnectOperation)
    /// `session`'s operations at or below `path` cancelled.
    case cancelled(session: UInt64, path: Path)
    /// `session`'s operations ran (their writes, with the marker, are in the same output or an
    /// earlier one): forget them.
    case ended(session: UInt64)
}

extension ServerCore {
    /// The reserved writer id a session's onDisconnect operations are marked with in the
    /// store. Clients' write stamps with this prefix are not taken as stamps.
    static let onDisconnectMarkerPrefix = "\u{1}onDisconnect/"

    /// The marker of `session`.
    static func onDisconnectMarker(_ session: UInt64) -> String { onDisconnectMarkerPrefix + String(session) }

    /// The session a writer id marks, if it is a marker.
    static func markedSession(_ writer: String) -> UInt64? {
        guard writer.hasPrefix(onDisconnectMarkerPrefix) else { return nil }
        return UInt64(writer.dropFirst(onDisconnectMarkerPrefix.count))
    }

    /// The store's watermarks without the onDisconnect markers (the core's table holds only
    /// clients' writers).
    static func clientWatermarks(_ marks: [String: WriterWatermark]) -> [String: WriterWatermark] {
        marks.filter { markedSession($0.key) == nil }
    }

    mutating func queueOnDisconnect(
        _ id: ConnectionID, number r: Int, path: Path, _ action: OnDisconnectOperation.Action, bytes: Int,
        principal: Principal, into out: inout ServerOutput
    ) {
        let op = OnDisconnectOperation(path: path, action: action, principal: principal, bytes: bytes)
        let children: [(path: Path, node: Node)]
        do { children = try validatedChildren(op) } catch {
            out.send(id, .response(number: r, status: "invalid_data", data: .string(error.description)))
            return
        }
        guard let c = connections[id] else { return }
        let limit = configuration.maxOnDisconnectPerConnection
        guard c.onDisconnect.count < limit,
            c.onDisconnectBytes + bytes <= configuration.maxOnDisconnectBytesPerConnection,
            held.onDisconnectBytes + bytes <= configuration.maxOnDisconnectBytesTotal
        else {
            let why =
                "at most \(limit) onDisconnect operations and \(configuration.maxOnDisconnectBytesPerConnection) bytes of them per connection, within the server's total"
            out.send(id, .response(number: r, status: "too_many_operations", data: .string(why)))
            return
        }
        // Checked when queued, against the data as it is now, and again when it runs.
        guard mayWrite(plan(op.path, children, merge: op.isMerge), as: principal).allowed else {
            out.send(id, .response(number: r, status: "permission_denied", data: .string("Permission denied")))
            return
        }
        connections[id]?.onDisconnect.append(op)
        held.onDisconnectBytes += bytes
        assert(connections[id]!.onDisconnect.count <= limit, "onDisconnect operations queued past their bound")
        out.onDisconnect.append(.registered(session: c.session, op))
        out.send(id, .response(number: r, status: "ok", data: nil))
    }

    mutating func cancelOnDisconnect(_ id: ConnectionID, number r: Int, path: Path, into out: inout ServerOutput) {
        guard let c = connections[id] else { return }
        let cancelled = c.onDisconnect.filter { path.contains($0.path) }
        if !cancelled.isEmpty {
            held.onDisconnectBytes -= cancelled.reduce(0) { $0 + $1.bytes }
            assert(held.onDisconnectBytes >= 0, "cancelled more onDisconnect bytes than were held")
            connections[id]?.onDisconnect.removeAll { path.contains($0.path) }
            out.onDisconnect.append(.cancelled(session: c.session, path: path))
        }
        out.send(id, .response(number: r, status: "ok", data: nil))
    }

    /// The operation's children as validated nodes, its priority server values resolved now.
    func validatedChildren(_ op: OnDisconnectOperation) throws(WriteError) -> [(path: Path, node: Node)] {
        switch op.action {
        case .set(let json): return [(.root, try validated(json, at: op.path))]
        case .merge(let children): return try validated(children.map { ($0.path, $0.value) }, at: op.path)
        }
    }

    /// Runs a closed session's operations in order, each checked again now with the auth it was
    /// queued under, then marks the session ended (see the exactly-once note above). The
    /// operations' bytes leave the budget.
    mutating func endSession(_ session: UInt64, _ ops: [OnDisconnectOperation], into out: inout ServerOutput) {
        guard !ops.isEmpty else { return }
        for op in ops {
            held.onDisconnectBytes -= op.bytes
            assert(held.onDisconnectBytes >= 0, "ran more onDisconnect bytes than were held")
            guard let children = try? validatedChildren(op),
                let plan = allowedWrite(op.path, children, merge: op.isMerge, as: op.principal)
            else { continue }
            apply(plan, weight: op.bytes, into: &out)
        }
        out.writes.append(.writerWatermark(writer: Self.onDisconnectMarker(session), id: 1))
        out.onDisconnect.append(.ended(session: session))
    }

    /// The operations of the sessions that were open when the server last stopped (from its
    /// journal), run before any client is served: a session whose marker the store holds
    /// (`ran`) already ran and is only ended. Sessions run in the order they were opened, each
    /// one's operations in the order queued. Later sessions are numbered after them.
    mutating func runRecovered(
        _ sessions: [(UInt64, [OnDisconnectOperation])], ran: Set<UInt64>, now: Int64
    )
        -> ServerOutput
    {
        self.now = max(self.now, now)
        var out = ServerOutput()
        for (session, ops) in sessions.sorted(by: { $0.0 < $1.0 }) {
            nextSession = max(nextSession, session + 1)
            guard !ran.contains(session), !ops.isEmpty else {
                out.onDisconnect.append(.ended(session: session))
                continue
            }
            held.onDisconnectBytes += ops.reduce(0) { $0 + $1.bytes }
            endSession(session, ops, into: &out)
        }
        return out
    }

    /// Ends the connection a reconnecting client left (`ls`, the session its previous hello
    /// named): it is closed and its onDisconnect operations run now, before anything of the
    /// new session, so none of them can overwrite what the new session writes.
    mutating func endStaleSession(_ lastSession: String?, into out: inout ServerOutput) {
        guard let lastSession, let stale = sessions[lastSession] else { return }
        out.closes.append(stale)
        out.append(disconnect(stale, now: now))
    }
}

extension OnDisconnectOperation {
    /// Whether the operation is a merge (`om`) rather than a set (`o`).
    var isMerge: Bool {
        if case .merge = action { return true }
        return false
    }
}

extension ServerCore {
    /// Keeps a closed session's operations until writes resume (a failed commit dropped the
    /// output that ran them; the journal still had them).
    mutating func deferOnDisconnect(_ session: UInt64, _ ops: [OnDisconnectOperation]) {
        guard !ops.isEmpty else { return }
        held.onDisconnectBytes += ops.reduce(0) { $0 + $1.bytes }
        deferredOnDisconnect.append((session, ops))
    }
}

extension ServerCore {
    /// The `ls` parameter of a WebSocket upgrade's URL (`/.ws?v=5&ls=SESSION&ns=…`): the session
    /// id a reconnecting Firebase client had (the `s` of its last hello). Only what a session id
    /// of this server can be — 1…32 ASCII letters and digits — is taken; anything else is nil.
    package static func lastSession(inURI uri: String) -> String? {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("ls=") {
            let value = pair.dropFirst(3)
            guard (1...32).contains(value.utf8.count),
                value.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) })
            else { return nil }
            return String(value)
        }
        return nil
    }
}
