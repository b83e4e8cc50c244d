// `hearth connect` as a real process against a real `hearth serve`: a writer and a listener,
// a client SIGKILLed mid-stream that loses nothing, an offline start that drains, and bad
// command lines that never stop the client.

import Foundation
import Hearth
@testable import HearthDatabase
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `hearth connect` child process: commands written to its stdin, its stdout lines
/// collected (parsed as JSON) by a reader thread.
final class ConnectProcess: Sendable {
    let process: Process
    private let input: FileHandle
    private let sink = LineSink()
    private let errFile: String

    /// What the reader thread collects (the thread holds this, not the process object, so
    /// the object can go away — and kill a forgotten process — while the thread still reads).
    private final class LineSink: Sendable {
        let received = Mutex<[JSONValue]>([])
        /// Lines that were not JSON (there must be none).
        let garbage = Mutex<[String]>([])
        /// Signalled once the reader has read to the end of the output (the process exited or
        /// closed its stdout): after it, the lines are every line the process printed.
        let ended = DispatchSemaphore(value: 0)
    }

    init(store: String, url: String, arguments: [String] = []) throws {
        signal(SIGPIPE, SIG_IGN)  // a killed client's stdin must not kill the tests
        let process = Process()
        process.executableURL = Tool.binary!
        process.arguments = ["connect", store, url] + arguments
        let stdin = Pipe(), stdout = Pipe()
        errFile = store + ".stderr"
        _ = FileManager.default.createFile(atPath: errFile, contents: nil)
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errFile))
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        let output = stdout.fileHandleForReading
        let thread = Thread { [sink] in
            var buffer: [UInt8] = []
            while true {
                let chunk = output.availableData
                if chunk.isEmpty {
                    sink.ended.signal()
                    break
                }
                buffer += chunk
                while let nl = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<nl])
                    buffer.removeFirst(nl + 1)
                    if let v = try? JSONValue.parse(line) {
                        sink.received.withLock { $0.append(v) }
                    } else {
                        sink.garbage.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
                    }
                }
            }
        }
        thread.start()
    }

    /// Writes command lines (each followed by a newline).
    func send(_ lines: [String]) throws {
        try input.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
    }

    func send(_ line: String) throws { try send([line]) }

    /// Writes raw bytes.
    func sendBytes(_ bytes: [UInt8]) throws { try input.write(contentsOf: Data(bytes)) }

    /// Ends the input (the client closes its database and exits).
    func closeInput() throws { try input.close() }

    /// Every line printed so far.
    var lines: [JSONValue] { sink.received.withLock { $0 } }

    /// Lines printed that were not JSON.
    var nonJSON: [String] { sink.garbage.withLock { $0 } }

    /// The lines of one type.
    func lines(_ type: String) -> [JSONValue] { lines.filter { $0["type"]?.stringValue == type } }

    var stderr: String { (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? "" }

    /// Polls until `condition` holds on the output (true), or `seconds` pass (false).
    @discardableResult
    func wait(_ seconds: Double = 60, until condition: ([JSONValue]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(lines) { return true }
            if !process.isRunning {
                waitForOutputEnd()  // the reader may still hold the last lines
                return condition(lines)
            }
            usleep(20_000)
        }
        return condition(lines)
    }

    /// Waits for the process to exit; its status, or nil (and SIGKILL) after `seconds`.
    func waitForExit(_ seconds: Double = 60) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill9(); return nil }
        process.waitUntilExit()
        waitForOutputEnd()
        return process.terminationStatus
    }

    /// Waits until the reader has read the output to its end, so ``lines`` is complete; call it
    /// once the process has exited (its end of the pipe closed). A descendant still holding the
    /// pipe open would delay the end: after `seconds` it gives up (false).
    @discardableResult
    func waitForOutputEnd(_ seconds: Double = 60) -> Bool {
        guard sink.ended.wait(timeout: .now() + seconds) == .success else { return false }
        sink.ended.signal()  // for the next caller
        return true
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// For failure messages: the output so far and stderr.
    var transcript: String {
        lines.map { $0.serialized() }.joined(separator: "\n") + "\n--- stderr\n" + stderr
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: errFile)
    }
}

