// `hearth serve` as a real process: Firebase's own Admin SDK (firebase-admin from PyPI) against
// it, and a SIGKILL that must lose nothing acknowledged.

import Foundation
import Testing

/// A `hearth serve` child process on a free port.
final class ServeProcess {
    let process = Process()
    let port: Int
    let directory: String

    /// Starts `hearth serve directory` on `port` (0: a free one); its stderr goes to the file
    /// `stderr` when given; with `fileLimit`, under that open-file limit (soft and hard,
    /// `ulimit -n`).
    init(
        directory: String, arguments: [String] = ["--emulator"], port fixedPort: Int = 0, stderr: String? = nil,
        fileLimit: Int? = nil
    ) throws {
        self.directory = directory
        let portFile = directory + ".port"
        try? FileManager.default.removeItem(atPath: portFile)
        let serve = ["serve", directory, "--port", String(fixedPort), "--port-file", portFile] + arguments
        if let fileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(fileLimit) && exec \"$0\" \"$@\"", Tool.binary!.path] + serve
        } else {
            process.executableURL = Tool.binary!
            process.arguments = serve
        }
        if let stderr {
            _ = FileManager.default.createFile(atPath: stderr, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        var port: Int?
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let p = Int(text) { port = p; break }
            usleep(50_000)
        }
        guard let port else { process.terminate(); throw ServeError("hearth serve did not start within 10 s") }
        self.port = port
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the process (once; later calls do nothing).
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

struct ServeError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

enum FirebaseAdmin {
    /// The virtual environment .ci/run makes (or $HEARTH_PYTHON), when firebase-admin imports.
    static let python: String? = {
        let env = ProcessInfo.processInfo.environment["HEARTH_PYTHON"]
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for candidate in [env, repo.appendingPathComponent(".venv/bin/python").path].compactMap({ $0 }) {
            guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
            if let r = try? run(candidate, ["-c", "import firebase_admin"], env: [:]), r.status == 0 {
                return candidate
            }
        }
        return nil
    }()

    static let missing: Comment =
        "firebase-admin is not installed: run `python3 -m venv .venv && .venv/bin/pip install firebase-admin` (as .ci/run does) or set HEARTH_PYTHON"

    static let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Python/firebase_admin_suite.py"
    ).path

    static func run(_ executable: String, _ args: [String], env: [String: String]) throws -> ToolRun {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return ToolRun(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self))
    }
}

