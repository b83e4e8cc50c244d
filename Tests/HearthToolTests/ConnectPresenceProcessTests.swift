import Foundation
import Hearth
import Testing

/// The rest of the documentation page with real processes: presence when a client
/// process is SIGKILLed, and registered-function transactions queued offline that survive a
/// SIGKILL and commit once each.
@Suite("hearth connect: presence and transactions, real processes", .serialized)
struct ConnectPresenceProcessTests {
    /// The presence example: a client marks itself online and registers onDisconnect
    /// operations; its process is killed; the server (noticing the dropped socket, or within
    /// its idle timeout) runs them, and a second client sees the first go offline with a
    /// server timestamp.
    @Test(
        "presence: a SIGKILLed client's onDisconnect runs on the server and a second client sees it",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func presenceAfterKill() throws {
        let scratch = try ConnectScratch()
        let server = try ServeProcess(directory: scratch.dir("server"))
        defer { server.stop() }
        let url = ConnectProcessTests.url(server.port)
        let watcher = try ConnectProcess(store: scratch.dir("watcher"), url: url)
        try watcher.send(#"{"op":"listen","path":"users/morgan","events":["value"],"tag":"m"}"#)
        let morgan = try ConnectProcess(store: scratch.dir("morgan"), url: url)
        #expect(
            morgan.wait { $0.contains { $0.type == "connected" && $0["connected"] == .bool(true) } },
            "\(morgan.transcript)")
        try morgan.send([
            #"{"op":"set","path":"users/morgan/connections/c1","value":true}"#,
            #"{"op":"onDisconnect","path":"users/morgan/connections/c1","action":"remove"}"#,
            #"{"op":"onDisconnect","path":"users/morgan/lastOnline","action":"set","value":{".sv":"timestamp"}}"#,
        ])
        #expect(
            morgan.wait { $0.filter { $0.type == "onDisconnect" && $0["ok"] == .bool(true) }.count == 2 },
            "\(morgan.transcript)")
        func seen(_ match: @escaping (JSONValue?) -> Bool) -> Bool {
            watcher.wait { $0.contains { $0.type == "event" && $0["tag"] == .string("m") && match($0["value"]) } }
        }
        #expect(seen { $0?["connections"]?["c1"] == .bool(true) }, "\(watcher.transcript)")
        let killedAt = Date().timeIntervalSince1970 * 1000
        morgan.kill9()
        #expect(
            seen { $0?["connections"] == nil && ($0?["lastOnline"]?.doubleValue ?? 0) >= killedAt - 5_000 },
            "\(watcher.transcript)")
        try watcher.closeInput()
        #expect(watcher.waitForExit() == 0)
    }

    /// Seven increments by a registered function, made offline, the process SIGKILLed, then
    /// restarted online: each commits exactly once (Firebase loses them on restart,
    /// firebase-ios-sdk #18) and the results report in the restarted run.
    @Test(
        "transactions: seven offline increments survive SIGKILL and add seven",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func offlineIncrementsSurviveKill() throws {
        let scratch = try ConnectScratch()
        let server = try ServeProcess(directory: scratch.dir("server"))
        defer { server.stop() }
        let url = ConnectProcessTests.url(server.port)
        let store = scratch.dir("client")
        let first = try ConnectProcess(store: store, url: url, arguments: ["--offline"])
        try first.send(
            (0..<7).map { #"{"op":"transaction","path":"counter","function":"increment","argument":1,"id":"t\#($0)"}"# }
        )
        #expect(first.wait { $0.filter { $0.type == "queued" }.count == 7 }, "\(first.transcript)")
        let ids = first.lines("queued").compactMap { $0["transactionId"]?.int }
        #expect(ids.count == 7, "\(first.transcript)")
        first.kill9()

        let second = try ConnectProcess(store: store, url: url)
        #expect(second.wait { $0.filter { $0.type == "transaction" }.count == 7 }, "\(second.transcript)")
        #expect(second.lines("transaction").allSatisfy { $0["committed"] == .bool(true) }, "\(second.transcript)")
        #expect(
            Set(second.lines("transaction").compactMap { $0["transactionId"]?.int }) == Set(ids), "\(second.transcript)"
        )
        try second.closeInput()
        #expect(second.waitForExit() == 0)
        #expect(try ConnectProcessTests.serverValue(scratch, port: server.port, path: "counter")?.int == 7)
    }
}
