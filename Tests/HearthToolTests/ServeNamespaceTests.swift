// `hearth serve` as a real process serving one database per namespace (`ns`), as Firebase's
// emulator does, and the emulator's `/.settings/rules.json` endpoint. The client is
// token_client.py (a raw WebSocket and urllib).

import Foundation
import Testing

@Suite("hearth serve: namespaces and /.settings/rules.json", .serialized)
struct ServeNamespaceTests {
    /// A GET's status and body in `namespace` (nil: no `ns`).
    static func get(_ server: ServeProcess, _ path: String, ns: String?) throws -> (status: Int?, body: String) {
        try TokenClient.rest(server.port, "GET", path, namespace: ns)
    }

    @Test("each ns is a database of its own, over REST and WebSocket, kept in namespaces/NAME across a restart")
    func separateDatabases() throws {
        try ServeTokenTests.serving(emulator: true) { server, _ in
            #expect(try TokenClient.rest(server.port, "PUT", "a", body: "1", parameters: ["ns": "one"]).status == 200)
            #expect(try Self.get(server, "a", ns: "one").body == "1")
            #expect(try Self.get(server, "a", ns: "two").body == "null")
            #expect(try Self.get(server, "a", ns: nil).body == "null", "no ns: the default database")
            let put = try TokenClient.ws(server.port, "owner", put: "b", "2", namespace: "two")
            #expect(put == .init(auth: "ok", put: "ok"))
            #expect(try Self.get(server, "b", ns: "two").body == "2")
            #expect(try Self.get(server, "b", ns: "one").body == "null")
            let invalid = try Self.get(server, "a", ns: "One")
            #expect(invalid.status == 400 && invalid.body.contains("Invalid namespace"), "\(invalid)")
            let directory = server.directory
            server.stop()
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory + "/namespaces/one/MANIFEST"))
            #expect(FileManager.default.fileExists(atPath: directory + "/namespaces/two", isDirectory: &isDirectory))
            let again = try ServeProcess(directory: directory)
            defer { again.stop() }
            #expect(try Self.get(again, "a", ns: "one").body == "1", "kept across a restart")
            #expect(try Self.get(again, "b", ns: "two").body == "2")
            #expect(try Self.get(again, "a", ns: nil).body == "null")
        }
    }

    @Test("--namespace names the default database; --max-namespaces bounds the others (503, upgrade refused)")
    func defaultNameAndBound() throws {
        try ServeTokenTests.serving(emulator: true, arguments: ["--namespace", "main", "--max-namespaces", "1"]) {
            server, _ in
            #expect(try TokenClient.rest(server.port, "PUT", "a", body: "1", namespace: nil).status == 200)
            #expect(try Self.get(server, "a", ns: "main").body == "1", "ns=main is the default database")
            #expect(try TokenClient.rest(server.port, "PUT", "a", body: "2", parameters: ["ns": "one"]).status == 200)
            let refused = try Self.get(server, "a", ns: "two")
            #expect(refused.status == 503, "a second namespace is over the bound: \(refused)")
            let ws = try TokenClient.ws(server.port, "owner", namespace: "two")
            #expect(ws.auth == nil, "the upgrade is refused")
            #expect(try TokenClient.ws(server.port, "owner", namespace: "one").auth == "ok")
            #expect(try Self.get(server, "a", ns: "one").body == "2")
        }
    }

    @Test("the admin reads and replaces one namespace's rules; the others keep --rules; others get 401")
    func rulesSettings() throws {
        let open = #"{"rules": {".read": true, ".write": true}}"#
        try ServeTokenTests.serving(emulator: true, rules: open) { server, _ in
            let closed = """
                {
                  // No writes in this namespace.
                  "rules": {".read": true, ".write": false}
                }
                """
            let settings = ".settings/rules"
            let anonymous = try TokenClient.rest(server.port, "PUT", settings, body: closed, parameters: ["ns": "one"])
            #expect(anonymous.status == 401, "\(anonymous)")
            let installed = try TokenClient.rest(
                server.port, "PUT", settings, body: closed, bearer: "owner", parameters: ["ns": "one"])
            #expect(installed.status == 200 && installed.body.contains("ok"), "\(installed)")
            let read = try TokenClient.rest(server.port, "GET", settings, bearer: "owner", parameters: ["ns": "one"])
            #expect(read.status == 200 && read.body == closed)
            let other = try TokenClient.rest(server.port, "GET", settings, bearer: "owner", parameters: ["ns": "two"])
            #expect(other.body == open)
            #expect(try TokenClient.rest(server.port, "PUT", "a", body: "1", parameters: ["ns": "one"]).status == 401)
            #expect(try TokenClient.rest(server.port, "PUT", "a", body: "1", parameters: ["ns": "two"]).status == 200)
            let alice = try TokenClient.unsigned(#"{"sub":"alice","exp":\#(ServeTokenTests.expiry)}"#)
            #expect(try TokenClient.ws(server.port, alice, put: "a", namespace: "one").put == "permission_denied")
            #expect(try TokenClient.ws(server.port, alice, put: "a", namespace: "two").put == "ok")
            let invalid = try TokenClient.rest(
                server.port, "PUT", settings, body: #"{"rules": {".read": "nope("}}"#, bearer: "owner",
                parameters: ["ns": "one"])
            #expect(invalid.status == 400 && invalid.body.contains("line 1"), "\(invalid)")
            #expect(
                try TokenClient.rest(server.port, "PUT", "a", body: "1", parameters: ["ns": "one"]).status == 401,
                "refused rules leave the rules in force")
        }
    }
}
