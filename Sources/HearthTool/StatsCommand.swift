import ArgumentParser
import Hearth

/// `hearth stats STORE`: sizes and counts.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract:
            "Print files and sizes, record counts, compression, live and dead bytes, the footprint against the cap, and state counts.",
        discussion: """
            Opens the store (taking its lock; recovery may truncate a torn tail and maintenance may \
            run, pruning only with --cache-size: the cap is the opener's, and a store an app ran \
            with a larger cap than the default must not lose its cache to being measured); with \
            --read-only, or when the directory is not writable or another process holds the \
            store, reads it without the lock and writes nothing.
            """
    )

    @OptionGroup var options: CappedStoreArguments

    @Flag(
        name: .customLong("read-only"),
        help:
            "Read without the lock and write nothing (automatic when the directory is not writable or another process holds the store)."
    )
    var readOnly = false

    func run() throws {
        let store = try StoreAccess.openForReading(options.store, readOnly: readOnly, cacheSizeBytes: options.cacheSize)
        let s = try store.stats()
        // The store is open and idle (maintenance runs inline), so the scan sees a quiet log.
        // (Read-only under a live writer, the two may be a few commits apart.)
        let scan = try LogScan(directory: options.store)
        try store.close()

        let checkpointLSN = s.checkpointLSN
        var byType: [UInt8: Int] = [:]
        var live = 0, dead = 0
        var deadBytes: UInt64 = 0
        var liveStored = 0, liveRaw = 0
        for r in scan.records {
            byType[r.type, default: 0] += 1
            if r.lsn <= checkpointLSN {
                dead += 1
                deadBytes += LogScan.extent(r)
            } else {
                live += 1
                liveStored += r.storedSize
                liveRaw += r.rawSize
            }
        }
        let liveBytes = s.footprintBytes - min(deadBytes, s.footprintBytes)
        let ratio: Double? = liveRaw > 0 ? Double(liveStored) / Double(liveRaw) : nil

        // Without --cache-size the store opened with the largest cap so that reading it prunes
        // nothing (StoreAccess.openToRead); the footprint is still shown against the default.
        let cap = options.cacheSize ?? Store.defaultCacheSize
        let out = Output()
        if options.json {
            out.json([
                "footprintBytes": Render.int(s.footprintBytes),
                "cacheSizeBytes": Render.int(cap),
                "capExceededByUnprunableData": .bool(s.capExceededByUnprunableData),
                "liveBytes": Render.int(liveBytes),
                "deadBytes": Render.int(deadBytes),
                "files": .array(s.files.map { ["name": .string($0.name), "bytes": Render.int($0.bytes)] }),
                "records": Render.int(live + dead),
                "liveRecords": Render.int(live),
                "deadRecords": Render.int(dead),
                "recordsByType": .object(
                    byType.sorted { $0.key < $1.key }.map {
                        JSONMember(key: Render.recordTypeName($0.key), value: Render.int($0.value))
                    }),
                "compressionRatio": ratio.map { .number($0) } ?? .null,
                "checkpointLSN": Render.int(checkpointLSN),
                "lastLSN": Render.int(s.lastLSN),
                "logBytesSinceCheckpoint": Render.int(s.logBytesSinceCheckpoint),
                "serverCacheBytes": Render.int(s.serverCacheBytes),
                "pendingWrites": Render.int(s.pendingWrites),
                "trackedQueries": Render.int(s.trackedQueries),
                "activeQueries": Render.int(s.activeQueries),
                "pins": Render.int(s.pins),
                "transactions": Render.int(s.transactions),
                "onDisconnectOperations": Render.int(s.onDisconnectOperations),
                "untrackedEntries": Render.int(s.untrackedEntries),
            ])
        } else {
            let percent = Double(s.footprintBytes) * 100 / Double(cap)
            out.line(
                "footprint: \(s.footprintBytes) bytes of a \(cap)-byte cap (\(Self.fixed(percent, 1))%)"
                    + (s.capExceededByUnprunableData ? " — exceeded by unprunable data" : ""))
            out.line("files:")
            for f in s.files { out.line("  \(f.name)  \(f.bytes) bytes") }
            out.line("live bytes: \(liveBytes); dead bytes: \(deadBytes) (records already in the checkpoint)")
            out.line(
                "records: \(live + dead) (\(live) live, \(dead) dead)"
                    + byType.sorted { $0.key < $1.key }.map { "; \(Render.recordTypeName($0.key)): \($0.value)" }
                    .joined())
            out.line("compression ratio (stored/raw, live records): " + (ratio.map { Self.fixed($0, 3) } ?? "n/a"))
            out.line(
                "checkpoint LSN: \(checkpointLSN); last LSN: \(s.lastLSN); log bytes since checkpoint: \(s.logBytesSinceCheckpoint)"
            )
            out.line("server cache: \(s.serverCacheBytes) bytes encoded; untracked entries: \(s.untrackedEntries)")
            out.line("pending writes: \(s.pendingWrites)")
            out.line("tracked queries: \(s.trackedQueries) (\(s.activeQueries) active)")
            out.line("pins: \(s.pins)")
            out.line("transactions: \(s.transactions)")
            out.line("onDisconnect operations: \(s.onDisconnectOperations)")
        }
    }

    /// `x` with `digits` fraction digits.
    static func fixed(_ x: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let n = Int((x * scale).rounded())
        let whole = n / Int(scale), frac = abs(n % Int(scale))
        let f = String(frac)
        return digits == 0 ? "\(whole)" : "\(whole).\(String(repeating: "0", count: digits - f.count))\(f)"
    }
}
