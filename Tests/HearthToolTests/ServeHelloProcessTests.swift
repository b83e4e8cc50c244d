// `hearth serve` tells clients where to reconnect (the hello's `h`): where they found it, not the
// address it is bound to — Firebase's JS SDK reconnects to `h`, so `--host 0.0.0.0` must not send
// `0.0.0.0` — or `--public-host` when given.
import Foundation
import Hearth
import Testing

@Suite("hearth serve: the hello's host", .serialized)
struct ServeHelloProcessTests {
    /// The `h` of the hello a WebSocket client connecting to 127.0.0.1 receives.
    static func helloHost(_ arguments: [String]) throws -> (host: String?, port: Int) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-hello-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(directory: dir, arguments: ["--emulator"] + arguments)
        defer { server.stop() }
        let out = try TokenClient.run(["ws", String(server.port), "owner"])
        return (out["hello"]?["d"]?["d"]?["h"]?.stringValue, server.port)
    }

    @Test(
        "bound to 0.0.0.0, the hello names the Host the client connected with; --public-host overrides it",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func reconnectHost() throws {
        let any = try Self.helloHost(["--host", "0.0.0.0"])
        #expect(any.host == "127.0.0.1:\(any.port)")
        let named = try Self.helloHost(["--public-host", "rtdb.example.org:443"])
        #expect(named.host == "rtdb.example.org:443")
    }

    /// A front instance: a WebSocket client of a redirected namespace gets the reset naming its
    /// owner in place of the hello, and the connection closes; a REST request for it is answered
    /// 421; other namespaces are served as usual.
    @Test("--redirect sends a namespace's clients to its owner", .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func redirect() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-front-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ServeProcess(
            directory: dir, arguments: ["--emulator", "--redirect", "owned=db-2.example:9001"])
        defer { server.stop() }
        let out = try TokenClient.run(["ws", String(server.port), "owner"], namespace: "owned")
        #expect(out["hello"] == (try JSONValue.parse(#"{"t":"c","d":{"t":"r","d":"db-2.example:9001"}}"#)))
        #expect(out["auth"] == nil, "closed after the reset")
        let rest = try TokenClient.run(["rest", String(server.port), "GET", "a", "--param", "ns=owned"])
        #expect(rest["status"]?.doubleValue == 421)
        let served = try TokenClient.run(["ws", String(server.port), "owner"], namespace: "other")
        #expect(served["hello"]?["d"]?["t"]?.stringValue == "h")
    }
}
