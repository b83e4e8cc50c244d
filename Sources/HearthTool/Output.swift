@_spi(HearthInternals) import Hearth
import HearthLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered output to a file descriptor (stdout by default) with write(2), flushed
/// explicitly, when the buffer grows large, and when the value goes away. The tool never
/// uses `print` for its results, so nothing is left in a stdio buffer.
final class Output {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32 = 1) {
        self.fd = fd
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    /// Appends `text` and a newline.
    func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Appends a JSON value on one line.
    func json(_ value: JSONValue) {
        value.write(to: &buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes everything buffered.
    func flush() {
        if buffer.isEmpty { return }
        Progress.willWrite(fd: fd)
        Output.writeAll(fd, buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes `text` and a newline to stderr at once.
    static func stderr(_ text: String) {
        Progress.willWrite(fd: 2)
        writeAll(2, Array((text + "\n").utf8))
    }

    /// Writes `text` to stderr at once, without a newline.
    static func stderrRaw(_ text: String) {
        writeAll(2, Array(text.utf8))
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                write(fd, raw.baseAddress! + done, bytes.count - done)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            done += n
        }
    }
}

// MARK: - JSON rendering (stable; documented in Hearth's DocC article "The hearth tool")

/// How secrets (the auth token) are shown.
enum Secrets {
    static let redacted = "<redacted>"
}

enum Render {
    static func int<T: BinaryInteger>(_ v: T) -> JSONValue { .number(Double(v)) }

    static func path(_ p: Path) -> JSONValue { .string(p.description) }

    static func node(_ n: Node) -> JSONValue { n.exportJSON() }

    /// An update's children as an object: relative path → export JSON, in update order.
    static func children(_ c: [ChildUpdate]) -> JSONValue {
        .object(c.map { JSONMember(key: $0.path.description, value: $0.node.exportJSON()) })
    }

    static func keys(_ keys: Set<ChildKey>?) -> JSONValue {
        guard let keys else { return .null }
        return .array(keys.sorted().map { .string($0.string) })
    }

    static func location(_ l: QueryLocation) -> [JSONMember] {
        [JSONMember(key: "path", value: path(l.path)), JSONMember(key: "query", value: l.query.json)]
    }

    static func auth(_ t: AuthToken, showSecrets: Bool) -> JSONValue {
        ["token": .string(showSecrets ? t.token : Secrets.redacted), "expiresAt": int(t.expiresAt)]
    }

    static func pendingWrite(_ w: PendingWrite) -> JSONValue {
        var m: [JSONMember] = [JSONMember(key: "id", value: int(w.id)), JSONMember(key: "path", value: path(w.path))]
        switch w.operation {
        case .set(let n): m.append(JSONMember(key: "set", value: node(n)))
        case .update(let c): m.append(JSONMember(key: "update", value: children(c)))
        }
        return .object(m)
    }

    static func trackedQuery(_ q: TrackedQuery) -> JSONValue {
        .object(
            [JSONMember(key: "id", value: int(q.id))] + location(q.location) + [
                JSONMember(key: "complete", value: .bool(q.complete)),
                JSONMember(key: "active", value: .bool(q.active)),
                JSONMember(key: "lastUse", value: int(q.lastUse)),
                JSONMember(key: "keys", value: keys(q.keys)),
            ])
    }

    static func statusName(_ s: QueuedTransaction.Status) -> String {
        switch s {
        case .queued: "queued"
        case .sent: "sent"
        case .needsRetry: "needsRetry"
        case .committed: "committed"
        case .aborted: "aborted"
        case .writeApplied: "writeApplied"
        case .writeRefused: "writeRefused"
        }
    }

    static func transaction(_ t: QueuedTransaction) -> JSONValue {
        [
            "id": int(t.id), "path": path(t.path), "functionName": .string(t.functionName),
            "argument": node(t.argument), "localResult": node(t.localResult),
            "retryCount": int(t.retryCount), "status": .string(statusName(t.status)),
        ]
    }

    static func onDisconnect(_ op: OnDisconnectOperation) -> JSONValue {
        var m: [JSONMember] = [JSONMember(key: "id", value: int(op.id)), JSONMember(key: "path", value: path(op.path))]
        switch op.action {
        case .set(let n):
            m.append(JSONMember(key: "action", value: "set"))
            m.append(JSONMember(key: "value", value: node(n)))
        case .update(let c):
            m.append(JSONMember(key: "action", value: "update"))
            m.append(JSONMember(key: "value", value: children(c)))
        case .remove:
            m.append(JSONMember(key: "action", value: "remove"))
        case .cancel:
            m.append(JSONMember(key: "action", value: "cancel"))
        }
        m.append(JSONMember(key: "acknowledged", value: .bool(op.acknowledged)))
        return .object(m)
    }

    /// One event: `{"event": NAME, …fields}`.
    static func event(_ e: StoreEvent, showSecrets: Bool) -> JSONValue {
        func ev(_ name: String, _ fields: [JSONMember]) -> JSONValue {
            .object([JSONMember(key: "event", value: .string(name))] + fields)
        }
        func id(_ v: Int64) -> [JSONMember] { [JSONMember(key: "id", value: int(v))] }
        func members(_ v: JSONValue) -> [JSONMember] { v.objectMembers ?? [] }
        switch e {
        case let .serverOverwrite(p, n, at):
            return ev("serverOverwrite", members(["path": path(p), "value": node(n), "at": int(at)]))
        case let .serverMerge(p, c, at):
            return ev("serverMerge", members(["path": path(p), "children": children(c), "at": int(at)]))
        case .writeSaved(let w): return ev("writeSaved", members(pendingWrite(w)))
        case .writeAcked(let w): return ev("writeAcked", id(w))
        case .writeReverted(let w): return ev("writeReverted", id(w))
        case .trackedQuerySaved(let q): return ev("trackedQuerySaved", members(trackedQuery(q)))
        case let .trackedQueryKeysChanged(q, added, removed):
            return ev(
                "trackedQueryKeysChanged",
                id(q) + [
                    JSONMember(key: "added", value: keys(Set(added))),
                    JSONMember(key: "removed", value: keys(Set(removed))),
                ])
        case .trackedQueryRemoved(let q): return ev("trackedQueryRemoved", id(q))
        case let .pinChanged(l, on): return ev("pinChanged", location(l) + [JSONMember(key: "on", value: .bool(on))])
        case .authSaved(let t): return ev("authSaved", members(auth(t, showSecrets: showSecrets)))
        case .authCleared: return ev("authCleared", [])
        case .transactionSaved(let t): return ev("transactionSaved", members(transaction(t)))
        case .transactionRemoved(let t): return ev("transactionRemoved", id(t))
        case .onDisconnectSaved(let op): return ev("onDisconnectSaved", members(onDisconnect(op)))
        case .onDisconnectAcked(let op): return ev("onDisconnectAcked", id(op))
        case .onDisconnectRemoved(let op): return ev("onDisconnectRemoved", id(op))
        case .serverTimeOffset(let ms): return ev("serverTimeOffset", [JSONMember(key: "ms", value: .number(ms))])
        case .sessionStarted(let at): return ev("sessionStarted", [JSONMember(key: "at", value: int(at))])
        case .cachePruned(let r):
            return ev(
                "cachePruned",
                members([
                    "prunedPaths": .array(r.prunedPaths.map(path)),
                    "keptPaths": .array(r.keptPaths.map(path)),
                    "removedQueryIds": .array(r.removedQueryIDs.map(int)),
                ]))
        case let .writerWatermark(writer, w, at):
            return ev("writerWatermark", members(["writer": .string(writer), "id": int(w), "at": int(at)]))
        case .writerWatermarksRemoved(let writers):
            return ev(
                "writerWatermarksRemoved", [JSONMember(key: "writers", value: .array(writers.map { .string($0) }))])
        case let .writerIdentity(writer, first):
            var fields = [JSONMember(key: "writer", value: .string(writer))]
            if let first { fields.append(JSONMember(key: "firstWriteId", value: int(first))) }
            return ev("writerIdentity", fields)
        }
    }

    /// One event on one human-readable line: its name, then its other fields as JSON.
    static func eventLine(_ e: StoreEvent, showSecrets: Bool) -> String {
        let json = event(e, showSecrets: showSecrets)
        let fields = Array((json.objectMembers ?? []).dropFirst())
        let name = json["event"]?.stringValue ?? "?"
        return fields.isEmpty ? name : name + " " + JSONValue.object(fields).serialized()
    }

    /// The name of a record type.
    static func recordTypeName(_ type: UInt8) -> String {
        type == EventCodec.recordType ? "events" : "type\(type)"
    }

    /// The whole state (`hearth state --json`).
    static func state(_ s: StoreState, showSecrets: Bool) -> JSONValue {
        let pins = s.pins.sorted { a, b in
            a.path != b.path ? a.path < b.path : a.query.identifier < b.query.identifier
        }
        return [
            "serverCache": node(s.serverCache),
            "pendingWrites": .array(s.pendingWrites.map(pendingWrite)),
            "trackedQueries": .array(s.trackedQueries.values.sorted { $0.id < $1.id }.map(trackedQuery)),
            "pins": .array(pins.map { .object(location($0)) }),
            "auth": s.auth.map { auth($0, showSecrets: showSecrets) } ?? .null,
            "transactions": .array(s.transactions.values.sorted { $0.id < $1.id }.map(transaction)),
            "onDisconnect": .array(s.onDisconnect.values.sorted { $0.id < $1.id }.map(onDisconnect)),
            "serverTimeOffsetMs": .number(s.serverTimeOffsetMs),
            "lastIDs": [
                "write": int(s.lastWriteID), "query": int(s.lastQueryID),
                "transaction": int(s.lastTransactionID), "onDisconnect": int(s.lastOnDisconnectID),
            ],
            "untracked": .array(s.untrackedEntries.map { ["path": path($0.path), "lastWrite": int($0.lastWrite)] }),
            "writerID": s.writerID.map { .string($0) } ?? .null,
            "writerWatermarks": .array(
                s.writerWatermarks.keys.sorted().map { w in
                    ["writer": .string(w), "id": int(s.writerWatermarks[w]!.id), "at": int(s.writerWatermarks[w]!.at)]
                }),
        ]
    }
}
