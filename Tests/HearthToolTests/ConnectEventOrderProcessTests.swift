// `hearth connect` raises Firebase's events for one `listen`: child events before `value`
// whatever order the types are listed in, and an ordered query's own moves and previous keys.

import Foundation
import Hearth
import Testing

@Suite struct ConnectEventOrderProcessTests {
    /// Offline, so the only data is the client's own writes: a local write makes the data
    /// complete at once, and a `listen` that lists `value` first must still print its
    /// `child_added` lines before `value`; a score change under `orderByChild` (no limit)
    /// prints `child_moved` then `child_changed`, both with the previous key in score order.
    @Test(
        "one listen of several types prints child events before value, and an ordered query's moves",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func listenEventOrder() throws {
        let scratch = try ConnectScratch()
        let client = try ConnectProcess(
            store: scratch.dir("client"), url: "ws://127.0.0.1:1?ns=connect-test", arguments: ["--offline"])
        try client.send(#"{"op":"set","path":"s","value":{"a":{"score":1},"b":{"score":2}},"id":"w"}"#)
        #expect(client.wait { $0.contains { $0.type == "saved" } }, "\(client.transcript)")
        try client.send(
            #"{"op":"listen","path":"s","query":{"orderBy":"score"},"events":["value","child_added","child_moved","child_changed"],"tag":"t"}"#
        )
        #expect(client.wait { $0.filter { $0.type == "event" }.count == 3 }, "\(client.transcript)")
        try client.send(#"{"op":"set","path":"s/b/score","value":0,"id":"w2"}"#)
        #expect(client.wait { $0.filter { $0.type == "event" }.count == 6 }, "\(client.transcript)")
        let events = client.lines("event").map { e in
            let event = e["event"]?.stringValue ?? "?"
            if event == "value" { return "value" }
            return "\(event) \(e["key"]?.stringValue ?? "?") \(e["prev"]?.stringValue ?? "null")"
        }
        #expect(
            events == [
                "child_added a null", "child_added b a", "value",
                "child_moved b null", "child_changed b null", "value",
            ], "\(client.transcript)")
        try client.send(#"{"op":"quit"}"#)
        #expect(client.waitForExit() == 0, "\(client.transcript)")
    }
}
