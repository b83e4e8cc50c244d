// ConnectSession+Commands: one input line of `hearth connect` — parsed, checked against the fields its op
// takes, and performed; a bad line prints an `error` line and nothing else.
import Dispatch
import Hearth
import HearthDatabase
import Synchronization

extension ConnectSession {
    /// The fields each op takes (besides `op` and `id`); nil for an unknown op.
    static func fields(of op: String) -> Set<String>? {
        switch op {
        case "set", "push": ["path", "value", "priority"]
        case "update": ["path", "values"]
        case "remove": ["path"]
        case "keepSynced": ["path", "query", "on"]
        case "listen": ["path", "query", "events", "tag"]
        case "unlisten": ["tag"]
        case "get": ["path", "query"]
        case "auth", "appCheck": ["token"]
        case "transaction": ["path", "function", "argument"]
        case "onDisconnect": ["path", "action", "value", "values"]
        case "goOffline", "goOnline", "pending", "quit": []
        default: nil
        }
    }

    /// Runs one line; true for `quit`. A bad line prints an `error` line and nothing else.
    func handle(_ bytes: [UInt8], line: Int) -> Bool {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            fail(line: line, op: nil, echo: nil, "invalid JSON: \(error)")
            return false
        }
        let echo = json.objectMembers?.first { $0.key == "id" }?.value
        do {
            let fields = try ConnectFields(json, allowed: Self.fields(of:))
            return try perform(fields, echo: echo, line: line)
        } catch {
            fail(line: line, op: json["op"]?.stringValue, echo: echo, "\(error)")
            return false
        }
    }

    func fail(line: Int, op: String?, echo: JSONValue?, _ message: String) {
        var fields = [JSONMember(key: "line", value: .integer(exactly: Int64(line)))]
        if let op { fields.append(JSONMember(key: "op", value: .string(op))) }
        fields.append(JSONMember(key: "error", value: .string(message)))
        out.emit("error", fields, echo: echo)
    }

    func ok(_ op: String, _ fields: [JSONMember] = [], echo: JSONValue?) {
        out.emit("ok", [JSONMember(key: "op", value: .string(op))] + fields, echo: echo)
    }

    func perform(_ f: ConnectFields, echo: JSONValue?, line: Int) throws -> Bool {
        switch f.op {
        case "set":
            let ref = try ConnectJSON.reference(database, f, info: false)
            let priority = f["priority"].map(ConnectJSON.databaseValue)
            saved("set", ref, try ref.setValue(try f.value("value"), andPriority: priority), echo: echo)
        case "update":
            let ref = try ConnectJSON.reference(database, f, info: false)
            guard let members = try f.required("values").objectMembers else {
                throw ConnectLineError("field \"values\": expected an object of relative paths to values")
            }
            var values = DatabaseValue.Object()
            for m in members { values[m.key] = ConnectJSON.databaseValue(m.value) }
            saved("update", ref, try ref.updateChildValues(values), echo: echo)
        case "remove":
            let ref = try ConnectJSON.reference(database, f, info: false)
            saved("remove", ref, try ref.removeValue(), echo: echo)
        case "push":
            let child = try ConnectJSON.reference(database, f, info: false).childByAutoId()
            if f["value"] != nil {
                let priority = f["priority"].map(ConnectJSON.databaseValue)
                saved("push", child, try child.setValue(try f.value("value"), andPriority: priority), echo: echo)
            } else {
                if f["priority"] != nil { throw ConnectLineError("field \"priority\": only with a value") }
                out.emit(
                    "pushed",
                    [
                        JSONMember(key: "path", value: .string(child.pathString)),
                        JSONMember(key: "key", value: .string(child.key ?? "")),
                    ], echo: echo)
            }
        case "keepSynced":
            let ref = try ConnectJSON.reference(database, f, info: false)
            let on = try f.bool("on")
            try ConnectJSON.query(ref, f["query"]).keepSyncedReportingErrors(on)
            ok(
                "keepSynced",
                [JSONMember(key: "path", value: .string(ref.pathString)), JSONMember(key: "on", value: .bool(on))],
                echo: echo)
        case "listen":
            try listen(f, echo: echo)
        case "unlisten":
            guard let tag = try f.optionalString("tag") else { throw ConnectLineError("missing field \"tag\"") }
            guard let listen = state.withLock({ $0.listens.removeValue(forKey: tag) }) else {
                throw ConnectLineError("no listen tagged \"\(tag)\"")
            }
            for h in listen.handles { listen.query.removeObserver(withHandle: h) }
            ok("unlisten", [JSONMember(key: "tag", value: .string(tag))], echo: echo)
        case "get":
            let ref = try ConnectJSON.reference(database, f, info: true)
            let query = try ConnectJSON.query(ref, f["query"])
            let withKeys = f["query"].map { !($0.isNull || $0.objectMembers?.isEmpty == true) } ?? false
            get(query, withKeys: withKeys, echo: echo, line: line)
        case "goOffline":
            state.withLock { $0.wantOnline = false }
            database.goOffline()
            ok("goOffline", echo: echo)
        case "goOnline":
            state.withLock { $0.wantOnline = true }
            database.goOnline()
            ok("goOnline", echo: echo)
        case "auth", "appCheck":
            let value = try f.required("token")
            guard value.isNull || value.stringValue != nil else {
                throw ConnectLineError("field \"token\": expected a string or null")
            }
            // Kept for the providers (the next connections) and sent at once on an open
            // connection: `auth` releases writes held for an expired token; `appcheck`, or
            // `unappcheck` for null.
            if f.op == "auth" {
                token.current = value.stringValue
                database.updateAuthToken(value.stringValue)
            } else {
                appCheckToken.current = value.stringValue
                database.updateAppCheckToken(value.stringValue)
            }
            ok(f.op, echo: echo)
        case "transaction":
            let ref = try ConnectJSON.reference(database, f, info: false)
            guard let name = try f.optionalString("function") else {
                throw ConnectLineError("missing field \"function\"")
            }
            guard ConnectSession.transactionFunctions[name] != nil else {
                throw ConnectLineError(
                    "unknown function \"\(name)\" (one of: \(ConnectSession.transactionFunctions.keys.sorted().joined(separator: ", ")))"
                )
            }
            let argument = f["argument"].map(ConnectJSON.databaseValue) ?? .null
            let id = try ref.runTransaction(named: name, argument: argument, on: queue)
            if let id, let echo { state.withLock { $0.transactionEchoes[id] = echo } }
            out.emit(
                "queued",
                [
                    JSONMember(key: "op", value: "transaction"),
                    JSONMember(key: "path", value: .string(ref.pathString)),
                    JSONMember(key: "function", value: .string(name)),
                    JSONMember(key: "transactionId", value: id.map { .integer(exactly: $0) } ?? .null),
                ], echo: echo)
        case "onDisconnect":
            let ref = try ConnectJSON.reference(database, f, info: false)
            guard let action = try f.optionalString("action") else {
                throw ConnectLineError("missing field \"action\"")
            }
            let done: @Sendable (DatabaseError?, DatabaseReference) -> Void = { [self] error, ref in
                var fields = [
                    JSONMember(key: "path", value: .string(ref.pathString)),
                    JSONMember(key: "action", value: .string(action)),
                    JSONMember(key: "ok", value: .bool(error == nil)),
                ]
                if let error { fields.append(JSONMember(key: "error", value: .string(error.description))) }
                out.emit("onDisconnect", fields, echo: echo)
            }
            switch action {
            case "set": try ref.onDisconnectSetValue(try f.value("value"), on: queue, withCompletionBlock: done)
            case "update":
                guard let members = try f.required("values").objectMembers else {
                    throw ConnectLineError("field \"values\": expected an object of relative paths to values")
                }
                var values = DatabaseValue.Object()
                for m in members { values[m.key] = ConnectJSON.databaseValue(m.value) }
                try ref.onDisconnectUpdateChildValues(values, on: queue, withCompletionBlock: done)
            case "remove": try ref.onDisconnectRemoveValue(on: queue, withCompletionBlock: done)
            case "cancel": try ref.cancelDisconnectOperations(on: queue, withCompletionBlock: done)
            default: throw ConnectLineError("field \"action\": one of set, update, remove, cancel")
            }
            out.emit(
                "queued",
                [
                    JSONMember(key: "op", value: "onDisconnect"),
                    JSONMember(key: "path", value: .string(ref.pathString)),
                    JSONMember(key: "action", value: .string(action)),
                ], echo: echo)
        case "pending":
            out.emit(
                "pending",
                [
                    JSONMember(
                        key: "writeIds", value: .array(database.pendingWriteIDs.map { .integer(exactly: $0.rawValue) }))
                ], echo: echo)
        case "quit":
            return true
        default:
            throw ConnectLineError("unknown op \"\(f.op)\"")
        }
        return false
    }
}