extension JSONValue {
    var type: String? { self["type"]?.stringValue }
    var int: Int64? { self.doubleValue.flatMap { Int64(exactly: $0) } }
}

/// A scratch directory for one test's stores, removed at the end.
final class ConnectScratch {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("connect-\(UUID().uuidString)").path
    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func dir(_ name: String) -> String { path + "/" + name }
}

@Suite("hearth connect: real processes", .serialized)
struct ConnectProcessTests {
    static func url(_ port: Int) -> String { "ws://127.0.0.1:\(port)?ns=connect-test" }

    /// The server's data at `path`, read by a fresh client (an empty store, so nothing local).
    static func serverValue(_ scratch: ConnectScratch, port: Int, path: String) throws -> JSONValue? {
        let reader = try ConnectProcess(store: scratch.dir("reader-\(UUID().uuidString)"), url: url(port))
        try reader.send(#"{"op":"get","path":"\#(path)","id":"read"}"#)
        let got = reader.wait { $0.contains { $0.type == "get" || $0.type == "error" } }
        #expect(got, "\(reader.transcript)")
        try reader.send(#"{"op":"quit"}"#)
        #expect(reader.waitForExit() == 0, "\(reader.transcript)")
        return reader.lines("get").first?["value"]
    }

    @Test(
        "one client writes (set, update, push, remove), another listens: the listener prints every change; acks echo the ids",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func writerAndListener() throws {
        let scratch = try ConnectScratch()
        let server = try ServeProcess(directory: scratch.dir("server"))
        defer { server.stop() }
        let listener = try ConnectProcess(store: scratch.dir("listener"), url: Self.url(server.port))
        try listener.send(
            #"{"op":"listen","path":"chat","events":["child_added","child_changed","child_removed"],"tag":"c"}"#)
        try listener.send(#"{"op":"listen","path":"chat/m1","id":7}"#)
        #expect(
            listener.wait { $0.contains { $0.type == "connected" && $0["connected"] == .bool(true) } },
            "\(listener.transcript)")
        #expect(listener.wait { $0.filter { $0.type == "listening" }.count == 2 }, "\(listener.transcript)")
        let generated = listener.lines("listening").first { $0["id"] != nil }
        #expect(
            generated?["tag"]?.stringValue?.isEmpty == false && generated?["id"]?.int == 7, "\(listener.transcript)")

        let writer = try ConnectProcess(store: scratch.dir("writer"), url: Self.url(server.port))
        try writer.send([
            #"{"op":"set","path":"chat/m1","value":{"text":"hello","n":1},"id":"w1"}"#,
            #"{"op":"update","path":"chat/m1","values":{"text":"hello again","by/name":"ada"},"id":"w2"}"#,
            #"{"op":"push","path":"chat","value":"pushed!","id":"w3"}"#,
            #"{"op":"push","path":"chat"}"#,
        ])
        #expect(writer.wait { $0.filter { $0.type == "ack" }.count == 3 }, "\(writer.transcript)")
        let saved = writer.lines("saved")
        #expect(saved.map { $0["id"]?.stringValue } == ["w1", "w2", "w3"], "\(writer.transcript)")
        let pushKey = saved.last?["key"]?.stringValue ?? ""
        #expect(pushKey.count == 20, "a push id has 20 characters: \(writer.transcript)")
        #expect(writer.lines("pushed").first?["key"]?.stringValue?.count == 20, "\(writer.transcript)")
        for ack in writer.lines("ack") {
            #expect(ack["ok"] == .bool(true), "\(writer.transcript)")
            let id = saved.first { $0["writeId"] == ack["writeId"] }?["id"]
            #expect(id != nil && ack["id"] == id, "an ack echoes its write's id: \(writer.transcript)")
        }
        // Every saved line comes before its ack.
        let order = writer.lines.filter { $0.type == "saved" || $0.type == "ack" }.map {
            "\($0.type!)\($0["writeId"]!.int!)"
        }
        for s in saved {
            #expect(
                order.firstIndex(of: "saved\(s["writeId"]!.int!)")! < order.firstIndex(of: "ack\(s["writeId"]!.int!)")!,
                "\(order)")
        }

        // The listener saw the final data.
        func hasEvent(_ event: String, key: String, where match: @escaping (JSONValue) -> Bool) -> Bool {
            listener.wait {
                $0.contains {
                    $0.type == "event" && $0["tag"] == .string("c") && $0["event"] == .string(event)
                        && $0["key"] == .string(key) && match($0)
                }
            }
        }
        #expect(
            hasEvent("child_added", key: "m1") { $0["value"]?["text"] == .string("hello") }, "\(listener.transcript)")
        #expect(
            hasEvent("child_changed", key: "m1") {
                $0["value"]?["by"]?["name"] == .string("ada") && $0["value"]?["text"] == .string("hello again")
            },
            "\(listener.transcript)")
        #expect(
            hasEvent("child_added", key: pushKey) { $0["value"] == .string("pushed!") && $0["prev"] == .null },
            "\(listener.transcript)")
        // The value listen on chat/m1 (generated tag) printed its value.
        let tag = generated?["tag"] ?? .null
        #expect(
            listener.wait {
                $0.contains {
                    $0.type == "event" && $0["tag"] == tag && $0["event"] == .string("value")
                        && $0["value"]?["n"]?.int == 1
                }
            },
            "\(listener.transcript)")

        try writer.send(#"{"op":"remove","path":"chat/m1","id":"w4"}"#)
        #expect(
            writer.wait { $0.contains { $0.type == "ack" && $0["id"] == .string("w4") && $0["ok"] == .bool(true) } },
            "\(writer.transcript)")
        #expect(hasEvent("child_removed", key: "m1") { _ in true }, "\(listener.transcript)")

        for client in [writer, listener] {
            try client.send(#"{"op":"quit"}"#)
            #expect(client.waitForExit() == 0, "\(client.transcript)")
            #expect(client.lines.last?.type == "closed" && client.nonJSON.isEmpty, "\(client.transcript)")
        }
    }

    @Test(
        "a client SIGKILLed mid-stream (writes acknowledged, in flight, only saved) and restarted loses nothing; restored writes report their acks",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func killNineLosesNothing() throws {
        let scratch = try ConnectScratch()
        let server = try ServeProcess(directory: scratch.dir("server"))
        defer { server.stop() }
        let store = scratch.dir("client")
        let first = try ConnectProcess(store: store, url: Self.url(server.port))
        #expect(
            first.wait { $0.contains { $0.type == "connected" && $0["connected"] == .bool(true) } },
            "\(first.transcript)")
        // A burst of 150 writes, pipelined; then offline, 30 more that are only saved.
        try first.send((0..<150).map { #"{"op":"set","path":"k/n\#($0)","value":\#($0)}"# })
        #expect(first.wait { $0.contains { $0.type == "ack" } }, "\(first.transcript)")
        try first.send(
            [#"{"op":"goOffline"}"#] + (150..<180).map { #"{"op":"set","path":"k/n\#($0)","value":\#($0)}"# })
        #expect(first.wait { $0.filter { $0.type == "saved" }.count == 180 }, "\(first.transcript)")
        first.kill9()

        let saved = Set(first.lines("saved").compactMap { $0["writeId"]?.int })
        let acked = Set(first.lines("ack").filter { $0["ok"] == .bool(true) }.compactMap { $0["writeId"]?.int })
        #expect(saved.count == 180 && !acked.isEmpty && acked.isSubset(of: saved), "\(first.transcript)")

        let second = try ConnectProcess(store: store, url: Self.url(server.port))
        #expect(second.wait { $0.contains { $0.type == "ready" } }, "\(second.transcript)")
        let pending = Set(second.lines("ready").first?["pendingWrites"]?.arrayValue?.compactMap(\.int) ?? [])
        #expect(pending.count >= 30, "at least the 30 offline writes were pending: \(second.transcript)")
        #expect(
            pending.isSubset(of: saved) && pending.isDisjoint(with: acked),
            "pending \(pending.sorted()), acked \(acked.sorted())")
        #expect(saved.subtracting(acked).isSuperset(of: pending))
        // Every restored write reports its ack in the restarted run, marked `restored` — as does a
        // result the first run kept but whose acknowledgement the kill lost (an identical
        // redelivery of an acked write); nothing of this run is marked.
        #expect(
            second.wait { lines in
                Set(
                    lines.filter { $0.type == "ack" && $0["ok"] == .bool(true) && $0["restored"] == .bool(true) }
                        .compactMap { $0["writeId"]?.int }
                ).isSuperset(of: pending)
            }, "\(second.transcript)")
        let restoredAcks = Set(
            second.lines("ack").filter { $0["restored"] == .bool(true) }.compactMap { $0["writeId"]?.int })
        #expect(restoredAcks.isSubset(of: saved), "\(second.transcript)")
        #expect(
            second.lines("ack").filter { $0["restored"] != .bool(true) }.allSatisfy {
                $0["writeId"]?.int.map(saved.contains) == false
            },
            "an unmarked ack is of this run: \(second.transcript)")
        try second.send(#"{"op":"pending","id":"p"}"#)
        #expect(
            second.wait { $0.contains { $0.type == "pending" && $0["writeIds"] == .array([]) } }, "\(second.transcript)"
        )
        try second.closeInput()
        #expect(second.waitForExit() == 0, "\(second.transcript)")

        // The server holds every write the killed client printed as saved.
        let value = try Self.serverValue(scratch, port: server.port, path: "k")
        let members = value?.objectMembers ?? []
        #expect(members.count == 180, "\(String(describing: value))")
        for i in 0..<180 { #expect(value?["n\(i)"]?.int == Int64(i), "n\(i)") }
    }

    @Test(
        "offline start: writes queued while the server is down drain when it starts",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func offlineStartDrains() throws {
        let scratch = try ConnectScratch()
        // Learn a free port, then leave it unserved.
        let probe = try ServeProcess(directory: scratch.dir("server"))
        let port = probe.port
        probe.stop()
        let client = try ConnectProcess(store: scratch.dir("client"), url: Self.url(port))
        try client.send((0..<50).map { #"{"op":"set","path":"q/n\#($0)","value":"v\#($0)","id":\#($0)}"# })
        #expect(client.wait { $0.filter { $0.type == "saved" }.count == 50 }, "\(client.transcript)")
        #expect(
            client.lines("ack").isEmpty && !client.lines.contains { $0["connected"] == .bool(true) },
            "\(client.transcript)")
        // An offline read answers from the local data (pending writes shown).
        try client.send(#"{"op":"get","path":"q/n3"}"#)
        #expect(client.wait { $0.contains { $0.type == "get" } }, "\(client.transcript)")
        #expect(client.lines("get").first?["value"] == .string("v3"), "\(client.transcript)")

        let server = try ServeProcess(directory: scratch.dir("server"), port: port)
        defer { server.stop() }
        #expect(
            client.wait { $0.contains { $0.type == "connected" && $0["connected"] == .bool(true) } },
            "\(client.transcript)")
        #expect(
            client.wait { $0.filter { $0.type == "ack" && $0["ok"] == .bool(true) }.count == 50 },
            "\(client.transcript)")
        let ids = client.lines("ack").compactMap { $0["id"]?.int }
        #expect(ids == Array(0..<50), "acks arrive in write order, each with its id: \(ids)")
        try client.send(#"{"op":"quit"}"#)
        #expect(client.waitForExit() == 0, "\(client.transcript)")

        let value = try Self.serverValue(scratch, port: server.port, path: "q")
        #expect(value?.objectMembers?.count == 50 && value?["n49"] == .string("v49"), "\(String(describing: value))")
    }

    @Test(
        "a result an earlier run kept (decided, its handler not run) prints as a restored ack at the next start",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func keptResultIsARestoredAck() throws {
        let scratch = try ConnectScratch()
        let dir = scratch.dir("client")
        do {
            var options = Database.Options()
            options.storeDirectory = dir
            options.connectAtOpen = false
            let db = try Database(url: "ws://127.0.0.1:9?ns=x", options: options)
            try db.store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.saveWriteOutcome(writeID: 42, at: "a", status: .writeApplied, reason: .empty)
            }
            try db.close()
        }
        let client = try ConnectProcess(store: dir, url: "ws://127.0.0.1:9?ns=x", arguments: ["--offline"])
        #expect(
            client.wait { $0.contains { $0.type == "ack" && $0["writeId"]?.int == 42 } }, "\(client.transcript)")
        let ack = client.lines("ack").first { $0["writeId"]?.int == 42 }
        #expect(ack?["restored"] == .bool(true) && ack?["ok"] == .bool(true), "\(client.transcript)")
        try client.closeInput()
        #expect(client.waitForExit() == 0, "\(client.transcript)")
    }

    @Test(
        "malformed command lines print a JSON error line (with the line number and id) and the client keeps going; exit 0 at end of input",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func malformedLines() throws {
        let scratch = try ConnectScratch()
        let client = try ConnectProcess(
            store: scratch.dir("client"), url: "ws://127.0.0.1:9?ns=x", arguments: ["--offline"])
        let bad = [
            "not json",  // 1
            #"[1,2]"#,  // 2
            #"{"path":"a"}"#,  // 3 no op
            #"{"op":"explode","id":"e4"}"#,  // 4
            #"{"op":"set","path":"a","id":5}"#,  // 5 no value
            #"{"op":"set","path":"a/b.c","value":1}"#,  // 6 bad key
            #"{"op":"set","path":"a","value":1,"bogus":true}"#,  // 7 unknown field
            #"{"op":"update","path":"a","values":3}"#,  // 8
            #"{"op":"update","path":"a","values":{"x":1,"x/y":2}}"#,  // 9 overlapping paths
            #"{"op":"listen","path":"a","events":["nope"]}"#,  // 10
            #"{"op":"listen","path":"a","query":{"limitToFirst":0}}"#,  // 11
            #"{"op":"listen","path":"a","query":{"orderBy":"$key","startAt":1}}"#,  // 12 key bound must be a string
            #"{"op":"unlisten","tag":"nobody"}"#,  // 13
            #"{"op":"keepSynced","path":"a"}"#,  // 14 no on
            #"{"op":"set","path":".info/connected","value":true}"#,  // 15 read-only
            #"{"op":"set","path":"a","value":{"n":1.5e400}}"#,  // 16 not JSON (overflow)
            #"{"op":"auth","token":5}"#,  // 17
        ]
        try client.send(bad)
        try client.sendBytes([0x7B, 0xFF, 0xFE, 0x7D, 0x0A])  // 18 invalid UTF-8
        try client.send([
            "",  // 19 blank: skipped
            #"{"op":"set","path":"ok","value":{"fine":true},"id":"good"}"#,  // 20
            #"{"op":"listen","path":"ok","tag":"t"}"#,  // 21
            #"{"op":"listen","path":"ok","tag":"t"}"#,  // 22 tag in use
        ])
        #expect(
            client.wait {
                $0.contains { $0.type == "saved" } && $0.contains { $0.type == "event" }
                    && $0.filter { $0.type == "error" }.count == 19
            },
            "\(client.transcript)")
        let errors = client.lines("error")
        #expect(errors.compactMap { $0["line"]?.int } == Array(1...18) + [22], "\(client.transcript)")
        #expect(errors.first { $0["line"]?.int == 4 }?["id"] == .string("e4"), "\(client.transcript)")
        #expect(errors.first { $0["line"]?.int == 5 }?["id"]?.int == 5, "\(client.transcript)")
        #expect(errors.allSatisfy { ($0["error"]?.stringValue ?? "").isEmpty == false })
        #expect(client.lines("saved").first?["id"] == .string("good"), "\(client.transcript)")
        #expect(
            client.lines.contains {
                $0.type == "event" && $0["tag"] == .string("t") && $0["value"]?["fine"] == .bool(true)
            }, "\(client.transcript)")
        try client.closeInput()
        #expect(client.waitForExit() == 0, "\(client.transcript)")
        #expect(
            client.lines.last?.type == "closed" && client.lines.last?["pendingWrites"]?.int == 1, "\(client.transcript)"
        )
        #expect(client.nonJSON.isEmpty, "\(client.nonJSON)")
    }
}
