import ArgumentParser
@_spi(HearthInternals) import Hearth
import HearthLog

/// `hearth dump STORE`: every record, decoded. Read-only.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print every log record, decoded: file, offset, LSN, type, sizes and its events.",
        discussion: """
            Reads the segment files directly (no lock, no recovery, nothing modified). The auth \
            token is shown as "<redacted>" unless --show-secrets is given. Damage stops the dump \
            after the valid records (exit 1); a torn tail is noted on stderr (exit 0).
            """
    )

    @Argument(help: "The store directory.")
    var store: String

    // `.unconditional`: `--from -1` is an invalid value, not a missing one.
    @Option(
        name: .customLong("from"), parsing: .unconditional,
        help: ArgumentHelp("Only records with LSN ≥ this.", valueName: "LSN"))
    var from: UInt64 = 0

    @Flag(help: "Print one JSON object per record (JSON lines).")
    var json = false

    @Flag(name: .customLong("show-secrets"), help: "Show the auth token instead of redacting it.")
    var showSecrets = false

    func run() throws {
        let generation = Log.manifestGeneration(store, POSIXFileSystem())
        let progress = Progress("dump")
        let scan = try LogScan(directory: store, progress: progress)
        let records = scan.records.filter { $0.lsn >= from }
        let out = Output()
        if !json, let c = scan.report.checkpoint {
            out.line("checkpoint \(c.file): state through LSN \(c.lsn), body \(c.bodyLength) bytes")
        }
        var undecodable: (RecordInfo, String)?
        progress.phase("records", total: records.count)
        for (i, r) in records.enumerated() {
            progress.update(i)
            var events: [StoreEvent]?
            var problem: String?
            if r.type == EventCodec.recordType {
                do { events = try scan.events(r) } catch {
                    if case let .corruptRecord(_, _, _, why) = error as? StoreError {
                        problem = "undecodable events: \(why)"
                    } else {
                        problem = "\(error)"
                    }
                }
            }
            if let problem, undecodable == nil { undecodable = (r, problem) }
            if json {
                var m: [JSONMember] = [
                    JSONMember(key: "file", value: .string(r.file)),
                    JSONMember(key: "offset", value: Render.int(r.offset)),
                    JSONMember(key: "lsn", value: Render.int(r.lsn)),
                    JSONMember(key: "type", value: Render.int(r.type)),
                    JSONMember(key: "typeName", value: .string(Render.recordTypeName(r.type))),
                    JSONMember(key: "flags", value: Render.int(r.flags)),
                    JSONMember(key: "storedSize", value: Render.int(r.storedSize)),
                    JSONMember(key: "rawSize", value: Render.int(r.rawSize)),
                    JSONMember(key: "inCheckpoint", value: .bool(r.lsn <= scan.checkpointLSN)),
                    JSONMember(
                        key: "events",
                        value: events.map { .array($0.map { Render.event($0, showSecrets: showSecrets) }) } ?? .null),
                ]
                if let problem { m.append(JSONMember(key: "error", value: .string(problem))) }
                out.json(.object(m))
            } else {
                var head =
                    "\(r.file) @\(r.offset)  LSN \(r.lsn)  \(Render.recordTypeName(r.type))  stored \(r.storedSize) raw \(r.rawSize)"
                if r.flags & 1 != 0 { head += "  compressed" }
                if r.flags & 2 != 0 { head += "  skippable" }
                if r.flags & 4 != 0 { head += "  continued" }
                if r.lsn <= scan.checkpointLSN { head += "  (in checkpoint)" }
                out.line(head)
                for e in events ?? [] { out.line("    " + Render.eventLine(e, showSecrets: showSecrets)) }
                if let problem { out.line("    ERROR: \(problem)") }
            }
        }
        progress.finish()
        out.flush()

        let report = scan.report
        let damaged = undecodable != nil || report.damage.map { !$0.isTornTail } == true
        if damaged, Log.manifestGeneration(store, POSIXFileSystem()) != generation {
            // A writer checkpointed meanwhile and deleted files this was reading: not damage.
            throw ToolError.failed(
                "the store changed while it was read (a checkpoint replaced the files being dumped); this is not damage: run dump again"
            )
        }
        if let d = report.damage {
            if d.isTornTail, let last = report.segments.last {
                Output.stderr(
                    "hearth: note: torn tail (recovery would truncate \(last.size - last.validEnd) bytes at \(last.file):\(last.validEnd))"
                )
            } else {
                throw ToolError.failed(
                    "store is damaged: \(d.file) offset \(d.offset): \(VerifyCommand.reason(d.error)); records after it are not shown"
                )
            }
        }
        if let (r, why) = undecodable {
            throw ToolError.failed("store is damaged: \(r.file) offset \(r.offset) (LSN \(r.lsn)): \(why)")
        }
    }
}
