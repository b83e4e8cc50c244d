import Dispatch
import Hearth
import HearthDatabase
import Synchronization

/// The token `hearth connect` gives its database's token provider; the `auth` command
/// replaces it.
final class ConnectToken: Sendable {
    private let token: Mutex<String?>
    init(_ token: String?) { self.token = Mutex(token) }
    var current: String? {
        get { token.withLock { $0 } }
        set { token.withLock { $0 = newValue } }
    }
}

/// One `hearth connect` run: the database, the listens the commands made, and the output.
///
/// Every command and every handler runs on ``queue`` (the database's callback queue), one at
/// a time — so a write's `saved` line is always printed before its `ack`, and a listen's
/// `listening` line before its first event.
final class ConnectSession: Sendable {
    let database: Database
    let queue: DispatchQueue
    let out = ConnectPrinter()
    private let token: ConnectToken
    private let state = Mutex(State())
    private let label: (store: String, url: String)

    private struct Listen: Sendable {
        let serial: Int
        let query: DatabaseQuery
        var handles: [DatabaseHandle]
    }

    private struct State: Sendable {
        var listens: [String: Listen] = [:]
        var nextSerial = 1
        /// The `id` each write of this run was made with, until its ack is printed.
        var echoes: [Int64: JSONValue] = [:]
        /// Writes restored from an earlier run, until their ack is printed.
        var restored: Set<Int64> = []
        /// The `id` each transaction of this run was started with, until its result is printed.
        var transactionEchoes: [Int64: JSONValue] = [:]
        /// Whether the client should be online (not after `goOffline` or `--offline`).
        var wantOnline = true
    }

    /// Opens the database (offline until ``start(online:)``).
    init(store: String, url: String, token: String?, durability: Durability, cacheSize: Int?) throws(ToolError) {
        let box = ConnectToken(token)
        let queue = DispatchQueue(label: "hearth.connect")
        var options = Database.Options()
        options.storeDirectory = store
        if let cacheSize { options.cacheSizeBytes = cacheSize }
        options.durability = durability
        options.callbackQueue = queue
        // Offline until the write-result observer is in place, so that the acks of writes
        // restored from an earlier run are all seen.
        options.connectAtOpen = false
        options.tokenProvider = { _ in box.current }
        do {
            database = try Database(url: url, options: options)
        } catch {
            if case .invalidValue(let why) = error { throw .usage("\(url): \(why)") }
            throw .failed("cannot open \(store): \(error)")
        }
        self.queue = queue
        self.token = box
        self.label = (store, url)
    }

    /// Installs the observers of write results and of `.info/connected`, prints `ready`, and
    /// connects unless `online` is false.
    func start(online: Bool) {
        queue.sync {
            let pending = database.pendingWriteIDs
            state.withLock { s in
                s.restored = Set(pending.map(\.rawValue))
                s.wantOnline = online
            }
            database.observeWriteResults(on: queue) { [self] result in written(result) }
            database.observeTransactionResults(on: queue) { [self] outcome in transacted(outcome) }
            // Registering a function starts the transactions an earlier run queued for it.
            for (name, function) in ConnectSession.transactionFunctions { database.registerTransactionFunction(name, function) }
            database.reference(withPath: ".info/connected").observe(.value, on: queue) { [self] snap in
                out.emit("connected", [JSONMember(key: "connected", value: .bool(snap.databaseValue.boolValue ?? false))])
            }
            out.emit("ready", [
                JSONMember(key: "store", value: .string(label.store)), JSONMember(key: "url", value: .string(label.url)),
                JSONMember(key: "pendingWrites", value: .array(pending.map { .integer(exactly: $0.rawValue) })),
                JSONMember(key: "online", value: .bool(online)),
            ])
            if online { database.goOnline() }
        }
    }

