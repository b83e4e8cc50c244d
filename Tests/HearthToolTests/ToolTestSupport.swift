// Support for end-to-end tests of the `hearth` binary (built by `swift build` before tests run).

import Foundation
import Hearth
import Testing

/// The result of one run of `hearth`.
struct ToolRun: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    /// The stdout lines (without the final empty one).
    var lines: [String] {
        stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast(stdout.hasSuffix("\n") ? 1 : 0).map(
            String.init)
    }

    /// stdout parsed as one JSON value.
    func json() throws -> JSONValue { try JSONValue.parse(stdout) }

    /// Each stdout line parsed as JSON.
    func jsonLines() throws -> [JSONValue] { try lines.map { try JSONValue.parse($0) } }

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

enum Tool {
    /// The `hearth` binary: next to the test bundle in the build directory, or $HEARTH_TOOL.
    static let binary: URL? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HEARTH_TOOL"], fm.isExecutableFile(atPath: env) {
            return URL(fileURLWithPath: env)
        }
        var candidates: [URL] = []
        for start in [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])].compactMap({ $0 }) {
            var dir = start.resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<5 {  // .../debug/X.xctest[/Contents/MacOS]/binary
                candidates.append(dir.appendingPathComponent("hearth"))
                dir = dir.deletingLastPathComponent()
            }
        }
        return candidates.first { fm.isExecutableFile(atPath: $0.path) && !isDirectory($0) }
    }()

    static let missingMessage: Comment =
        "the hearth binary was not found next to the test bundle; run `swift build` first or set HEARTH_TOOL"

    private static func isDirectory(_ url: URL) -> Bool {
        var d: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &d) && d.boolValue
    }

    /// Runs `hearth args…`, feeding `stdin`, and waits for it; `environment` adds to (or
    /// replaces) the test's own variables.
    static func run(_ args: [String], stdin: String = "", environment: [String: String] = [:]) throws -> ToolRun {
        try run(args, stdinBytes: Array(stdin.utf8), environment: environment)
    }

    /// Runs `hearth args…`, feeding `stdinBytes` (any bytes, not necessarily UTF-8).
    static func run(_ args: [String], stdinBytes: [UInt8], environment: [String: String] = [:]) throws -> ToolRun {
        let process = Process()
        process.executableURL = binary!
        process.arguments = args
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data(stdinBytes))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return ToolRun(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Runs `hearth apply DIR` with the lines as stdin.
    static func apply(_ dir: String, _ lines: [String], _ extra: [String] = []) throws -> ToolRun {
        try run(["apply", dir] + extra, stdin: lines.map { $0 + "\n" }.joined())
    }
}

/// A fresh, not yet existing store directory, removed when the value goes away.
final class TempStore {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-tool-\(UUID().uuidString)").path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The bytes of a file in the store.
    func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))) }

    /// Replaces a file's bytes.
    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
    }

    /// The store's files, sorted.
    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}

/// The dinosaur scores of Firebase's documentation.
let dinosaurScores =
    #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
