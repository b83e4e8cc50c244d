import ArgumentParser
import Hearth

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hearth apply STORE`: operations as JSON lines on stdin, acknowledged once durable.
struct ApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply operations read as JSON lines on stdin; print one JSON line per operation once it is durable.",
        discussion: """
            Each operation is one atomic commit. A line that fails prints {"ok":false,"error":"line N: …"} \
            and the rest go on; nothing of a failed line is committed; the exit code is then 1. Blank \
            lines are skipped. Creates the store if the directory holds none.

            Operations, one JSON object per line (P a path; V a value in Firebase's export
            format, with .value/.priority/.sv; {REL:V,…} relative paths to values; Q a
            query as in `hearth get --query`; B a boolean; W a write id):
              {"op":"serverSet","path":P,"value":V}
                  the server's data at P replaced
              {"op":"serverUpdate","path":P,"children":{REL:V,…}}
                  merged into the server's data
              {"op":"set","path":P,"value":V}
                  a pending user set (null deletes)
              {"op":"update","path":P,"children":{REL:V,…}}
                  a pending user update
              {"op":"ack","writeId":W}  {"op":"revert","writeId":W}
                  a pending write removed
              {"op":"trackQuery","path":P,"query":Q,"complete":B,"active":B,
               "keys":[K,…]}
                  upsert; omitted fields keep their value (a new query starts
                  incomplete and inactive); a complete filtered query without
                  keys gets its window over the server cache as its keys
              {"op":"untrackQuery","path":P,"query":Q}
              {"op":"keepSynced","path":P,"query":Q,"on":B}
              {"op":"auth","token":T,"expiresAt":MILLIS}  {"op":"signOut"}
              {"op":"serverTimeOffset","ms":N}
              {"op":"onDisconnect","action":A,"path":P,"value":V}
                  A: set (value V), update (value {REL:V,…}), remove or
                  cancel (no value)
              {"op":"compact"}
                  as `hearth compact`

            Output, one JSON line per non-blank input line, printed once the commit is durable \
            under --durability (batched: after a sync whenever input pauses, every 10 ms or every \
            1,000 lines): {"ok":true,"lsn":N}, with "writeId" (set, update), "queryId" \
            (trackQuery), "onDisconnectId" (onDisconnect) or "footprintBefore"/"footprintAfter" \
            (compact).
            """
    )

    enum Tier: String, ExpressibleByArgument, CaseIterable {
        case full, batched, buffered

        var durability: Durability {
            switch self {
            case .full: .full
            case .batched: .batched()
            case .buffered: .buffered
            }
        }
    }

    @Argument(help: "The store directory.")
    var store: String

    @Option(help: "The durability tier of every commit; an acknowledgement is printed only once it holds.")
    var durability: Tier = .full

    @Option(
        name: .customLong("cache-size"),
        help: ArgumentHelp("The store's size cap, 1 MiB … 100 MiB (default 10 MiB).", valueName: "BYTES"))
    var cacheSize: Int?

    func validate() throws {
        try Self.validateCacheSize(cacheSize)
    }

    static func validateCacheSize(_ size: Int?) throws {
        if let size, !(Store.minimumCacheSize...Store.maximumCacheSize).contains(size) {
            throw ValidationError(
                "--cache-size \(size) is outside \(Store.minimumCacheSize)…\(Store.maximumCacheSize) (1 MiB … 100 MiB)")
        }
    }

    func run() throws {
        if access(self.store, F_OK) != 0 {
            // Say so: a mistyped path otherwise silently becomes a new, empty store.
            Output.stderr(
                "hearth: note: no store at \(self.store): creating a new one (and any missing parent directories)")
        }
        let store = try StoreAccess.open(
            self.store, create: true, durability: durability.durability, cacheSizeBytes: cacheSize)
        let out = Output()
        let input = LineReader(fd: 0)
        // Acknowledgements not yet printed, in order; `durableAt` is the LSN that must be
        // durable first (nil for failures, which need nothing).
        var pending: [(line: JSONValue, durableAt: LSN?)] = []
        var pendingSince: UInt64 = 0
        var lineNumber = 0, failures = 0

        func release() throws {
            guard !pending.isEmpty else { return }
            if let lsn = pending.compactMap(\.durableAt).max(), durability == .batched {
                do { try store.waitUntilDurable(lsn) } catch {
                    // Nothing waiting is known durable: fail every pending acknowledgement.
                    for i in pending.indices where pending[i].durableAt != nil {
                        pending[i].line = ["ok": false, "error": .string("not durable: \(error)")]
                        failures += 1
                    }
                }
            }
            for p in pending { out.json(p.line) }
            out.flush()
            pending.removeAll(keepingCapacity: true)
        }

        while let line = input.nextLine() {
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            if pending.isEmpty { pendingSince = Self.monotonicNanos() }
            do {
                let op = try ApplyOperation(line: line)
                let (lsn, extra) = try Self.execute(op, on: store)
                pending.append(
                    (
                        .object(
                            [JSONMember(key: "ok", value: true), JSONMember(key: "lsn", value: Render.int(lsn))] + extra
                        ), lsn
                    ))
            } catch {
                failures += 1
                let why = (error as? StoreError).map(ExitCodes.describe) ?? "\(error)"
                pending.append(
                    (["ok": false, "error": .string("line \(lineNumber): \(why.replacingNewlines())")], nil))
            }
            // `.full` and `.buffered` hold on return from the commit. Under `.batched`, wait
            // for durability once the input pauses (or every 10 ms / 1,000 lines), so that one
            // sync covers every commit waiting.
            if durability != .batched || !input.hasBufferedLine && !input.isReadable()
                || pending.count >= 1000 || Self.monotonicNanos() - pendingSince >= 10_000_000
            {
                try release()
            }
        }
        try release()
        try store.close()
        if failures > 0 {
            throw ToolError.failed("\(failures) of the operations failed (see the output)")
        }
    }

    /// Runs one operation as one commit; returns its LSN and the extra output fields.
    static func execute(_ op: ApplyOperation, on store: Store) throws(StoreError) -> (LSN, [JSONMember]) {
        switch op {
        case let .serverSet(path, node):
            return (
                try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.applyServerOverwrite(node, at: path)
                }.lsn, []
            )
        case let .serverUpdate(path, children):
            return (
                try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.applyServerMerge(children, at: path)
                }.lsn, []
            )
        case let .set(path, node):
            return try write(.set(node), at: path, on: store)
        case let .update(path, children):
            return try write(.update(children), at: path, on: store)
        case .ack(let id):
            return (try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.ackWrite(id) }.lsn, [])
        case .revert(let id):
            return (try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.revertWrite(id) }.lsn, [])
        case let .trackQuery(location, complete, active, keys):
            // A filtered query marked complete without keys gets its window over the server
            // cache as its keys, computed inside the commit (StoreBatch.trackQuery).
            var id: Int64 = 0
            let r = try store.commit { (b: inout StoreBatch) throws(StoreError) in
                id = try b.trackQuery(at: location, complete: complete, active: active, keys: keys).id
            }
            return (r.lsn, [JSONMember(key: "queryId", value: Render.int(id))])
        case .untrackQuery(let location):
            return (
                try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.untrackQuery(at: location) }.lsn,
                []
            )
        case let .keepSynced(location, on):
            return (
                try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.keepSynced(location, on) }.lsn, []
            )
        case .auth(let token):
            return (try store.commit { $0.saveAuth(token) }.lsn, [])
        case .signOut:
            return (try store.commit { $0.clearAuth() }.lsn, [])
        case .serverTimeOffset(let ms):
            return (
                try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.setServerTimeOffset(ms) }.lsn, []
            )
        case let .onDisconnect(action, path):
            var id: Int64 = 0
            let r = try store.commit { (b: inout StoreBatch) throws(StoreError) in
                id = try b.queueOnDisconnect(action, at: path).id
            }
            return (r.lsn, [JSONMember(key: "onDisconnectId", value: Render.int(id))])
        case .compact:
            let (before, after) = try store.compact()
            return (
                store.lastLSN,
                [
                    JSONMember(key: "footprintBefore", value: Render.int(before)),
                    JSONMember(key: "footprintAfter", value: Render.int(after)),
                ]
            )
        }
    }

    static func write(
        _ operation: PendingWrite.Operation, at path: Path, on store: Store
    ) throws(StoreError) -> (LSN, [JSONMember]) {
        var id: Int64 = 0
        let r = try store.commit { (b: inout StoreBatch) throws(StoreError) in id = try b.saveWrite(operation, at: path)
        }
        return (r.lsn, [JSONMember(key: "writeId", value: Render.int(id))])
    }

    static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// Lines from a file descriptor, read with read(2) so that the tool knows whether more
/// input is already waiting (to group acknowledgements under `.batched`).
final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline resumes: everything in `start..<scanned` is
    /// known to hold none, so a long line is scanned once, not once per read (which made a
    /// line of n bytes cost O(n²/64 KiB)).
    private var scanned = 0
    private var eof = false

    init(fd: Int32) { self.fd = fd }

    /// Whether a whole line is already buffered.
    var hasBufferedLine: Bool { buffer[start...].contains(0x0A) }

    /// Whether reading would not block (data or end of input waiting).
    func isReadable() -> Bool {
        if eof { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) > 0
    }

    /// The next line's bytes without its newline; the last line may lack one. Nil at end of
    /// input. The bytes are not decoded here: the JSON parser validates them as UTF-8 and
    /// names the offset of an invalid sequence. Time linear in the input.
    func nextLine() -> [UInt8]? {
        while true {
            if let nl = buffer[max(start, scanned)...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<nl])
                start = nl + 1
                scanned = start
                if start > 1 << 16 {
                    buffer.removeFirst(start)
                    start = 0
                    scanned = 0
                }
                return line
            }
            scanned = buffer.count
            if eof {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                scanned = start
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                eof = true
            } else if n == 0 {
                eof = true
            } else {
                buffer.append(contentsOf: chunk[0..<n])
            }
        }
    }
}