    /// Reads commands until the end of input or `quit`, then closes the database and prints
    /// `closed`.
    func run(_ reader: LineReader) {
        var number = 0
        while let bytes = reader.nextLine() {
            number += 1
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let line = number
            let quit = queue.sync { handle(bytes, line: line) }
            if quit { break }
        }
        let closing: (pending: Int, error: String?) = queue.sync {
            let pending = database.pendingWriteIDs.count
            do { try database.close() } catch { return (pending, "\(error)") }
            return (pending, nil)
        }
        // After the handlers queued before the close.
        queue.sync {
            var fields = [JSONMember(key: "pendingWrites", value: .integer(exactly: Int64(closing.pending)))]
            if let e = closing.error { fields.append(JSONMember(key: "error", value: .string(e))) }
            out.emit("closed", fields)
        }
    }

    // MARK: - Commands

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
        case "auth": ["token"]
        case "transaction": ["path", "function", "argument"]
        case "onDisconnect": ["path", "action", "value", "values"]
        case "goOffline", "goOnline", "pending", "quit": []
        default: nil
        }
    }

    /// Runs one line; true for `quit`. A bad line prints an `error` line and nothing else.
    private func handle(_ bytes: [UInt8], line: Int) -> Bool {
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

    private func fail(line: Int, op: String?, echo: JSONValue?, _ message: String) {
        var fields = [JSONMember(key: "line", value: .integer(exactly: Int64(line)))]
        if let op { fields.append(JSONMember(key: "op", value: .string(op))) }
        fields.append(JSONMember(key: "error", value: .string(message)))
        out.emit("error", fields, echo: echo)
    }

    private func ok(_ op: String, _ fields: [JSONMember] = [], echo: JSONValue?) {
        out.emit("ok", [JSONMember(key: "op", value: .string(op))] + fields, echo: echo)
    }

    private func perform(_ f: ConnectFields, echo: JSONValue?, line: Int) throws -> Bool {
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
            var values: [String: DatabaseValue] = [:]
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
                out.emit("pushed", [
                    JSONMember(key: "path", value: .string(child.description)), JSONMember(key: "key", value: .string(child.key ?? "")),
                ], echo: echo)
            }
        case "keepSynced":
            let ref = try ConnectJSON.reference(database, f, info: false)
            let on = try f.bool("on")
            try ConnectJSON.query(ref, f["query"]).keepSynced(on)
            ok("keepSynced", [JSONMember(key: "path", value: .string(ref.description)), JSONMember(key: "on", value: .bool(on))], echo: echo)
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
        case "auth":
            let value = try f.required("token")
            guard value.isNull || value.stringValue != nil else { throw ConnectLineError("field \"token\": expected a string or null") }
            token.current = value.stringValue
            // Sent at once on an open connection (and used by the provider for the next ones);
            // writes held for an expired token go out.
            database.updateAuthToken(value.stringValue)
            ok("auth", echo: echo)
        case "transaction":
            let ref = try ConnectJSON.reference(database, f, info: false)
            guard let name = try f.optionalString("function") else { throw ConnectLineError("missing field \"function\"") }
            guard ConnectSession.transactionFunctions[name] != nil else {
                throw ConnectLineError("unknown function \"\(name)\" (one of: \(ConnectSession.transactionFunctions.keys.sorted().joined(separator: ", ")))")
            }
            let argument = f["argument"].map(ConnectJSON.databaseValue) ?? .null
            let id = try ref.runTransaction(named: name, argument: argument, on: queue)
            if let id, let echo { state.withLock { $0.transactionEchoes[id] = echo } }
            out.emit("queued", [
                JSONMember(key: "op", value: "transaction"), JSONMember(key: "path", value: .string(ref.description)),
                JSONMember(key: "function", value: .string(name)),
                JSONMember(key: "transactionId", value: id.map { .integer(exactly: $0) } ?? .null),
            ], echo: echo)
        case "onDisconnect":
            let ref = try ConnectJSON.reference(database, f, info: false)
            guard let action = try f.optionalString("action") else { throw ConnectLineError("missing field \"action\"") }
            let done: @Sendable (DatabaseError?, DatabaseReference) -> Void = { [self] error, ref in
                var fields = [JSONMember(key: "path", value: .string(ref.description)), JSONMember(key: "action", value: .string(action)),
                              JSONMember(key: "ok", value: .bool(error == nil))]
                if let error { fields.append(JSONMember(key: "error", value: .string(error.description))) }
                out.emit("onDisconnect", fields, echo: echo)
            }
            switch action {
            case "set": try ref.onDisconnectSetValue(try f.value("value"), on: queue, withCompletionBlock: done)
            case "update":
                guard let members = try f.required("values").objectMembers else {
                    throw ConnectLineError("field \"values\": expected an object of relative paths to values")
                }
                var values: [String: DatabaseValue] = [:]
                for m in members { values[m.key] = ConnectJSON.databaseValue(m.value) }
                try ref.onDisconnectUpdateChildValues(values, on: queue, withCompletionBlock: done)
            case "remove": try ref.onDisconnectRemoveValue(on: queue, withCompletionBlock: done)
            case "cancel": try ref.cancelDisconnectOperations(on: queue, withCompletionBlock: done)
            default: throw ConnectLineError("field \"action\": one of set, update, remove, cancel")
            }
            out.emit("queued", [JSONMember(key: "op", value: "onDisconnect"), JSONMember(key: "path", value: .string(ref.description)),
                                JSONMember(key: "action", value: .string(action))], echo: echo)
        case "pending":
            out.emit("pending", [
                JSONMember(key: "writeIds", value: .array(database.pendingWriteIDs.map { .integer(exactly: $0.rawValue) })),
            ], echo: echo)
        case "quit":
            return true
        default:
            throw ConnectLineError("unknown op \"\(f.op)\"")
        }
        return false
    }

    /// Prints a write's `saved` line (it is in the store, durable at the chosen tier).
    private func saved(_ op: String, _ ref: DatabaseReference, _ id: WriteID, echo: JSONValue?) {
        if let echo { state.withLock { $0.echoes[id.rawValue] = echo } }
        var fields = [JSONMember(key: "op", value: .string(op)), JSONMember(key: "path", value: .string(ref.description))]
        if op == "push" { fields.append(JSONMember(key: "key", value: .string(ref.key ?? ""))) }
        fields.append(JSONMember(key: "writeId", value: .integer(exactly: id.rawValue)))
        out.emit("saved", fields, echo: echo)
    }

    /// Prints a write's `ack` line: the server's answer, for writes of this run and of earlier
    /// ones alike.
    private func written(_ result: WriteResult) {
        let (echo, restored) = state.withLock { s in
            (s.echoes.removeValue(forKey: result.id.rawValue), s.restored.remove(result.id.rawValue) != nil)
        }
        var fields = [
            JSONMember(key: "writeId", value: .integer(exactly: result.id.rawValue)),
            JSONMember(key: "ok", value: .bool(result.error == nil)),
        ]
        if let e = result.error { fields.append(JSONMember(key: "error", value: .string(e.description))) }
        if restored { fields.append(JSONMember(key: "restored", value: true)) }
        out.emit("ack", fields, echo: echo)
    }

    /// Prints a named transaction's outcome (this run's and earlier runs' alike).
    private func transacted(_ outcome: TransactionOutcome) {
        let echo = state.withLock { $0.transactionEchoes.removeValue(forKey: outcome.id) }
        var fields = [
            JSONMember(key: "transactionId", value: .integer(exactly: outcome.id)),
            JSONMember(key: "committed", value: .bool(outcome.committed)),
        ]
        if let e = outcome.error { fields.append(JSONMember(key: "error", value: .string(e.description))) }
        out.emit("transaction", fields, echo: echo)
    }

    /// The update functions `transaction` can name: `increment` (by the argument, default
    /// 1), `append` (the argument as the next element of a list), `max` (the larger of the
    /// value and the argument).
    static let transactionFunctions: [String: TransactionFunction] = [
        "increment": { current, argument in
            if let a = argument.doubleValue, a != a.rounded() || (current.doubleValue.map { $0 != $0.rounded() } ?? false) {
                return .success(withValue: .double((current.doubleValue ?? 0) + a))
            }
            return .success(withValue: .int((current.int64Value ?? 0) &+ (argument.int64Value ?? 1)))
        },
        "append": { current, argument in
            var list = current.arrayValue ?? []
            list.append(argument)
            return .success(withValue: .array(list))
        },
        "max": { current, argument in
            guard let a = argument.doubleValue else { return .abort() }
            if let c = current.doubleValue, c >= a { return .abort() }
            return .success(withValue: argument)
        },
    ]

    private func listen(_ f: ConnectFields, echo: JSONValue?) throws {
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
        guard let registered else { throw ConnectLineError("the tag \"\(chosen ?? "")\" is in use (unlisten it first)") }
        let (tag, serial) = registered
        // Handlers run on `queue` after this command: `listening` comes first.
        var handles: [DatabaseHandle] = []
        for type in types {
            handles.append(query.observe(type, on: queue, andPreviousSiblingKeyWith: { [self] snap, previous in
                event(tag: tag, serial: serial, type, snap, previous, withKeys: withKeys)
            }, withCancel: { [self] error in
                cancelled(tag: tag, serial: serial, error)
            }))
        }
        state.withLock { s in if s.listens[tag]?.serial == serial { s.listens[tag]!.handles = handles } }
        out.emit("listening", [
            JSONMember(key: "tag", value: .string(tag)), JSONMember(key: "path", value: .string(ref.description)),
            JSONMember(key: "events", value: .array(types.map { .string(ConnectJSON.name($0)) })),
        ], echo: echo)
    }

    private func event(tag: String, serial: Int, _ type: DataEventType, _ snap: DataSnapshot, _ previous: String?, withKeys: Bool) {
        guard state.withLock({ $0.listens[tag]?.serial == serial }) else { return }  // unlistened meanwhile
        var fields = [
            JSONMember(key: "tag", value: .string(tag)), JSONMember(key: "event", value: .string(ConnectJSON.name(type))),
            JSONMember(key: "path", value: .string(snap.ref.description)), JSONMember(key: "key", value: snap.key.map(JSONValue.string) ?? .null),
        ]
        if type != .value { fields.append(JSONMember(key: "prev", value: previous.map(JSONValue.string) ?? .null)) }
        fields += Self.snapshotFields(snap, withKeys: withKeys && type == .value)
        out.emit("event", fields)
    }

    private func cancelled(tag: String, serial: Int, _ error: DatabaseError) {
        guard let listen = state.withLock({ s -> Listen? in
            guard s.listens[tag]?.serial == serial else { return nil }
            return s.listens.removeValue(forKey: tag)
        }) else { return }
        for h in listen.handles { listen.query.removeObserver(withHandle: h) }
        out.emit("cancelled", [JSONMember(key: "tag", value: .string(tag)), JSONMember(key: "error", value: .string(error.description))])
    }

    private func get(_ query: DatabaseQuery, withKeys: Bool, echo: JSONValue?, line: Int) {
        Task { [self] in
            do {
                let snap = try await query.getData()
                queue.async { [self] in
                    out.emit("get", [JSONMember(key: "path", value: .string(query.ref.description))] + Self.snapshotFields(snap, withKeys: withKeys), echo: echo)
                }
            } catch {
                queue.async { [self] in fail(line: line, op: "get", echo: echo, "\(error)") }
            }
        }
    }

    /// `exists`, `value` (Firebase's `val()`), `priority` when there is one, and with a query
    /// the children's keys in the query's order.
    private static func snapshotFields(_ snap: DataSnapshot, withKeys: Bool) -> [JSONMember] {
        var fields = [
            JSONMember(key: "exists", value: .bool(snap.exists())),
            JSONMember(key: "value", value: ConnectJSON.json(snap.databaseValue)),
        ]
        if let p = snap.priority { fields.append(JSONMember(key: "priority", value: ConnectJSON.json(p))) }
        if withKeys { fields.append(JSONMember(key: "keys", value: .array(snap.children.map { .string($0.key ?? "") }))) }
        return fields
    }
}
