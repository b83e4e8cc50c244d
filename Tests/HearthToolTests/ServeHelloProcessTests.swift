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
}
