// `hearth connect` keeps keys that differ only in Unicode normalization (`é` U+00E9 and `e`
// U+0301) apart: what it reads from its input, writes, and prints.

import Foundation
import Hearth
import Testing

@Suite("hearth connect: exact keys", .serialized)
struct ConnectExactKeyProcessTests {
    @Test(
        "a set and an update of both keys write two children, and get and a listen print both",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func bothKeys() throws {
        let scratch = try ConnectScratch()
        let server = try ServeProcess(directory: scratch.dir("server"))
        defer { server.stop() }
        let client = try ConnectProcess(store: scratch.dir("client"), url: ConnectProcessTests.url(server.port))
        try client.send([
            #"{"op":"listen","path":"k","tag":"k"}"#,
            #"{"op":"set","path":"k","value":{"\u00e9":1,"e\u0301":2},"id":"set"}"#,
            #"{"op":"update","path":"u","values":{"\u00e9":"a","e\u0301":"b"},"id":"update"}"#,
        ])
        #expect(client.wait { $0.filter { $0.type == "ack" }.count == 2 }, "\(client.transcript)")
        // The set raised its event before its ack; once the client has exited, its output is
        // read to the end, so the check below fails at once (no waiting for a line that a
        // broken client never prints).
        try client.send(#"{"op":"quit"}"#)
        #expect(client.waitForExit() == 0, "\(client.transcript)")
        let both = try JSONValue.parse(#"{"e\u0301":2,"\u00e9":1}"#)
        let values = client.lines("event").filter { $0["tag"] == .string("k") }.map { $0["value"] }
        #expect(values.contains(both), "\(client.transcript)")

        #expect(try ConnectProcessTests.serverValue(scratch, port: server.port, path: "k") == both)
        #expect(
            try ConnectProcessTests.serverValue(scratch, port: server.port, path: "u")
                == JSONValue.parse(#"{"e\u0301":"b","\u00e9":"a"}"#))
    }
}
