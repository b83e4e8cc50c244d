// `hearth serve` as a real process: onDisconnect operations of connections open when the server
// is killed (SIGKILL) or stopped (SIGTERM) run when it starts again, before any client is served;
// a reconnecting client's `ls` ends its stale session; a priority may be a server value. The
// client is Tests/HearthToolTests/Python/token_client.py.

import Foundation
import Hearth
import Testing

@Suite("hearth serve: durable onDisconnect, ls, priority server values", .serialized)
struct ServeOnDisconnectProcessTests {
    func restartRuns(signal: Int32) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-od-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(directory: dir)
        // The REST requests go to the namespace the WebSockets use (token_client.py's `test`).
        _ = try TokenClient.run(["rest", String(server.port), "PUT", "count", "41", "--param", "ns=test"])
        let queued = try TokenClient.run([
            "ondisconnect", String(server.port), String(server.process.processIdentifier), String(signal),
        ])
        #expect(queued["o1"] == "ok" && queued["o2"] == "ok" && queued["o3"] == "ok", "\(queued)")
        server.process.waitUntilExit()
        // The first request the restarted server answers sees every operation applied, once.
        let restarted = try ServeProcess(directory: dir)
        defer { restarted.stop() }
        let read = try TokenClient.run([
            "rest", String(restarted.port), "GET", "", "--param", "format=export", "--param", "ns=test",
        ])
        let body = try JSONValue.parse(read["body"]?.stringValue ?? "")
        #expect(body["presence"]?["u1"] == false, "\(read)")
        #expect(body["count"] == 42, "\(read)")
        #expect(body["last"]?["u1"]?[".priority"]?.doubleValue ?? 0 > 1_600_000_000_000, "\(read)")
        // And again after another restart: not twice.
        restarted.stop()
        let again = try ServeProcess(directory: dir)
        defer { again.stop() }
        let second = try TokenClient.run(["rest", String(again.port), "GET", "count", "--param", "ns=test"])
        #expect(second["body"] == "42", "\(second)")
    }

    @Test(
        "SIGKILL with onDisconnect operations queued: the restart runs them before serving, once",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func afterKill() throws { try restartRuns(signal: SIGKILL) }

    @Test(
        "a clean stop (SIGTERM) with onDisconnect operations queued: the restart runs them, once",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func afterStop() throws { try restartRuns(signal: SIGTERM) }

    @Test(
        "ls ends the stale session: its onDisconnect runs before the new session's write",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func lastSession() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-ls-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(directory: dir)
        defer { server.stop() }
        let result = try TokenClient.run(["stale", String(server.port)])
        #expect(result["p2"] == "ok" && result["firstClosed"] == true && result["get"] == true, "\(result)")
    }

    @Test(
        "a server value as a priority over REST: PUT and PATCH resolve it",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func priorityServerValue() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-pri-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(directory: dir)
        defer { server.stop() }
        let port = String(server.port)
        let put = try TokenClient.run(["rest", port, "PUT", "a", #"{".value":1,".priority":{".sv":"timestamp"}}"#])
        #expect(put["status"] == 200, "\(put)")
        let patch = try TokenClient.run([
            "rest", port, "PATCH", "", #"{"a":{".value":2,".priority":{".sv":{"increment":1}}}}"#,
        ])
        #expect(patch["status"] == 200, "\(patch)")
        let read = try TokenClient.run(["rest", port, "GET", "a", "--param", "format=export"])
        let body = try JSONValue.parse(read["body"]?.stringValue ?? "")
        #expect(body[".value"] == 2 && body[".priority"]?.doubleValue ?? 0 > 1_600_000_000_000, "\(read)")
    }
}
