// `hearth serve` at its open-file limit, as a real process: a flood of idle connections is shed past
// the connection cap, which the server keeps below the limit, so it never runs out of descriptors —
// the clients already connected keep being served, and the process stays up.
import Foundation
import Testing

@Suite("hearth serve: connections past the open-file limit", .serialized)
struct ServeLimitsProcessTests {
    @Test(
        "400 idle connections under a 200-descriptor limit: the cap (200 less the 128 reserved) holds, the rest are shed, an open client is still answered",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func floodPastTheFileLimit() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-fd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(
            directory: dir, arguments: ["--emulator", "--head-timeout", "600"], fileLimit: 200)
        defer { server.stop() }
        // Python's sockets: one keep-alive client, then the flood; the shed connections read EOF at once,
        // the admitted ones stay open (the head timeout is long); the verdict waits (at most 60 s) until
        // every flood connection is one or the other.
        let script = """
            import select, socket, sys, time
            port = int(sys.argv[1])
            def get(s):
                data = b""
                try:
                    s.sendall(b"GET /a.json HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                    while b"\\r\\n\\r\\n" not in data:
                        chunk = s.recv(4096)
                        if not chunk:
                            return "closed"
                        data += chunk
                except OSError:
                    return "closed"
                return data.split(b" ")[1].decode()
            keep = socket.create_connection(("127.0.0.1", port), timeout=60)
            print("before", get(keep))
            flood = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(400)]
            by_fd = {s.fileno(): s for s in flood}
            poller = select.poll()
            for fd in by_fd:
                poller.register(fd, select.POLLIN)
            shed, deadline = 0, time.time() + 60
            while shed < 400 - 71 and time.time() < deadline:
                for fd, _ in poller.poll(1000):
                    poller.unregister(fd)
                    try:
                        shed += by_fd[fd].recv(1) == b""
                    except ConnectionResetError:
                        shed += 1
            print("shed", shed)
            print("after", get(keep))
            for s in flood:
                s.close()
            answer, deadline = "closed", time.time() + 60
            while answer == "closed" and time.time() < deadline:
                answer = get(socket.create_connection(("127.0.0.1", port), timeout=60))
            print("fresh", answer)
            """
        let run = try FirebaseAdmin.run("/usr/bin/env", ["python3", "-c", script, String(server.port)], env: [:])
        #expect(run.lines == ["before 200", "shed 329", "after 200", "fresh 200"], "\(run)")
        #expect(server.process.isRunning, "the server died")
    }

    @Test(
        "the core's limits reach the server from its flags: --max-listens-per-connection refuses the third listen, --max-message-bytes closes on a larger message",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func coreLimitFlags() throws {
        for limited in [false, true] {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-core-\(UUID().uuidString)")
                .path
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let flags = limited ? ["--max-listens-per-connection", "2", "--max-message-bytes", "1000"] : []
            let server = try ServeProcess(directory: dir, arguments: ["--emulator"] + flags)
            defer { server.stop() }
            let out = try TokenClient.run(["listens", String(server.port), "3", "2000"])
            let statuses = out["listens"]?.arrayValue?.compactMap(\.stringValue) ?? []
            if limited {
                #expect(statuses == ["ok", "ok", "too_many_listens"], "\(out)")
                #expect(
                    out["put"] == nil && out["error"] != nil, "a 2,000-byte message under a 1,000-byte limit: \(out)")
            } else {
                #expect(statuses == ["ok", "ok", "ok"] && out["put"]?.stringValue == "ok", "\(out)")
            }
            #expect(server.process.isRunning, "the server died")
        }
    }
}
