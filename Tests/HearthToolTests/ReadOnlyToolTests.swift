// `hearth get/stats/state` on a store they cannot open for writing: held by
// another process, in a directory that is not writable, or with `--read-only`. They read the
// last consistent state without the lock and change no byte — same output as a normal open.
import Foundation
import Hearth
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.enabled(if: Tool.binary != nil, Tool.missingMessage))
struct ReadOnlyToolTests {
    /// Every entry of `dir` (and `dir` itself): name, size and modification time in nanoseconds.
    static func listing(_ dir: String) throws -> [String] {
        func entry(_ path: String, _ name: String) -> String {
            var st = stat()
            guard stat(path, &st) == 0 else { return "\(name) (stat failed: errno \(errno))" }
            #if canImport(Darwin)
            let mtime = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
            #else
            let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            #endif
            return "\(name) \(st.st_size) bytes mtime \(mtime) mode \(String(st.st_mode, radix: 8))"
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        return [entry(dir, ".")] + names.map { entry(dir + "/" + $0, $0) }
    }

    /// A store with server data, a pending write, tracked queries (one filtered, complete), a
    /// pin, an auth token and an onDisconnect operation, then a checkpoint and a few more
    /// commits after it — so a read-only open replays MANIFEST + checkpoint + segments.
    static func makeStore(_ store: TempStore) throws {
        let r = try Tool.apply(
            store.path,
            [
                #"{"op":"serverSet","path":"scores","value":\#(dinosaurScores)}"#,
                #"{"op":"trackQuery","path":"scores","query":{"orderBy":"value","limitToLast":4},"complete":true}"#,
                #"{"op":"keepSynced","path":"scores","query":{"orderBy":"value","limitToLast":4},"on":true}"#,
                #"{"op":"auth","token":"secret-token","expiresAt":1700000000000}"#,
                #"{"op":"compact"}"#,
                #"{"op":"set","path":"scores/linhenykus","value":99}"#,
                #"{"op":"serverUpdate","path":"scores","children":{"stegosaurus":6}}"#,
                #"{"op":"onDisconnect","action":"set","path":"presence","value":"offline"}"#,
            ])
        #expect(r.status == 0, "\(r)")
    }

    /// The reading commands and their arguments.
    static func commands(_ dir: String) -> [[String]] {
        [
            ["get", dir, "scores", "--json", "--hash"],
            ["get", dir, "scores", "--query", #"{"orderBy":"value","limitToLast":2}"#, "--json"],
            ["get", dir, "scores", "--server"],
            ["state", dir, "--json"],
            ["stats", dir, "--json"],
        ]
    }

    /// The outputs of a normal (writable, locking) open of every reading command. Run twice so
    /// that anything a first open writes (a checkpoint, maintenance) has happened already.
    static func normalOutputs(_ dir: String) throws -> [String] {
        for args in commands(dir) { _ = try Tool.run(args) }
        return try commands(dir).map { args in
            let r = try Tool.run(args)
            #expect(r.status == 0 && r.stderr.isEmpty, "\(args): \(r)")
            return r.stdout
        }
    }

    @Test func aStoreHeldByAnotherProcessIsReadWithoutTheLock() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let expected = try Self.normalOutputs(store.path)

        // This test process holds the store open (and its lock) while the tool reads it.
        let holder = try Store.open(directory: store.path)
        defer { try? holder.close() }
        let before = try Self.listing(store.path)
        for (args, want) in zip(Self.commands(store.path), expected) {
            let r = try Tool.run(args)
            #expect(r.status == 0, "\(args): \(r)")
            #expect(
                r.stdout == want, "\(args): read-only output differs from a normal open's:\n\(r.stdout)\nvs\n\(want)")
            #expect(
                r.stderr.contains("another process has the store open") && r.stderr.contains("read-only"),
                "\(args): \(r)")
        }
        // The same with the flag given explicitly: no note about the lock is needed.
        let explicit = try Tool.run(["get", store.path, "scores", "--json", "--hash", "--read-only"])
        #expect(explicit.status == 0 && explicit.stdout == expected[0] && explicit.stderr.isEmpty, "\(explicit)")
        #expect(try Self.listing(store.path) == before, "a read-only read changed the store's files")

        // What the holder commits afterwards is seen by the next read.
        try holder.applyServerOverwrite(.number(7), at: "scores/stegosaurus")
        let later = try Tool.run(["get", store.path, "scores/stegosaurus", "--read-only"])
        #expect(later.status == 0 && later.lines.first == "7", "\(later)")