@Suite("hearth serve: real processes", .serialized)
struct ServeProcessTests {
    @Test(
        "firebase-admin: get, set, update, push, delete, shallow, queries, ETag transactions, listen (SSE), server values",
        .enabled(if: Tool.binary != nil, Tool.missingMessage),
        .enabled(if: FirebaseAdmin.python != nil, FirebaseAdmin.missing))
    func firebaseAdmin() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-admin-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(directory: dir)
        defer { server.stop() }
        let env = ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(server.port)"]
        let admin = try FirebaseAdmin.run(FirebaseAdmin.python!, [FirebaseAdmin.suite, "admin"], env: env)
        #expect(admin.status == 0 && admin.stdout.contains("all ok"), "\(admin)")
        let user = try FirebaseAdmin.run(FirebaseAdmin.python!, [FirebaseAdmin.suite, "user", "u1"], env: env)
        #expect(user.status == 0 && user.stdout.contains("ok user write"), "\(user)")
    }

    @Test(
        "firebase-admin under security rules: a user (databaseAuthVariableOverride) is held to them, an anonymous one too, the admin is not",
        .enabled(if: Tool.binary != nil, Tool.missingMessage),
        .enabled(if: FirebaseAdmin.python != nil, FirebaseAdmin.missing))
    func firebaseAdminWithRules() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-rules-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rules = URL(fileURLWithPath: FirebaseAdmin.suite).deletingLastPathComponent().appendingPathComponent(
            "presence.rules.json"
        ).path
        let server = try ServeProcess(directory: dir, arguments: ["--emulator", "--rules", rules])
        defer { server.stop() }
        let env = ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(server.port)"]
        for args in [["rules-user", "u1"], ["rules-anonymous"], ["rules-admin"]] {
            let run = try FirebaseAdmin.run(FirebaseAdmin.python!, [FirebaseAdmin.suite] + args, env: env)
            #expect(run.status == 0 && run.stdout.contains("all ok"), "\(args): \(run)")
        }
    }

    /// A refused rules file: its text (`nil`: no such file) and what the one line on stderr
    /// must say after `the rules file is refused: FILE`.
    struct BadRulesFile: Sendable, CustomTestStringConvertible {
        let text: String?
        let says: String
        var testDescription: String { says }
    }

    static let badRulesFiles = [
        BadRulesFile(
            text: #"{"rules": {"a": {".read": "auth.uid ==="}}}"#,
            says: ", line 1, column 40, in /a/.read: expected a value but found end of expression"),
        BadRulesFile(
            text: "{\"rules\": {\r\n  \"a\": {\".write\": \"newData.exists()\r\n      && nobody === 1\"}\r\n}}",
            says: ", line 3, column 10, in /a/.write: unknown variable 'nobody'"),
        BadRulesFile(
            text: "{\"rules\": {\n  \"users\": {\".read\": true,\n    \".read\": false}\n}}",
            says: ", line 3, column 5, at /users: duplicate key \".read\" (first at line 2, column 13)"),
        BadRulesFile(text: nil, says: "cannot read the rules file"),
    ]

    @Test(
        "a refused rules file stops the server before it starts: one line naming the file, line, column and rule, no usage text",
        .enabled(if: Tool.binary != nil, Tool.missingMessage), arguments: badRulesFiles)
    func badRules(_ bad: BadRulesFile) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-badrules-\(UUID().uuidString)")
            .path
        let file = dir + ".rules.json"
        defer {
            try? FileManager.default.removeItem(atPath: dir)
            try? FileManager.default.removeItem(atPath: file)
        }
        if let text = bad.text { try text.write(toFile: file, atomically: true, encoding: .utf8) }
        let run = try Tool.run(["serve", dir, "--port", "0", "--rules", file])
        #expect(run.status == 2, "\(run)")
        let expected =
            bad.text == nil
            ? "hearth: error: cannot read the rules file \(file)\n"
            : "hearth: error: the rules file is refused: \(file)\(bad.says)\n"
        #expect(run.stderr.hasPrefix(expected), "\(run)")
        #expect(run.stderr == expected, "the message is the only output: no usage text after it")
        #expect(!run.stderr.contains("Usage") && !run.stderr.contains("USAGE") && !run.stderr.contains("--help"))
        #expect(!FileManager.default.fileExists(atPath: dir), "no store is created for a server that does not start")
    }

    @Test(
        "an unreadable or empty secret file stops the server before it starts: one line, no usage text",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func badSecretFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-badsecret-\(UUID().uuidString)")
            .path
        let empty = dir + ".empty"
        defer {
            try? FileManager.default.removeItem(atPath: dir)
            try? FileManager.default.removeItem(atPath: empty)
        }
        try "\n".write(toFile: empty, atomically: true, encoding: .utf8)
        for (file, says) in [(dir + ".missing", "cannot read the secret file"), (empty, "is empty")] {
            let run = try Tool.run(["serve", dir, "--port", "0", "--secret-file", file])
            #expect(run.status == 2 && run.stderr.hasPrefix("hearth: error: ") && run.stderr.contains(says))
            #expect(run.stderr.split(separator: "\n").count == 1, "one line, no usage text: \(run)")
            #expect(!FileManager.default.fileExists(atPath: dir), "no store is created")
        }
    }

    @Test(
        "a rules file as Firebase reads it (comments, a multi-line expression, trailing commas, CRLF) starts the server",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func relaxedRulesFileStarts() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-rulesfile-\(UUID().uuidString)")
            .path
        let file = dir + ".rules.json"
        defer {
            try? FileManager.default.removeItem(atPath: dir)
            try? FileManager.default.removeItem(atPath: file)
        }
        let lines = [
            "// signed-in users write their own node",
            "{",
            "  \"rules\": {",
            "    \"users\": { \"$uid\": {",
            "      \".write\": \"auth != null",
            "\t\t&& auth.uid === $uid\", /* the owner */",
            "    }, },",
            "  },",
            "}",
        ]
        try lines.joined(separator: "\r\n").write(toFile: file, atomically: true, encoding: .utf8)
        let stderr = dir + ".stderr"
        defer { try? FileManager.default.removeItem(atPath: stderr) }
        let server = try ServeProcess(directory: dir, arguments: ["--rules", file], stderr: stderr)
        server.stop()
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("hearth serve: listening on"), "\(log)")
    }

    @Test(
        "SIGKILL loses nothing acknowledged: 200 acknowledged REST writes survive, and hearth verify passes",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func killNine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-kill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(directory: dir)
        // Python's urllib: 200 PUTs, each acknowledged (200 OK) before the next.
        let script = """
            import sys, urllib.request
            port = int(sys.argv[1])
            for i in range(200):
                req = urllib.request.Request(f"http://127.0.0.1:{port}/k/n{i}.json", data=str(i).encode(), method="PUT")
                with urllib.request.urlopen(req) as r:
                    assert r.status == 200
            print("acked 200")
            """
        let writes = try FirebaseAdmin.run("/usr/bin/env", ["python3", "-c", script, String(server.port)], env: [:])
        #expect(writes.status == 0 && writes.stdout.contains("acked 200"), "\(writes)")
        server.kill9()
        let restarted = try ServeProcess(directory: dir)
        let read = try FirebaseAdmin.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import json, sys, urllib.request
                with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/k.json") as r:
                    print(len(json.load(r)))
                """, String(restarted.port),
            ], env: [:])
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "200", "\(read)")
        restarted.stop()
        let verify = try Tool.run(["verify", dir])
        #expect(verify.status == 0, "\(verify)")
    }
}

@Suite("hearth serve: a full disk", .serialized)
struct ServeFullDiskTests {
    /// Runs a Python script with the server's port.
    static func python(_ script: String, _ port: Int) throws -> ToolRun {
        try FirebaseAdmin.run("/usr/bin/env", ["python3", "-c", script, String(port)], env: [:])
    }

    static let count = """
        import json, sys, urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/d.json", timeout=10) as r:
            print(len(json.load(r) or {}))
        """

    @Test(
        "a full disk suspends writes: reads go on, writes are refused with 503 and resume once space is freed; nothing acknowledged is lost",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func fullDisk() throws {
        let mount = FileManager.default.temporaryDirectory.appendingPathComponent("serve-tmpfs-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        defer {
            _ = FullDiskToolTests.sh("umount '\(mount)'")
            try? FileManager.default.removeItem(atPath: mount)
        }
        guard FullDiskToolTests.sh("mount -t tmpfs -o size=2m tmpfs '\(mount)'") == 0 else {
            print("skipped: `mount -t tmpfs` is not allowed here (needs root in a namespace that permits it)")
            return
        }
        let dir = mount + "/db", filler = mount + "/filler"
        let server = try ServeProcess(directory: dir)
        defer { server.stop() }
        _ = FullDiskToolTests.sh("dd if=/dev/zero of='\(filler)' bs=1k count=1700")
        // PUT until a write is refused; count the 200s (acknowledged) — each one must survive.
        let fill = try Self.python(
            """
            import sys, urllib.request, urllib.error
            port, acked = int(sys.argv[1]), 0
            try:
                for i in range(100000):
                    req = urllib.request.Request(f"http://127.0.0.1:{port}/d/k{100000 + i}.json", data=("\\"" + "v" * 200 + "\\"").encode(), method="PUT")
                    with urllib.request.urlopen(req, timeout=10) as r:
                        assert r.status == 200
                    acked += 1
            except urllib.error.HTTPError as e:
                print("refused:", e.code, file=sys.stderr)
            print(acked)
            """, server.port)
        let acknowledged = Int(fill.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(acknowledged > 100, "\(fill)")
        #expect(fill.stderr.contains("refused: 503"), "\(fill)")
        // The disk is still full: the server goes on reading.
        #expect(server.process.isRunning, "the server goes on after a failed commit")
        let read = try Self.python(Self.count, server.port)
        let readable = Int(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(readable >= acknowledged, "acknowledged \(acknowledged), read \(readable): \(read)")
        // Space freed: writes resume by themselves (retried every second at first; a hang
        // guard of 90 s, not a deadline the verdict depends on).
        _ = FullDiskToolTests.sh("rm -f '\(filler)'")
        let resumed = try Self.python(
            """
            import sys, time, urllib.request, urllib.error
            for attempt in range(180):
                try:
                    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/after.json", data=b"1", method="PUT"), timeout=10)
                    print("written"); break
                except urllib.error.HTTPError as e:
                    assert e.code == 503, e.code
                    time.sleep(0.5)
            """, server.port)
        #expect(resumed.stdout.hasPrefix("written"), "\(resumed)")
        server.stop()
        // Restarted: every acknowledged write is there.
        let again = try ServeProcess(directory: dir)
        defer { again.stop() }
        let stored = Int(try Self.python(Self.count, again.port).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect((stored ?? -1) >= acknowledged, "acknowledged \(acknowledged), found \(stored ?? -1)")
    }
}
