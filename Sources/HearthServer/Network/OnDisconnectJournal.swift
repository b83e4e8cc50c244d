import Hearth
import HearthLog
import Synchronization

/// The onDisconnect operations of the open connections, kept durably so that a restart (after a
/// clean stop or a crash) runs those of the connections it lost: a HearthLog `Log` in the
/// store directory's `ondisconnect/` subdirectory (FORMAT.md, "The onDisconnect journal").
///
/// Each change is one record — an operation registered, a session's operations cancelled
/// under a path, a session ended — so a registration costs one append, not a rewrite of every
/// connection's operations. The log is compacted by a checkpoint holding the live operations
/// once the records since the last one outnumber them (at least ``compactionMinimum``): the
/// checkpoint's cost, proportional to what is live, is paid once per as many appends, so the
/// journal's size and its replay at startup stay proportional to the live operations.
///
/// It keeps the live operations in memory too (for the checkpoint), at most the core's total
/// onDisconnect budget.
final class OnDisconnectJournal: Sendable {
    /// Records since the last checkpoint below which no checkpoint is made.
    static let compactionMinimum = 1_024

    struct Live: Sendable {
        /// The live operations by session, in the order queued.
        var sessions: [UInt64: [OnDisconnectOperation]] = [:]
        var count = 0
        var sinceCheckpoint = 0

        mutating func apply(_ change: OnDisconnectChange) {
            sinceCheckpoint += 1
            switch change {
            case let .registered(session, op):
                sessions[session, default: []].append(op)
                count += 1
            case let .cancelled(session, path):
                guard let ops = sessions[session] else { return }
                let kept = ops.filter { !path.contains($0.path) }
                count -= ops.count - kept.count
                sessions[session] = kept.isEmpty ? nil : kept
            case .ended(let session):
                count -= sessions.removeValue(forKey: session)?.count ?? 0
            }
        }
    }

    let directory: String
    let fileSystem: any FileSystem
    /// The log: open from the start when the directory exists (a journal to replay), otherwise
    /// created with the first change — a server whose clients never queue an onDisconnect
    /// operation never writes one, and a store with no journal has no pending operation.
    /// Appended to and compacted by the commit thread only.
    let log: Mutex<Log?>
    let live: Mutex<Live>

    /// The journal's directory inside a store's.
    static func directory(inStore store: String) -> String { store + "/ondisconnect" }

    /// Opens the journal in `directory` and replays it, if there is one.
    init(directory: String, fileSystem: any FileSystem) throws(StoreError) {
        self.directory = directory
        self.fileSystem = fileSystem
        guard fileSystem.directoryExists(directory) else {
            log = Mutex(nil)
            live = Mutex(Live())
            return
        }
        let log: Log
        do { log = try Self.open(directory, fileSystem) } catch { throw .log(error) }
        var state = Live()
        do {
            let after = log.checkpoint?.lsn ?? 0
            if let checkpoint = log.checkpoint {
                for (session, op) in try OnDisconnectCodec.decodeCheckpoint(try checkpoint.readBody()) {
                    state.apply(.registered(session: session, op))
                }
            }
            try log.replay(after: after, knownTypes: OnDisconnectCodec.recordTypes) { record in
                do throws(OnDisconnectCodec.Malformed) {
                    state.apply(try OnDisconnectCodec.decode(record.payload, type: record.type))
                } catch {
                    throw StoreError.corruptRecord(
                        file: "ondisconnect/" + record.file, offset: record.offset, lsn: record.lsn,
                        reason: error.description)
                }
            }
        } catch let error as StoreError {
            throw error
        } catch let error as LogError {
            throw .log(error)
        } catch {
            throw .corruptCheckpoint(file: "ondisconnect", offset: 0, reason: "\(error)")
        }
        state.sinceCheckpoint = 0
        self.log = Mutex(log)
        live = Mutex(state)
    }

    static func open(_ directory: String, _ fileSystem: any FileSystem) throws(LogError) -> Log {
        var options = Log.Options()
        options.segmentSize = 4 << 20
        return try Log.open(directory: directory, fileSystem: fileSystem, options: options)
    }

    /// The live operations by session.
    var sessions: [(UInt64, [OnDisconnectOperation])] {
        live.withLock { $0.sessions.map { ($0.key, $0.value) } }
    }

    /// Appends `changes` as one atomic batch, durably (synced) before it returns; compacts when
    /// the records since the last checkpoint outnumber the live operations.
    func append(_ changes: [OnDisconnectChange]) throws(LogError) {
        guard !changes.isEmpty else { return }
        let log: Log
        if let open = self.log.withLock({ $0 }) {
            log = open
        } else {
            log = try Self.open(directory, fileSystem)
            self.log.withLock { $0 = log }
        }
        let records = changes.map { OnDisconnectCodec.encode($0) }
        let lsn = try log.appendBatch(records, durability: .full)
        let body = live.withLock { s -> [UInt8]? in
            for c in changes { s.apply(c) }
            guard s.sinceCheckpoint >= max(Self.compactionMinimum, s.count) else { return nil }
            s.sinceCheckpoint = 0
            return OnDisconnectCodec.encodeCheckpoint(s.sessions)
        }
        if let body { try log.installCheckpoint(lsn: lsn, body: body) }
    }

    /// Compacts now: one checkpoint of the live operations (none after startup ended them all).
    func compact() throws(LogError) {
        guard let log = self.log.withLock({ $0 }) else { return }
        let body = live.withLock { s -> [UInt8] in
            s.sinceCheckpoint = 0
            return OnDisconnectCodec.encodeCheckpoint(s.sessions)
        }
        let lsn = log.lastLSN
        guard lsn > (log.checkpoint?.lsn ?? 0) else { return }
        try log.installCheckpoint(lsn: lsn, body: body)
    }

    func close() { try? log.withLock { $0 }?.close() }
}
