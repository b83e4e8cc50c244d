// End-to-end tests of the `hearth` binary: every subcommand, on sound and damaged stores and
// on bad input, run as a separate process.

import Foundation
import Hearth
import HearthLog
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.enabled(if: Tool.binary != nil, Tool.missingMessage))
struct ToolTests {
    // MARK: - Command line

    @Test func versionAndHelp() throws {
        let version = try Tool.run(["--version"])
        #expect(version.status == 0, "\(version)")
        #expect(version.stdout == HearthInfo.version + "\n")
        let help = try Tool.run(["--help"])
        #expect(help.status == 0, "\(help)")
        for sub in ["dump", "verify", "stats", "state", "get", "apply", "compact"] {
            #expect(help.stdout.contains(sub), "help lists \(sub)")
            let subHelp = try Tool.run([sub, "--help"])
            #expect(subHelp.status == 0 && subHelp.stdout.contains("USAGE: hearth \(sub)"), "\(subHelp)")
        }
    }

    @Test func usageErrorsExit2() throws {
        let store = TempStore()
        _ = try Tool.apply(store.path, [#"{"op":"serverSet","path":"a","value":1}"#])
        let cases: [[String]] = [
            ["frobnicate", store.path],
            ["get", store.path],  // missing PATH
            ["get", store.path, "a.b"],  // invalid path
            ["get", store.path, "a", "--query", "{not json"],
            ["get", store.path, "a", "--query", #"{"orderBy":"$nope"}"#],
            ["get", store.path, "a", "--query", #"{"limitToFirst":0}"#],
            ["apply", store.path, "--durability", "fast"],
            ["apply", store.path, "--cache-size", "5"],
            ["dump", store.path, "--from", "x"],
            ["stats", store.path, "--no-such-flag"],
            ["verify"],
            [],
        ]
        for args in cases {
            let r = try Tool.run(args)
            #expect(r.status == 2, "\(args): \(r)")
            #expect(r.stdout.isEmpty, "\(args): \(r)")
            #expect(!r.stderr.isEmpty, "\(args): \(r)")
        }
    }

    /// Errors name the problem in words.
    @Test func errorsNameTheProblem() throws {
        let scratch = TempStore()
        try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: true)
        let file = scratch.path + "/afile"
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        let notDir = try Tool.run(["apply", file + "/store"])
        #expect(notDir.status == 1 && notDir.stderr.contains("not a directory"), "\(notDir)")
        let unknown = try Tool.run(["frob", scratch.path])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown subcommand 'frob'"), "\(unknown)")
        let negative = try Tool.run(["dump", scratch.path, "--from", "-1"])
        #expect(negative.status == 2 && negative.stderr.contains("'-1' is invalid"), "\(negative)")
    }

    @Test func missingStoreExits1WithAClearMessage() throws {
        let missing = TempStore()
        for args in [
            ["dump", missing.path], ["verify", missing.path], ["stats", missing.path], ["state", missing.path],
            ["get", missing.path, "/"], ["compact", missing.path],
        ] {
            let r = try Tool.run(args)
            #expect(r.status == 1, "\(args): \(r)")
            #expect(r.stderr.contains("no store at \(missing.path)"), "\(args): \(r)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path), "reading commands never create a store")
    }

    // MARK: - apply

    @Test func applyEveryOperationAndBadLines() throws {
        let store = TempStore()
        let lines = [
            #"{"op":"serverSet","path":"scores","value":\#(dinosaurScores)}"#,  // 1
            #"{"op":"set","path":"messages/m1","value":{"text":"hi",".priority":3}}"#,  // 2
            #"{"op":"update","path":"messages","children":{"m2/text":"yo","m3":{".sv":"timestamp"}}}"#,  // 3
            #"this is not JSON"#,  // 4
            #"{"op":"frobnicate"}"#,  // 5
            #"{"op":"set","path":"a.b","value":1}"#,  // 6
            #"{"op":"trackQuery","path":"scores","query":{"orderBy":"value","limitToLast":4},"complete":true,"active":true}"#,  // 7
            #"{"op":"ack","writeId":99}"#,  // 8
            #"{"op":"trackQuery","path":"scores","query":{"orderBy":"$sideways"}}"#,  // 9
            #"{"op":"ack","writeId":1}"#,  // 10
            #"{"op":"set","path":"messages/m4","value":"four"}"#,  // 11
            #"{"op":"revert","writeId":3}"#,  // 12
            #"{"op":"keepSynced","path":"scores","query":{},"on":true}"#,  // 13
            #"{"op":"auth","token":"SECRET-TOKEN-123","expiresAt":1700000000000}"#,  // 14
            #"{"op":"serverTimeOffset","ms":-12.5}"#,  // 15
            #"{"op":"onDisconnect","action":"set","path":"presence/me","value":false}"#,  // 16
            #"{"op":"onDisconnect","action":"update","path":"presence","value":{"x/y":1}}"#,  // 17
            #"{"op":"onDisconnect","action":"remove","path":"presence/x"}"#,  // 18
            #"{"op":"onDisconnect","action":"cancel","path":"presence"}"#,  // 19
            #"{"op":"serverUpdate","path":"scores","children":{"stegosaurus":6}}"#,  // 20
            #"{"op":"trackQuery","path":"other","complete":false}"#,  // 21
            #"{"op":"untrackQuery","path":"other","query":{}}"#,  // 22
            #"{"op":"untrackQuery","path":"never"}"#,  // 23
            "",  // 24 (skipped)
            #"{"op":"set","path":"x","value":1,"extra":true}"#,  // 25
            #"{"op":"compact"}"#,  // 26
            #"{"op":"signOut"}"#,  // 27
            #"{"op":"auth","token":"SECRET-TOKEN-123","expiresAt":1800000000000}"#,  // 28
        ]
        let r = try Tool.apply(store.path, lines)
        #expect(r.status == 1, "a failed line makes the exit code 1: \(r)")
        let out = try r.jsonLines()
        try #require(out.count == lines.count - 1, "one output line per non-blank input line: \(r)")
        let failedLines: Set = [4, 5, 6, 8, 9, 23, 25]
        var lastLSN = 0.0
        for (i, o) in out.enumerated() {
            let lineNo = i < 23 ? i + 1 : i + 2
            if failedLines.contains(lineNo) {
                #expect(o["ok"] == false, "line \(lineNo): \(o)")
                #expect(o["error"]?.stringValue?.hasPrefix("line \(lineNo): ") == true, "line \(lineNo): \(o)")
                #expect(o.objectMembers?.map(\.key) == ["ok", "error"])
            } else {
                #expect(o["ok"] == true, "line \(lineNo): \(o)")
                let lsn = try #require(o["lsn"]?.doubleValue)
                #expect(lsn > lastLSN || (lineNo == 26 && lsn == lastLSN), "LSNs increase: line \(lineNo): \(o)")
                lastLSN = lsn
            }
        }
        #expect(out[0] == ["ok": true, "lsn": 1])
        #expect(out[1] == ["ok": true, "lsn": 2, "writeId": 1])
        #expect(out[2] == ["ok": true, "lsn": 3, "writeId": 2])
        #expect(out[10] == ["ok": true, "lsn": 6, "writeId": 3])
        #expect(out[4]["error"] == #"line 5: unknown op "frobnicate""#)
        #expect(out[5]["error"]?.stringValue?.contains(#"field "path""#) == true)
        #expect(out[5]["error"]?.stringValue?.contains("a.b") == true)
        #expect(
            out[7]["error"]
                == "line 8: no pending write with id 99; use an id returned by saveWrite that has not been acknowledged or removed"
        )
        #expect(out[8]["error"]?.stringValue?.contains(#"field "query""#) == true)
        #expect(out[22]["error"]?.stringValue?.contains("no tracked query") == true)
        #expect(out[23]["error"]?.stringValue?.contains(#"unknown field "extra""#) == true)
        #expect(out[6]["queryId"] == 1)
        #expect(out[15]["onDisconnectId"] == 1)
        #expect(out[24]["footprintBefore"]?.doubleValue != nil && out[24]["footprintAfter"]?.doubleValue != nil)

        // The state reflects every successful operation.
        let state = try Tool.run(["state", store.path, "--json"])
        #expect(state.status == 0, "\(state)")
        let s = try state.json()
        #expect(
            s["serverCache"]
                == (try JSONValue.parse(
                    dinosaurScores.replacingOccurrences(of: #""stegosaurus":5"#, with: #""stegosaurus":6"#))).wrapped(
                    "scores"))
        #expect(
            s["pendingWrites"] == [
                ["id": 2, "path": "messages", "update": ["m2/text": "yo", "m3": [".sv": "timestamp"]]]
            ])
        // The complete filtered query got its window over the server cache as keys.
        #expect(s["trackedQueries"]?[0]?["keys"] == ["bruhathkayosaurus", "linhenykus", "pterodactyl", "triceratops"])
        #expect(s["trackedQueries"]?[0]?["query"] == ["orderBy": "value", "limitToLast": 4])
        #expect(s["trackedQueries"]?[0]?["complete"] == true)
        #expect(s["trackedQueries"]?.arrayValue?.count == 1)
        #expect(s["pins"] == [["path": "scores", "query": [:]]])
        #expect(s["auth"] == ["token": "<redacted>", "expiresAt": 1_800_000_000_000])
        #expect(s["serverTimeOffsetMs"] == -12.5)
        #expect(s["onDisconnect"]?.arrayValue?.map { $0["action"] } == ["set", "update", "remove", "cancel"])
        #expect(s["lastIDs"] == ["write": 3, "query": 2, "transaction": 0, "onDisconnect": 4])
        #expect(!state.stdout.contains("SECRET-TOKEN-123"))
        let secrets = try Tool.run(["state", store.path, "--json", "--show-secrets"])
        #expect(try secrets.json()["auth"]?["token"] == "SECRET-TOKEN-123")
    }

    @Test(arguments: ["full", "batched", "buffered"])
    func applyUnderEachTierAcknowledgesEveryLine(tier: String) throws {
        let store = TempStore()
        let lines = (1...60).map { #"{"op":"set","path":"items/i\#($0)","value":\#($0)}"# }
        let r = try Tool.apply(store.path, lines, ["--durability", tier, "--cache-size", "\(2 << 20)"])
        #expect(r.status == 0, "\(r)")
        let out = try r.jsonLines()
        #expect(out.count == 60)
        for (i, o) in out.enumerated() {
            #expect(o == ["ok": true, "lsn": .number(Double(i + 1)), "writeId": .number(Double(i + 1))])
        }
        let get = try Tool.run(["get", store.path, "items/i60", "--json"])
        #expect(try get.json() == ["value": 60, "complete": true], "a pending set is complete: \(get)")
    }

    /// Acknowledgements are flushed as they are made durable: a reader on a pipe sees them
    /// at once, and every one it saw survives a kill -9.
    @Test func acknowledgedOperationsSurviveKill9() throws {
        let store = TempStore()
        let process = Process()
        process.executableURL = Tool.binary!
        process.arguments = ["apply", store.path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var acked: [JSONValue] = []
        var pendingText = ""
        for i in 1...5 {
            input.fileHandleForWriting.write(Data(#"{"op":"serverSet","path":"k\#(i)","value":\#(i)}"#.utf8 + [0x0A]))
            // Wait for this line's acknowledgement before sending the next.
            while !pendingText.contains("\n") {
                let data = output.fileHandleForReading.availableData
                try #require(!data.isEmpty, "apply closed its output early")
                pendingText += String(decoding: data, as: UTF8.self)
            }
            let nl = pendingText.firstIndex(of: "\n")!
            acked.append(try JSONValue.parse(String(pendingText[..<nl])))
            pendingText = String(pendingText[pendingText.index(after: nl)...])
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(acked.map { $0["lsn"] } == [1, 2, 3, 4, 5])
        let reopened = try Store.open(directory: store.path)
        defer { try? reopened.close() }
        #expect(reopened.lastLSN >= 5)
        for i in 1...5 { #expect(try reopened.serverValue(at: Path(validating: "k\(i)")) == .number(Double(i))) }
    }

    // MARK: - get

    @Test func getValuesQueriesAndHash() throws {
        let store = TempStore()
        let r = try Tool.apply(
            store.path,
            [
                #"{"op":"serverSet","path":"scores","value":\#(dinosaurScores)}"#,
                #"{"op":"set","path":"scores/linhenykus","value":1}"#,
                #"{"op":"serverSet","path":"h","value":{"intNode":4,"doubleNode":4.5623,"stringNode":"hey guys","boolNode":true}}"#,
                #"{"op":"trackQuery","path":"scores","query":{"orderBy":"value","limitToLast":4},"complete":true}"#,
            ])
        #expect(r.status == 0, "\(r)")

        // Pending writes overlaid, or the server cache alone.
        #expect(
            try Tool.run(["get", store.path, "scores/linhenykus", "--json"]).json() == ["value": 1, "complete": true])
        #expect(try Tool.run(["get", store.path, "scores/linhenykus", "--server", "--json"]).json()["value"] == 80)
        let human = try Tool.run(["get", store.path, "scores/linhenykus", "--server"])
        #expect(human.status == 0 && human.lines.first == "80", "\(human)")

        // The window, keys in query order: limitToLast(4) by value.
        let q = #"{"orderBy":"value","limitToLast":4}"#
        let server = try Tool.run(["get", store.path, "scores", "--query", q, "--server", "--json"]).json()
        #expect(
            server == [
                "keys": ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"],
                "value": ["bruhathkayosaurus": 55, "linhenykus": 80, "pterodactyl": 93, "triceratops": 22],
                "complete": true,
            ])
        // With pending writes, through the view: a complete limitToLast(4) is served its four
        // tracked children only (Firebase's filtered server cache), so when the pending write
        // sinks linhenykus no fifth child can replace it offline.
        let local = try Tool.run(["get", store.path, "scores", "--query", q, "--json"]).json()
        #expect(local["keys"] == ["linhenykus", "triceratops", "bruhathkayosaurus", "pterodactyl"])
        #expect(local["complete"] == true)
        // A query never tracked is built from the children known complete at its path (the
        // tracked keys above), and is incomplete.
        let untracked = try Tool.run([
            "get", store.path, "scores", "--query", #"{"orderBy":"key","limitToFirst":2}"#, "--json",
        ]).json()
        #expect(untracked["keys"] == ["bruhathkayosaurus", "linhenykus"])
        #expect(untracked["complete"] == false)

        // Firebase's node hash.
        let hash = try Tool.run(["get", store.path, "h", "--hash"])
        #expect(hash.stdout == "6Mc4jFmNdrLVIlJJjz2/MakTK9I=\n", "\(hash)")
        #expect(
            try Tool.run(["get", store.path, "h", "--hash", "--json"]).json()["hash"] == "6Mc4jFmNdrLVIlJJjz2/MakTK9I=")
        #expect(
            try Tool.run(["get", store.path, "nothing/here", "--json"]).json() == ["value": .null, "complete": false])
    }

    // MARK: - dump, stats, compact

    @Test func dumpShowsEveryRecordAndRedactsTheToken() throws {
        let store = TempStore()
        _ = try Tool.apply(
            store.path,
            [
                #"{"op":"serverSet","path":"a","value":{"b":1}}"#,
                #"{"op":"auth","token":"SECRET-TOKEN-123","expiresAt":5}"#,
                #"{"op":"set","path":"a/c","value":"x"}"#,
            ])
        let human = try Tool.run(["dump", store.path])
        #expect(human.status == 0, "\(human)")
        #expect(human.stdout.contains("LSN 1") && human.stdout.contains("serverOverwrite"))
        #expect(human.stdout.contains(#"authSaved {"token":"<redacted>","expiresAt":5}"#))
        #expect(!human.stdout.contains("SECRET-TOKEN-123"))

        let dump = try Tool.run(["dump", store.path, "--json"])
        let records = try dump.jsonLines()
        #expect(records.count == 3)
        #expect(records.map { $0["lsn"] } == [1, 2, 3])
        #expect(
            records[0].objectMembers?.map(\.key) == [
                "file", "offset", "lsn", "type", "typeName", "flags", "storedSize", "rawSize", "inCheckpoint", "events",
            ])
        #expect(
            records[0]["file"] == "seg-0000000000000001.log" && records[0]["offset"] == 64 && records[0]["type"] == 1)
        #expect(records[0]["events"]?[0]?["event"] == "serverOverwrite")
        #expect(records[0]["events"]?[0]?["value"] == ["b": 1])
        #expect(records[1]["events"] == [["event": "authSaved", "token": "<redacted>", "expiresAt": 5]])
        #expect(records[2]["events"] == [["event": "writeSaved", "id": 1, "path": "a/c", "set": "x"]])

        let secrets = try Tool.run(["dump", store.path, "--json", "--show-secrets", "--from", "2"])
        let shown = try secrets.jsonLines()
        #expect(shown.map { $0["lsn"] } == [2, 3])
        #expect(shown[0]["events"]?[0]?["token"] == "SECRET-TOKEN-123")
    }

    @Test func statsReportsSizesAndCounts() throws {
        let store = TempStore()
        _ = try Tool.apply(
            store.path,
            [
                #"{"op":"serverSet","path":"a","value":{"b":1}}"#,
                #"{"op":"set","path":"a/c","value":"x"}"#,
                #"{"op":"set","path":"a/d","value":"y"}"#,
                #"{"op":"trackQuery","path":"a","complete":true}"#,
                #"{"op":"keepSynced","path":"a","on":true}"#,
                #"{"op":"onDisconnect","action":"remove","path":"a/c"}"#,
            ])
        let r = try Tool.run(["stats", store.path, "--json"])
        #expect(r.status == 0, "\(r)")
        let s = try r.json()
        let keys = Set(s.objectMembers?.map(\.key) ?? [])
        for key in [
            "footprintBytes", "cacheSizeBytes", "pendingWrites", "trackedQueries", "activeQueries", "pins",
            "transactions",
            "onDisconnectOperations", "files", "recordsByType", "compressionRatio", "liveBytes", "deadBytes",
            "capExceededByUnprunableData", "checkpointLSN", "lastLSN",
        ] {
            #expect(keys.contains(key), "stats --json has \(key)")
        }
        #expect(s["cacheSizeBytes"] == 10_485_760)
        #expect(
            s["pendingWrites"] == 2 && s["trackedQueries"] == 1 && s["pins"] == 1 && s["onDisconnectOperations"] == 1
                && s["transactions"] == 0)
        #expect(s["recordsByType"] == ["events": 6])
        #expect(s["capExceededByUnprunableData"] == false)
        let files = s["files"]?.arrayValue ?? []
        let total = files.compactMap { $0["bytes"]?.doubleValue }.reduce(0, +)
        #expect(s["footprintBytes"]?.doubleValue == total)
        #expect(s["liveBytes"]?.doubleValue.map { $0 + (s["deadBytes"]?.doubleValue ?? -1) } == total)
        #expect(files.map { $0["name"] } == ["MANIFEST", "seg-0000000000000001.log"])
        let human = try Tool.run(["stats", store.path])
        #expect(human.status == 0 && human.stdout.contains("pending writes: 2"), "\(human)")
    }

    @Test func compactPrintsTheFootprintBeforeAndAfter() throws {
        let store = TempStore()
        _ = try Tool.apply(
            store.path,
            (1...40).map { #"{"op":"serverSet","path":"k\#($0)","value":"\#(String(repeating: "v", count: 200))"}"# })
        let human = try Tool.run(["compact", store.path])
        #expect(human.status == 0, "\(human)")
        #expect(
            human.lines.count == 2 && human.lines[0].hasPrefix("footprint before: ")
                && human.lines[1].hasPrefix("footprint after: "), "\(human)")
        let r = try Tool.run(["compact", store.path, "--json"])
        let j = try r.json()
        #expect(j.objectMembers?.map(\.key) == ["footprintBefore", "footprintAfter"])
        let stats = try Tool.run(["stats", store.path, "--json"]).json()
        #expect(stats["footprintBytes"] == j["footprintAfter"])
        #expect(stats["checkpointLSN"] == 40)
        let opened = try Store.open(directory: store.path)
        #expect(try opened.serverValue(at: "k7") == .string(String(repeating: "v", count: 200)))
        try opened.close()
        // The compacted store is sound, and its records now sit only in the checkpoint: the
        // segment that held them was wholly covered, so the install rolled and dropped it.
        #expect(try Tool.run(["verify", store.path]).status == 0)
        let dumped = try Tool.run(["dump", store.path, "--json"])
        #expect(dumped.status == 0 && dumped.stdout.isEmpty, "\(dumped)")
        #expect(stats["files"]?.arrayValue?.count == 3, "MANIFEST, checkpoint, one empty segment")
    }

    // MARK: - verify and damage

    /// A store of 12 records written under `.full` (each synced before the next, so later
    /// records vouch for earlier ones).
    func soundStore() throws -> TempStore {
        let store = TempStore()
        let r = try Tool.apply(
            store.path, (1...12).map { #"{"op":"serverSet","path":"k\#($0)","value":"value \#($0)"}"# })
        try #require(r.status == 0, "\(r)")
        return store
    }

    @Test func verifyCleanStore() throws {
        let store = try soundStore()
        let r = try Tool.run(["verify", store.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix("ok: 1 segment, 12 records (LSN 1…12), no checkpoint"), "\(r)")
        let j = try Tool.run(["verify", store.path, "--json"]).json()
        #expect(
            j["ok"] == true && j["damage"] == .null && j["tornTail"] == .null && j["records"] == 12
                && j["lastLSN"] == 12)
        #expect(try store.files().contains("seg-0000000000000001.log"))

        // A leftover temp file is noted (opening would remove it), not damage, and left alone.
        try store.write("MANIFEST.tmp", [1, 2, 3])
        let noted = try Tool.run(["verify", store.path])
        #expect(noted.status == 0 && noted.stdout.contains("note: temp file MANIFEST.tmp"), "\(noted)")
        #expect(try store.files().contains("MANIFEST.tmp"))
        let state = try Tool.run(["state", store.path])
        #expect(state.status == 0 && state.stdout.contains("untracked cache entries: 12"), "\(state)")
    }

    @Test func flippedByteMidSegmentIsDamageNamingFileAndOffset() throws {
        let store = try soundStore()
        let seg = "seg-0000000000000001.log"
        let records = try Log.verify(directory: store.path).segments[0].records
        let victim = records[5]
        var bytes = try store.read(seg)
        bytes[Int(victim.offset) + 40] ^= 0xFF
        try store.write(seg, bytes)
        let before = try store.files()

        let r = try Tool.run(["verify", store.path])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout.contains("DAMAGED: \(seg) offset \(victim.offset)"), "\(r)")
        #expect(
            r.stdout.contains(
                "valid prefix: \(seg) bytes 0..<\(victim.offset); 5 records before the damage, through LSN 5"), "\(r)")
        #expect(r.stderr.contains(seg) && r.stderr.contains("offset \(victim.offset)"), "\(r)")
        let j = try Tool.run(["verify", store.path, "--json"])
        #expect(j.status == 1)
        #expect(
            try j.json()["damage"] == [
                "file": .string(seg), "offset": .number(Double(victim.offset)),
                "reason": .string(
                    "record checksum mismatch; the record at \(records[6].offset) shows LSN 6 had been synced"),
                "validPrefix": ["bytes": .number(Double(victim.offset)), "records": 5, "lastLSN": 5],
            ])
        // The other commands refuse the damaged store with file and offset.
        for args in [
            ["dump", store.path], ["stats", store.path], ["state", store.path], ["get", store.path, "k1"],
            ["compact", store.path],
        ] {
            let o = try Tool.run(args)
            #expect(o.status == 1, "\(args): \(o)")
            #expect(o.stderr.contains(seg) && o.stderr.contains("\(victim.offset)"), "\(args): \(o)")
        }
        #expect(try Tool.run(["dump", store.path, "--json"]).jsonLines().count == 5, "dump shows the valid prefix")
        #expect(try store.files() == before, "nothing was modified")
        #expect(try store.read(seg) == bytes)
    }

    @Test func tornTailIsNotDamageAndAgreesWithRecovery() throws {
        let store = try soundStore()
        let seg = "seg-0000000000000001.log"
        var bytes = try store.read(seg)
        let size = bytes.count
        bytes.removeLast(30)  // tear the last record
        try store.write(seg, bytes)
        let last = try Log.verify(directory: store.path).segments[0]

        let r = try Tool.run(["verify", store.path])
        #expect(r.status == 0, "\(r)")
        let note =
            "torn tail (recovery would truncate \(size - 30 - Int(last.validEnd)) bytes at \(seg):\(last.validEnd))"
        #expect(r.stdout.contains(note), "\(r)")
        let j = try Tool.run(["verify", store.path, "--json"]).json()
        #expect(j["ok"] == true && j["damage"] == .null && j["lastLSN"] == 11)
        let torn = try #require(j["tornTail"])
        let dump = try Tool.run(["dump", store.path, "--json"])
        #expect(dump.status == 0 && dump.lines.count == 11 && dump.stderr.contains(note), "\(dump)")
        #expect(try store.read(seg) == bytes, "verify and dump modified nothing")

        // Recovery truncates exactly what verify said.
        let opened = try Store.open(directory: store.path)
        defer { try? opened.close() }
        let cut = try #require(opened.recovery.truncatedTail)
        #expect(
            torn == [
                "file": .string(cut.file), "offset": .number(Double(cut.offset)), "bytes": .number(Double(cut.bytes)),
            ])
        #expect(opened.lastLSN == 11)
    }

    /// Every opening command says on stderr that recovery dropped a torn tail, so that `get`
    /// does not answer one record earlier without a word.
    @Test func openingCommandsNoteADroppedTornTail() throws {
        for command in [["get", "/"], ["stats"], ["state"]] {
            let store = try soundStore()
            let seg = "seg-0000000000000001.log"
            var bytes = try store.read(seg)
            bytes.removeLast(30)
            try store.write(seg, bytes)
            let r = try Tool.run([command[0], store.path] + command.dropFirst())
            #expect(r.status == 0, "\(r)")
            #expect(r.stderr.contains("hearth: note: recovery dropped a torn tail"), "\(command): \(r)")
            // Only once: the second open finds a clean log.
            let again = try Tool.run([command[0], store.path] + command.dropFirst())
            #expect(!again.stderr.contains("torn tail"), "\(again)")
        }
    }

    /// `apply` creating a store where none was says so on stderr: a mistyped path would
    /// otherwise become a new, empty store without a word. An existing store: no note.
    @Test func applyCreatingAStoreSaysSo() throws {
        let store = TempStore()
        let nested = store.path + "/deeper/s"
        let created = try Tool.apply(nested, [#"{"op":"serverSet","path":"a","value":1}"#])
        #expect(created.status == 0, "\(created)")
        #expect(created.stderr.contains("hearth: note: no store at \(nested): creating a new one"), "\(created)")
        let again = try Tool.apply(nested, [#"{"op":"serverSet","path":"a","value":2}"#])
        #expect(again.status == 0 && !again.stderr.contains("creating"), "\(again)")
        try? FileManager.default.removeItem(atPath: store.path)
    }

    @Test func damagedCheckpointIsReported() throws {
        let store = try soundStore()
        #expect(try Tool.run(["compact", store.path]).status == 0)
        let ckpt = try #require(try store.files().first { $0.hasPrefix("ckpt-") })
        var bytes = try store.read(ckpt)
        bytes[64 + 3] ^= 0xFF  // inside the first cache chunk
        try store.write(ckpt, bytes)
        let r = try Tool.run(["verify", store.path])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout.contains("DAMAGED: \(ckpt) offset 64"), "\(r)")
        #expect(r.stderr.contains(ckpt), "\(r)")
    }
}

extension JSONValue {
    /// `{key: self}`.
    func wrapped(_ key: String) -> JSONValue { .object([JSONMember(key: key, value: self)]) }
}
