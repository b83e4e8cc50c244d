import ArgumentParser
@_spi(HearthInternals) import Hearth
import HearthLog

/// `hearth verify STORE`: every checksum and structure, read-only.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every checksum and structure of a store without modifying anything.",
        discussion: """
            Runs the same scan recovery runs, then decodes the checkpoint (directory and every \
            chunk) and every event batch recovery would replay. A torn tail of the last segment \
            (the normal result of a crash) is reported with what recovery would truncate, and is \
            not damage. Exit 0 when the store is sound, 1 when it is damaged (then `hearth salvage` \
            repairs it, keeping the longest valid prefix).
            """
    )

    @Argument(help: "The store directory.")
    var store: String

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    /// Damage: where it is, why, and what is valid before it.
    struct Finding {
        var file: String
        var offset: UInt64
        var reason: String
        /// The valid bytes of `file` before the damage.
        var validBytes: UInt64
        /// The log records before the damage, in log order (the checkpoint comes first).
        var validRecords: Int
        var validLastLSN: LSN
    }

    func run() throws {
        // A writer may checkpoint while this reads, deleting segments it has not reached yet: a
        // file gone because the MANIFEST moved on is not damage. When a pass finds damage and the
        // MANIFEST's generation changed meanwhile, the whole check runs again (bounded).
        let progress = Progress("verify")
        let pass = try Rescan.retrying(directory: store, fileSystem: POSIXFileSystem()) {
            Result { () throws(any Error) in try Self.examine(store, progress: progress) }
        } verdict: { outcome in
            if case .success(let pass) = outcome, pass.damage != nil { .failed(nil) } else { .stands }
        }.get()
        progress.finish()
        let (report, records, damage, chunks) = (pass.scan.report, pass.scan.records, pass.damage, pass.chunks)
        let torn: (file: String, offset: UInt64, bytes: UInt64)? = {
            guard let d = report.damage, d.isTornTail, let last = report.segments.last else { return nil }
            return (last.file, last.validEnd, last.size - last.validEnd)
        }()

        let out = Output()
        if json {
            out.json(Self.json(report: report, records: records, chunks: chunks, damage: damage, torn: torn))
        } else {
            if let d = damage {
                out.line("DAMAGED: \(d.file) offset \(d.offset): \(d.reason)")
                out.line(
                    "valid prefix: \(d.file) bytes 0..<\(d.validBytes); \(d.validRecords) records before the damage"
                        + (d.validRecords > 0 || d.validLastLSN > 0 ? ", through LSN \(d.validLastLSN)" : ""))
                out.line(
                    "to repair: hearth salvage \(store) (keeps the longest valid prefix; damaged files are moved aside as *.broken)"
                )
            } else {
                var line =
                    "ok: \(report.segments.count) segment\(report.segments.count == 1 ? "" : "s"), \(records.count) record\(records.count == 1 ? "" : "s")"
                if let first = records.first { line += " (LSN \(first.lsn)…\(records.last!.lsn))" }
                if let c = report.checkpoint {
                    line += ", checkpoint \(c.file) at LSN \(c.lsn) (\(chunks ?? 0) chunk\(chunks == 1 ? "" : "s"))"
                } else {
                    line += ", no checkpoint"
                }
                out.line(line)
            }
            if let t = torn {
                out.line(
                    "torn tail (recovery would truncate \(t.bytes) bytes at \(t.file):\(t.offset)); valid prefix through LSN \(report.lastLSN)"
                )
            }
            if let last = report.segments.last, last.preallocatedTail > 0 {
                out.line(
                    "note: \(last.file) ends in \(last.preallocatedTail) zero bytes preallocated by its writer after byte \(last.validEnd) (the normal end of the log; opening the store cuts them off)"
                )
            }
            for f in report.strayFiles {
                out.line("note: stray file \(f) (not named by the MANIFEST; opening the store removes it)")
            }
            for f in report.tempFiles { out.line("note: temp file \(f) (opening the store removes it)") }
            for f in report.brokenFiles { out.line("note: \(f) was moved aside by an earlier salvage") }
        }
        out.flush()
        if let d = damage {
            throw ToolError.failed(
                "store is damaged: \(d.file) offset \(d.offset): \(d.reason); run `hearth salvage \(store)` to repair")
        }
    }

    /// One pass of the check: the scan, the checkpoint, every event batch recovery would replay.
    struct Examination {
        let scan: LogScan
        let damage: Finding?
        let chunks: Int?
    }

    /// One pass; `progress` shows its phases (segments, checkpoint, records).
    static func examine(_ store: String, progress: Progress? = nil) throws -> Examination {
        let scan = try LogScan(directory: store, progress: progress)
        let report = scan.report
        let records = scan.records
        var damage: Finding?
        var chunks: Int?

        if let d = report.damage, !d.isTornTail {
            // Log-level damage: the records found before it are the valid prefix.
            let seg = report.segments.last { $0.file == d.file }
            damage = Finding(
                file: d.file, offset: d.offset, reason: Self.reason(d.error),
                validBytes: seg?.validEnd ?? d.offset, validRecords: records.count,
                validLastLSN: records.last?.lsn ?? (seg == nil ? 0 : scan.checkpointLSN))
        }
        if damage == nil, let ref = report.checkpoint {
            do {
                if let checkpoint = try Log.openCheckpoint(directory: store) {
                    progress?.phase("checkpoint", total: 1)
                    chunks = try Store.verifyCheckpoint(checkpoint) { done, total in
                        if done == 1 { progress?.phase("checkpoint", total: total) }
                        progress?.update(done)
                    }
                }
            } catch let e as StoreError {
                damage = Self.checkpointFinding(e, file: ref.file)
            } catch let e as LogError {
                damage = Self.checkpointFinding(.log(e), file: ref.file)
            }
        }
        if damage == nil {
            let replayed = records.filter { $0.lsn > scan.checkpointLSN }.count
            let skipped = records.count - replayed
            progress?.phase("records", total: replayed)
            for (i, r) in records.enumerated() where r.lsn > scan.checkpointLSN {
                progress?.update(i - skipped)
                if r.type != EventCodec.recordType {
                    if r.flags & 2 != 0 { continue }  // skippable: recovery skips it too
                    damage = Finding(
                        file: r.file, offset: r.offset, reason: "unknown record type \(r.type) (not skippable)",
                        validBytes: r.offset, validRecords: i, validLastLSN: r.lsn - 1)
                    break
                }
                do {
                    _ = try scan.events(r)
                } catch {
                    let reason: String
                    if case let .corruptRecord(_, _, _, why) = error as? StoreError {
                        reason = "undecodable events: \(why)"
                    } else {
                        reason = "\(error)"
                    }
                    damage = Finding(
                        file: r.file, offset: r.offset, reason: reason,
                        validBytes: r.offset, validRecords: i, validLastLSN: r.lsn - 1)
                    break
                }
            }
        }

        return Examination(scan: scan, damage: damage, chunks: chunks)
    }

    static func reason(_ e: LogError) -> String {
        if case let .corruption(_, _, r) = e { return r }
        return e.description
    }

    static func checkpointFinding(_ e: StoreError, file: String) -> Finding {
        switch e {
        case let .corruptCheckpoint(f, bodyOffset, reason):
            let offset = bodyOffset + LogScan.checkpointHeaderSize
            return Finding(
                file: f, offset: offset, reason: "corrupt checkpoint (body offset \(bodyOffset)): \(reason)",
                validBytes: offset, validRecords: 0, validLastLSN: 0)
        case .log(let l):
            let offset = l.offset ?? 0
            return Finding(
                file: l.file ?? file, offset: offset, reason: reason(l), validBytes: offset, validRecords: 0,
                validLastLSN: 0)
        default:
            return Finding(
                file: file, offset: 0, reason: e.description, validBytes: 0, validRecords: 0, validLastLSN: 0)
        }
    }

    static func json(
        report: ScanReport, records: [RecordInfo], chunks: Int?, damage: Finding?,
        torn: (file: String, offset: UInt64, bytes: UInt64)?
    ) -> JSONValue {
        let damageJSON: JSONValue =
            damage.map { d in
                [
                    "file": .string(d.file), "offset": Render.int(d.offset), "reason": .string(d.reason),
                    "validPrefix": [
                        "bytes": Render.int(d.validBytes), "records": Render.int(d.validRecords),
                        "lastLSN": Render.int(d.validLastLSN),
                    ],
                ]
            } ?? .null
        let tornJSON: JSONValue =
            torn.map { ["file": .string($0.file), "offset": Render.int($0.offset), "bytes": Render.int($0.bytes)] }
            ?? .null
        let checkpoint: JSONValue =
            report.checkpoint.map { c in
                [
                    "file": .string(c.file), "lsn": Render.int(c.lsn), "bodyBytes": Render.int(c.bodyLength),
                    "chunks": chunks.map(Render.int) ?? .null,
                ]
            } ?? .null
        return [
            "ok": .bool(damage == nil),
            "damage": damageJSON,
            "tornTail": tornJSON,
            "checkpoint": checkpoint,
            "segments": .array(
                report.segments.map {
                    [
                        "file": .string($0.file), "bytes": Render.int($0.size), "records": Render.int($0.recordCount),
                        "validEnd": Render.int($0.validEnd), "preallocatedTail": Render.int($0.preallocatedTail),
                    ]
                }),
            "records": Render.int(records.count),
            "firstLSN": records.first.map { Render.int($0.lsn) } ?? .null,
            "lastLSN": Render.int(max(report.lastLSN, records.last?.lsn ?? 0)),
            "strayFiles": .array(report.strayFiles.map { .string($0) }),
            "tempFiles": .array(report.tempFiles.map { .string($0) }),
            "brokenFiles": .array(report.brokenFiles.map { .string($0) }),
        ]
    }
}
