// ConnectSession: one `hearth connect` run — the database, its start and the loop over input lines; the
// commands are in +Commands, write and transaction replies in +Writes, listens and gets in +Listens.
import Dispatch
import Hearth
import HearthDatabase
import Synchronization

/// One `hearth connect` run: the database, the listens the commands made, and the output.
///
/// Every command and every handler runs on ``queue`` (the database's callback queue), one at
/// a time — so a write's `saved` line is always printed before its `ack`, and a listen's
/// `listening` line before its first event.
final class ConnectSession: Sendable {
    let database: Database
    let queue: DispatchQueue
    let out = ConnectPrinter()
    let token: ConnectToken
    /// The App Check token the database's App Check provider answers with.
    let appCheckToken: ConnectToken
    let state = Mutex(State())
    let label: (store: String, url: String)

    struct Listen: Sendable {
        let serial: Int
        let query: DatabaseQuery
        var handles: [DatabaseHandle]
    }

    struct State: Sendable {
        var listens: [String: Listen] = [:]
        var nextSerial = 1
        /// The `id` each write of this run was made with, until its ack is printed.
        var echoes: [Int64: JSONValue] = [:]
        /// Writes of an earlier run (pending, or with a kept result), until their ack is printed.
        var restored: Set<Int64> = []
        /// The `id` each transaction of this run was started with, until its result is printed.
        var transactionEchoes: [Int64: JSONValue] = [:]
        /// Whether the client should be online (not after `goOffline` or `--offline`).
        var wantOnline = true
    }

    /// Opens the database (offline until ``start(online:)``).
    init(
        store: String, url: String, token: String?, appCheckToken: String? = nil, durability: Durability,
        cacheSize: Int?
    ) throws(ToolError) {
        let box = ConnectToken(token)
        let appCheckBox = ConnectToken(appCheckToken)
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
        options.appCheckTokenProvider = { _ in appCheckBox.current }
        do {
            database = try Database(url: url, options: options)
        } catch {
            if case .invalidValue(let why) = error { throw .usage("\(url): \(why)") }
            throw .failed("cannot open \(store): \(error)")
        }
        self.queue = queue
        self.token = box
        self.appCheckToken = appCheckBox
        self.label = (store, url)
    }

    /// Installs the observers of write results and of `.info/connected`, prints `ready`, and
    /// connects unless `online` is false.
    func start(online: Bool) {
        queue.sync {
            let pending = database.pendingWriteIDs
            // An earlier run's writes: those still pending, and those whose result it kept
            // (decided, not yet handed to the app) — both answered as `restored`.
            let kept = database.store.transactions().compactMap { Database.writeResult(of: $0)?.id.rawValue }
            state.withLock { s in
                s.restored = Set(pending.map(\.rawValue) + kept)
                s.wantOnline = online
            }
            database.observeWriteResults(on: queue) { [self] result in written(result) }
            database.observeTransactionResults(on: queue) { [self] outcome in transacted(outcome) }
            // Registering a function starts the transactions an earlier run queued for it.
            for (name, function) in ConnectSession.transactionFunctions {
                database.registerTransactionFunction(name, function)
            }
            database.reference(withPath: ".info/connected").observe(.value, on: queue) { [self] snap in
                out.emit(
                    "connected", [JSONMember(key: "connected", value: .bool(snap.databaseValue.boolValue ?? false))])
            }
            out.emit(
                "ready",
                [
                    JSONMember(key: "store", value: .string(label.store)),
                    JSONMember(key: "url", value: .string(label.url)),
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
}