        // Commands that write still refuse a held store.
        let compact = try Tool.run(["compact", store.path])
        #expect(compact.status == 1 && compact.stderr.contains("locked by another process"), "\(compact)")
    }

    @Test func aTornTailIsIgnoredNotTruncated() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let expected = try Self.normalOutputs(store.path)
        // Half a record at the end of the last segment, as a crash (or a writer mid-write) leaves it.
        let segment = try store.files().filter { $0.hasPrefix("seg-") }.last!
        var bytes = try store.read(segment)
        bytes +=
            [0x12, 0x34, 0x56, 0x78, 0x40, 0, 0, 0, 0x40, 0, 0, 0, 1, 0, 0, 0] + [UInt8](repeating: 0xAB, count: 20)
        try store.write(segment, bytes)
        let before = try Self.listing(store.path)
        for (args, want) in zip(Self.commands(store.path), expected) {
            let r = try Tool.run(args + ["--read-only"])
            #expect(r.status == 0, "\(args): \(r)")
            if args[0] == "stats" {
                // The torn bytes are on disk: the files are 36 bytes larger; all else is the same.
                let got = try r.json(), was = try JSONValue.parse(want)
                #expect(got["footprintBytes"]?.doubleValue == (was["footprintBytes"]?.doubleValue ?? 0) + 36, "\(r)")
                for key in [
                    "records", "lastLSN", "checkpointLSN", "deadBytes", "pendingWrites", "serverCacheBytes",
                    "recordsByType",
                ] {
                    #expect(got[key] == was[key], "stats \(key): \(r.stdout) vs \(want)")
                }
            } else {
                #expect(r.stdout == want, "\(args): \(r.stdout) vs \(want)")
            }
            #expect(r.stderr.contains("ignored a torn tail of 36 bytes at \(segment)"), "\(args): \(r)")
        }
        #expect(try Self.listing(store.path) == before, "a read-only read changed the store's files")
        #expect(try store.read(segment) == bytes, "the torn tail is still there")
        // A normal open truncates it, and says so.
        let normal = try Tool.run(["get", store.path, "scores", "--json", "--hash"])
        #expect(
            normal.stdout == expected[0] && normal.stderr.contains("recovery dropped a torn tail: 36 bytes"),
            "\(normal)")
    }

    @Test func readOnlyRefusesDamageAndMissingStores() throws {
        let missing = TempStore()
        let r = try Tool.run(["get", missing.path, "/", "--read-only"])
        #expect(r.status == 1 && r.stderr.contains("no store at"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: missing.path))

        // Damage other than a torn tail is not read past: the command fails and changes nothing.
        let store = TempStore()
        try Self.makeStore(store)
        var manifest = try store.read("MANIFEST")
        manifest[30] ^= 0x01
        try store.write("MANIFEST", manifest)
        let before = try Self.listing(store.path)
        let damaged = try Tool.run(["get", store.path, "scores", "--read-only"])
        #expect(
            damaged.status == 1 && damaged.stderr.contains("store is damaged") && damaged.stderr.contains("MANIFEST"),
            "\(damaged)")
        #expect(try Self.listing(store.path) == before)
    }

    /// Runs the tool as the unprivileged user 65534 (root ignores file modes), or as this user
    /// when it is not root. Nil when neither is possible.
    static func runUnprivileged(_ args: [String]) throws -> ToolRun? {
        if geteuid() != 0 { return try Tool.run(args) }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", Tool.binary!.path] + args
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self))
    }

    @Test func aDirectoryThatIsNotWritableIsReadReadOnly() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let expected = try Self.normalOutputs(store.path)
        let asRoot = geteuid() == 0
        if asRoot {
            // Root ignores modes: hand the store to an unprivileged user who may only read it.
            #expect(chown(store.path, 65534, 65534) == 0)
            for f in try store.files() { #expect(chown(store.path + "/" + f, 65534, 65534) == 0) }
        }
        #expect(chmod(store.path, 0o500) == 0)
        defer {
            _ = chmod(store.path, 0o700)
            if asRoot { _ = chown(store.path, 0, 0) }
        }
        // Only meaningful where the mode is enforced for the user the tool runs as.
        guard let probe = try Self.runUnprivileged(["get", store.path, "scores", "--json", "--hash"]) else {
            print("skipped: running as root and /usr/bin/setpriv is missing, so chmod 0500 cannot be enforced")
            return
        }
        if !asRoot && access(store.path, W_OK) == 0 {
            print("skipped: chmod 0500 does not make the directory unwritable here")
            return
        }
        #expect(probe.status == 0 && probe.stdout == expected[0], "\(probe)")
        let before = try Self.listing(store.path)
        for (args, want) in zip(Self.commands(store.path), expected) {
            guard let r = try Self.runUnprivileged(args) else { return }
            #expect(r.status == 0, "\(args): \(r)")
            #expect(r.stdout == want, "\(args): \(r.stdout) vs \(want)")
            #expect(r.stderr.contains("is not writable") && r.stderr.contains("read-only"), "\(args): \(r)")
        }
        #expect(try Self.listing(store.path) == before, "a read-only read changed the store's files")
    }
}
