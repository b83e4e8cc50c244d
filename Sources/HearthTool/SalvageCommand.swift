import ArgumentParser
@_spi(HearthInternals) import Hearth
import HearthLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hearth salvage STORE`: repairs a damaged store by keeping its longest valid prefix.
struct SalvageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "salvage",
        abstract:
            "Repair a damaged store: keep its longest valid prefix, move damaged files aside as *.broken, and say what was lost.",
        discussion: """
            Runs the checks `verify` runs; if the store is damaged, opens it in salvage mode \
            (taking its lock): a damaged or missing MANIFEST is rebuilt from the files present; a \
            damaged checkpoint is moved aside (the log then keeps only what replays from LSN 1); \
            from a damaged record on, the log is cut: the segments from there on are moved aside \
            and the valid records before the damage are copied back under the segment's name. \
            Nothing is deleted. Then it prints every file moved aside and what was lost (records, \
            LSNs, bytes), and verifies the result. A sound store is left untouched (exit 0).
            """
    )

    @Argument(help: "The store directory.")
    var store: String

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    /// One file salvage moved aside, and what of it was lost.
    struct Moved {
        var file: String
        var movedTo: String
        var bytes: UInt64
        /// Bytes of it still live (the prefix copied back under its name).
        var keptBytes: UInt64
        var lostBytes: UInt64
        /// Whether its records could be counted (false: a segment whose header is damaged).
        var counted: Bool
        /// The LSNs of the records lost with it: every LSN after the kept state up to the
        /// highest checksum-valid record in the file (LSNs have no gaps, so the damaged records
        /// between count too).
        var lostLSNs: ClosedRange<LSN>?
        /// For a checkpoint: the LSN its state ran through.
        var checkpointLSN: LSN?

        var lostCount: Int { lostLSNs.map { Int($0.upperBound - $0.lowerBound + 1) } ?? 0 }
    }

    func run() throws {
        let progress = Progress("salvage")
        let before = try VerifyCommand.examine(store, progress: progress)
        progress.finish()
        let out = Output()
        guard let damage = before.damage else {
            if json {
                out.json([
                    "salvaged": .bool(false), "damage": .null, "movedAside": .array([]), "lostRecords": Render.int(0),
                    "lostBytes": Render.int(0), "lostLSNs": .null, "lostCheckpointLSN": .null,
                    "lastLSN": Render.int(before.scan.report.lastLSN),
                ])
            } else {
                out.line("nothing to salvage: the store is sound (run `hearth verify \(store)` for details)")
            }
            return
        }
        let sizesBefore = Self.sizes(store)
        let checkpointBefore = before.scan.report.checkpoint

        var options = Store.Options()
        options.salvage = true
        options.createIfMissing = false
        options.backgroundMaintenance = false
        options.lazyCacheLoad = false
        let opened = try Store.open(directory: store, options: options)
        let lastLSN = opened.recovery.lastLSN
        try opened.close()

        let sizesAfter = Self.sizes(store)
        var moved: [Moved] = []
        for name in sizesAfter.keys.sorted() where name.hasSuffix(".broken") && sizesBefore[name] == nil {
            let original = Self.originalName(name)
            let bytes = sizesAfter[name] ?? 0
            var m = Moved(file: original, movedTo: name, bytes: bytes, keptBytes: 0, lostBytes: bytes, counted: true)
            if original == "MANIFEST" {
                m.lostBytes = 0  // rebuilt from the files present
            } else if original.hasPrefix("ckpt-") {
                m.checkpointLSN = checkpointBefore?.file == original ? checkpointBefore?.lsn : nil
            } else if let scan = Log.scanSegmentFile(directory: store, name: name) {
                if sizesAfter[original] != nil, let last = scan.records.last(where: { $0.lsn <= lastLSN }) {
                    m.keptBytes = last.offset + LogScan.extent(last)
                }
                let first = max(scan.baseLSN, lastLSN + 1)
                if let highest = scan.highestLSN, highest >= first {
                    m.lostLSNs = first...highest
                    m.lostBytes = bytes - m.keptBytes
                } else {
                    m.lostBytes = scan.size - scan.validEnd  // its records are all in the kept state
                }
            } else {
                m.counted = false
            }
            moved.append(m)
        }
        let lostCount = moved.reduce(0) { $0 + $1.lostCount }
        let lostLSNs: ClosedRange<LSN>? = moved.compactMap(\.lostLSNs).reduce(nil) { acc, r in
            acc.map { min($0.lowerBound, r.lowerBound)...max($0.upperBound, r.upperBound) } ?? r
        }
        let lostBytes = moved.reduce(0) { $0 + $1.lostBytes }
        let lostCheckpointLSN = moved.compactMap(\.checkpointLSN).filter { $0 > lastLSN }.max()
        let uncounted = moved.filter { !$0.counted }.map(\.movedTo)

        let after = try VerifyCommand.examine(store)
        if json {
            out.json(
                Self.json(
                    damage: damage, moved: moved, lostCount: lostCount, lostLSNs: lostLSNs, lostBytes: lostBytes,
                    lostCheckpointLSN: lostCheckpointLSN, lastLSN: lastLSN, after: after))
        } else {
            out.line("damage: \(damage.file) offset \(damage.offset): \(damage.reason)")
            for m in moved {
                var line = "moved aside: \(m.file) → \(m.movedTo) (\(m.bytes) bytes)"
                if m.file == "MANIFEST" {
                    line += "; a new MANIFEST was built from the files present"
                } else if let lsn = m.checkpointLSN {
                    line += "; it held the state through LSN \(lsn)"
                } else if m.counted {
                    if m.keptBytes > 0 { line += "; bytes 0..<\(m.keptBytes) kept as \(m.file)" }
                    line += "; lost \(Self.records(m.lostCount, m.lostLSNs)), \(m.lostBytes) bytes"
                } else {
                    line += "; its header is damaged: records not counted, \(m.lostBytes) bytes lost"
                }
                out.line(line)
            }
            var lost = "lost: \(Self.records(lostCount, lostLSNs)), \(lostBytes) bytes"
            if !uncounted.isEmpty { lost += ", and the uncounted records of \(uncounted.joined(separator: ", "))" }
            if let c = lostCheckpointLSN {
                lost += "; the checkpoint's state through LSN \(c) (the records it covered are no longer on disk)"
            }
            out.line(lost)
            out.line("kept: the store's state through LSN \(lastLSN)")
            if let d = after.damage {
                out.line("still DAMAGED: \(d.file) offset \(d.offset): \(d.reason)")
            } else {
                out.line("verify: ok")
            }
        }
        out.flush()
        if let d = after.damage {
            throw ToolError.failed("salvage could not repair the store: \(d.file) offset \(d.offset): \(d.reason)")
        }
    }

    /// "N records (LSN a…b)".
    static func records(_ count: Int, _ lsns: ClosedRange<LSN>?) -> String {
        guard let r = lsns else { return "\(count) records" }
        return
            "\(count) record\(count == 1 ? "" : "s") (LSN \(r.lowerBound == r.upperBound ? "\(r.lowerBound)" : "\(r.lowerBound)…\(r.upperBound)"))"
    }

    /// `seg-….log.broken` or `seg-….log.3.broken` → `seg-….log`.
    static func originalName(_ broken: String) -> String {
        var name = String(broken.dropLast(".broken".count))
        if let dot = name.lastIndex(of: "."), name[name.index(after: dot)...].allSatisfy(\.isNumber),
            name.index(after: dot) < name.endIndex
        {
            name = String(name[..<dot])
        }
        return name
    }

    /// The size of every file in `directory`.
    static func sizes(_ directory: String) -> [String: UInt64] {
        let fs = POSIXFileSystem()
        var result: [String: UInt64] = [:]
        for name in (try? fs.listDirectory(directory)) ?? [] {
            var st = stat()
            if stat(directory + "/" + name, &st) == 0 { result[name] = UInt64(st.st_size) }
        }
        return result
    }

    static func json(
        damage: VerifyCommand.Finding, moved: [Moved], lostCount: Int, lostLSNs: ClosedRange<LSN>?, lostBytes: UInt64,
        lostCheckpointLSN: LSN?, lastLSN: LSN, after: VerifyCommand.Examination
    ) -> JSONValue {
        func lsns(_ r: ClosedRange<LSN>?) -> JSONValue {
            guard let r else { return .null }
            return ["first": Render.int(r.lowerBound), "last": Render.int(r.upperBound)]
        }
        return [
            "salvaged": .bool(true),
            "damage": [
                "file": .string(damage.file), "offset": Render.int(damage.offset), "reason": .string(damage.reason),
            ],
            "movedAside": .array(
                moved.map { m in
                    [
                        "file": .string(m.file), "movedTo": .string(m.movedTo), "bytes": Render.int(m.bytes),
                        "keptBytes": Render.int(m.keptBytes), "lostBytes": Render.int(m.lostBytes),
                        "lostRecords": m.counted ? Render.int(m.lostCount) : .null, "lostLSNs": lsns(m.lostLSNs),
                        "checkpointLSN": m.checkpointLSN.map(Render.int) ?? .null,
                    ]
                }),
            "lostRecords": Render.int(lostCount),
            "lostBytes": Render.int(lostBytes),
            "lostLSNs": lsns(lostLSNs),
            "lostCheckpointLSN": lostCheckpointLSN.map(Render.int) ?? .null,
            "lastLSN": Render.int(lastLSN),
            "ok": .bool(after.damage == nil),
        ]
    }
}
