// `hearth connect` against `hearth serve --app-check-key-file`: the App Check token from
// `--app-check-token-file` goes with every connection, and the `appCheck` command gives one to a
// client that started without.

import Foundation
import Hearth
import Testing

@Suite("hearth connect: App Check tokens", .serialized)
struct ConnectAppCheckProcessTests {
    @Test(
        "a client with --app-check-token-file writes; one without is refused until the appCheck command",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func tokenFileAndCommand() throws {
        let scratch = try ConnectScratch()
        let key = "connect-app-check-key-0123456789abcdef"
        try key.write(toFile: scratch.dir("key"), atomically: true, encoding: .utf8)
        let server = try ServeProcess(
            directory: scratch.dir("server"), arguments: ["--emulator", "--app-check-key-file", scratch.dir("key")])
        defer { server.stop() }
        let exp = Int(Date().timeIntervalSince1970) + 3600
        let token = try TokenClient.hs256(key, #"{"sub":"1:123:ios:abc","exp":\#(exp)}"#)
        try token.write(toFile: scratch.dir("token"), atomically: true, encoding: .utf8)
        let url = ConnectProcessTests.url(server.port)

        let withToken = try ConnectProcess(
            store: scratch.dir("with"), url: url, arguments: ["--app-check-token-file", scratch.dir("token")])
        try withToken.send(#"{"op":"set","path":"a","value":1,"id":"w"}"#)
        #expect(withToken.wait { $0.contains { $0.type == "ack" } }, "\(withToken.transcript)")
        #expect(withToken.lines("ack").first?["ok"] == .bool(true), "\(withToken.transcript)")

        let without = try ConnectProcess(store: scratch.dir("without"), url: url)
        try without.send(#"{"op":"set","path":"b","value":1,"id":"refused"}"#)
        #expect(without.wait { $0.contains { $0.type == "ack" } }, "\(without.transcript)")
        let refused = without.lines("ack").first
        #expect(refused?["ok"] == .bool(false), "\(without.transcript)")
        #expect(refused?["error"]?.stringValue?.contains("permission") == true, "\(without.transcript)")
        try without.send([
            #"{"op":"appCheck","token":"\#(token)"}"#, #"{"op":"set","path":"b","value":2,"id":"accepted"}"#,
        ])
        #expect(without.wait { $0.filter { $0.type == "ack" }.count == 2 }, "\(without.transcript)")
        #expect(without.lines("ok").contains { $0["op"]?.stringValue == "appCheck" }, "\(without.transcript)")
        #expect(without.lines("ack").last?["ok"] == .bool(true), "\(without.transcript)")
        try withToken.send(#"{"op":"get","path":"b","id":"read"}"#)
        #expect(withToken.wait { $0.contains { $0.type == "get" } }, "\(withToken.transcript)")
        #expect(withToken.lines("get").first?["value"] == .number(2), "\(withToken.transcript)")
    }
}
