// What a new user meets first, tried as real processes: the URL `hearth serve` prints works in
// `hearth connect`, a port in use stops the server before it creates anything, and every
// error the tool reports starts the same way.

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("hearth serve and connect: the first hour", .serialized)
struct FirstHourProcessTests {
    @Test(
        "a port in use: one line naming the port, exit 1, and no store created (a directory that existed is left as it was)",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func portInUse() throws {
        let scratch = try ConnectScratch()
        let server = try ServeProcess(directory: scratch.dir("running"))
        defer { server.stop() }
        let port = String(server.port)

        let fresh = scratch.dir("fresh")
        let refused = try Tool.run(["serve", fresh, "--port", port, "--emulator"])
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderr
                == "hearth: error: port \(port) on 127.0.0.1 is in use (choose another --port, or --port 0 for a free one)\n",
            "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "nothing is created: \(refused)")

        let existing = scratch.dir("existing")
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true)
        try "mine".write(toFile: existing + "/notes.txt", atomically: true, encoding: .utf8)
        let again = try Tool.run(["serve", existing, "--port", port])
        #expect(again.status == 1 && again.stderr.contains("port \(port) on 127.0.0.1 is in use"), "\(again)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: existing) == ["notes.txt"], "\(again)")
    }

    @Test(
        "the database URL hearth serve prints is what hearth connect takes, and reaches the store in DATA_DIR",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func printedURLConnects() throws {
        let scratch = try ConnectScratch()
        let data = scratch.dir("server"), log = scratch.dir("server.stderr")
        let server = try ServeProcess(directory: data, stderr: log)
        let text = ServeTokenTests.wait(for: "listening on", in: log)
        let url = text.split(separator: "\n").first { $0.contains("listening on") }.flatMap { line in
            line.range(of: "database URL ").map { line[$0.upperBound...].prefix { $0 != "," && $0 != " " } }
        }.map(String.init)
        #expect(url == "http://127.0.0.1:\(server.port)?ns=default", "\(text)")

        let client = try ConnectProcess(store: scratch.dir("client"), url: url ?? "")
        try client.send(#"{"op":"set","path":"greeting","value":"hello","id":"w"}"#)
        #expect(client.wait { $0.contains { $0.type == "ack" } }, "\(client.transcript)")
        #expect(client.lines("ack").first?["ok"] == .bool(true), "\(client.transcript)")
        try client.send(#"{"op":"quit"}"#)
        #expect(client.waitForExit() == 0, "\(client.transcript)")
        server.stop()

        let stored = try Tool.run(["get", data, "/greeting"])
        #expect(stored.status == 0 && stored.lines.first == "\"hello\"", "the write is in DATA_DIR's store: \(stored)")
    }

    /// A failing command line and the exit code it must have.
    struct Failure: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let status: Int32
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let missing = "/nonexistent-hearth-store-\(UUID().uuidString)"
    static let failures = [
        Failure(arguments: ["frob"], status: 2),  // unknown subcommand
        Failure(arguments: ["dump"], status: 2),  // a missing argument
        Failure(arguments: ["dump", missing, "--frob"], status: 2),  // an unknown flag
        Failure(arguments: ["dump", missing, "--from", "-1"], status: 2),  // a bad flag value
        Failure(arguments: ["serve", missing, "--port", "70000"], status: 2),  // refused in validation
        Failure(arguments: ["serve", missing, "--secret-file", missing + ".secret"], status: 2),  // the tool's own
        Failure(arguments: ["get", missing, "/"], status: 1),  // no store
        Failure(arguments: ["connect", missing, "ftp://example.com"], status: 2),  // a bad URL
    ]

    @Test(
        "every error the tool reports starts with `hearth: error: `, usage errors included",
        .enabled(if: Tool.binary != nil, Tool.missingMessage), arguments: failures)
    func oneErrorPrefix(_ failure: Failure) throws {
        let run = try Tool.run(failure.arguments)
        #expect(run.status == failure.status, "\(run)")
        #expect(run.stderr.hasPrefix("hearth: error: "), "\(run)")
        #expect(!run.stderr.contains("Error: "), "ArgumentParser's own prefix is replaced: \(run)")
        #expect(!FileManager.default.fileExists(atPath: Self.missing), "\(run)")
    }
}
