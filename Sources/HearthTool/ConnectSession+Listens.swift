// ConnectSession+Listens: `listen` and `get` — the event, cancel and value lines they print.
import Dispatch
import Hearth
import HearthDatabase
import Synchronization

extension ConnectSession {
    func listen(_ f: ConnectFields, echo: JSONValue?) throws {
        let ref = try ConnectJSON.reference(database, f, info: true)
        let query = try ConnectJSON.query(ref, f["query"])
        let types = try ConnectJSON.eventTypes(f["events"])
        let withKeys = f["query"].map { !($0.isNull || $0.objectMembers?.isEmpty == true) } ?? false
        let chosen = try f.optionalString("tag")
        if chosen == "" { throw ConnectLineError("field \"tag\": empty") }
        let registered: (tag: String, serial: Int)? = state.withLock { s in
            let serial = s.nextSerial
            var tag = chosen ?? "l\(serial)"
            while chosen == nil && s.listens[tag] != nil { s.nextSerial += 1; tag = "l\(s.nextSerial)" }
            guard s.listens[tag] == nil else { return nil }
            s.nextSerial += 1
            s.listens[tag] = Listen(serial: serial, query: query, handles: [])
            return (tag, serial)
        }
        guard let registered else {
            throw ConnectLineError("the tag \"\(chosen ?? "")\" is in use (unlisten it first)")
        }
        let (tag, serial) = registered
        // Handlers run on `queue` after this command: `listening` comes first. The types are
        // one registration, so every change's events (the initial ones too) come out in
        // Firebase's type order — child events before `value` — whatever order they are listed in.
        let handles = database.observe(
            query, types, queue: queue,
            handler: { [self] type, snap, previous in
                event(tag: tag, serial: serial, type, snap, previous, withKeys: withKeys)
            },
            cancel: { [self] error in
                cancelled(tag: tag, serial: serial, error)
            })
        state.withLock { s in if s.listens[tag]?.serial == serial { s.listens[tag]!.handles = handles } }
        out.emit(
            "listening",
            [
                JSONMember(key: "tag", value: .string(tag)), JSONMember(key: "path", value: .string(ref.pathString)),
                JSONMember(key: "events", value: .array(types.map { .string(ConnectJSON.name($0)) })),
            ], echo: echo)
    }

    func event(
        tag: String, serial: Int, _ type: DataEventType, _ snap: DataSnapshot, _ previous: String?, withKeys: Bool
    ) {
        guard state.withLock({ $0.listens[tag]?.serial == serial }) else { return }  // unlistened meanwhile
        var fields = [
            JSONMember(key: "tag", value: .string(tag)),
            JSONMember(key: "event", value: .string(ConnectJSON.name(type))),
            JSONMember(key: "path", value: .string(snap.ref.pathString)),
            JSONMember(key: "key", value: snap.ref.key.map(JSONValue.string) ?? .null),
        ]
        if type != .value { fields.append(JSONMember(key: "prev", value: previous.map(JSONValue.string) ?? .null)) }
        fields += Self.snapshotFields(snap, withKeys: withKeys && type == .value)
        out.emit("event", fields)
    }

    func cancelled(tag: String, serial: Int, _ error: DatabaseError) {
        guard
            let listen = state.withLock({ s -> Listen? in
                guard s.listens[tag]?.serial == serial else { return nil }
                return s.listens.removeValue(forKey: tag)
            })
        else { return }
        for h in listen.handles { listen.query.removeObserver(withHandle: h) }
        out.emit(
            "cancelled",
            [JSONMember(key: "tag", value: .string(tag)), JSONMember(key: "error", value: .string(error.description))])
    }

    func get(_ query: DatabaseQuery, withKeys: Bool, echo: JSONValue?, line: Int) {
        Task { [self] in
            do {
                let snap = try await query.getData()
                queue.async { [self] in
                    out.emit(
                        "get",
                        [JSONMember(key: "path", value: .string(query.ref.pathString))]
                            + Self.snapshotFields(snap, withKeys: withKeys), echo: echo)
                }
            } catch {
                queue.async { [self] in fail(line: line, op: "get", echo: echo, "\(error)") }
            }
        }
    }

    /// `exists`, `value` (Firebase's `val()`), `priority` when there is one, and with a query
    /// the children's keys in the query's order.
    static func snapshotFields(_ snap: DataSnapshot, withKeys: Bool) -> [JSONMember] {
        var fields = [
            JSONMember(key: "exists", value: .bool(snap.exists())),
            JSONMember(key: "value", value: ConnectJSON.json(snap.databaseValue)),
        ]
        if let p = snap.priority { fields.append(JSONMember(key: "priority", value: ConnectJSON.json(p))) }
        if withKeys {
            fields.append(JSONMember(key: "keys", value: .array(snap.children.map { .string($0.key) })))
        }
        return fields
    }
}
