// Memory per idle connection of a `hearth serve` process: its VmRSS and Private_Dirty before and
// after `connections` protocol-v5 WebSocket connections that received the hello (and, with
// `listening`, each holds one answered listen on its own one-value location, written before
// the first reading so the data is not counted), once the figures have settled.
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting

func idleMemory(connections: Int, listening: Bool) async throws -> MemoryRun {
    let dir = tempDir("memory")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // The default connection cap (10,000) would shed connections past it.
    let serve = try ServeProcess.start(
        directory: dir + "/db", extra: ["--idle-timeout", "86400", "--max-connections", String(connections + 100)])
    defer { serve.stop() }
    // One connection first (kept open): whatever the first connection initialises is not
    // counted against the N.
    let first = try WebSocketTestClient(port: serve.port, group: clientGroup)
    guard first.receive() != nil else { fatalError("no hello") }
    if listening {
        let kids = (0..<connections).map { (Path(keys: [ChildKey(String(format: "c%05d", $0))]), JSONValue.string("v\($0)")) }
        for chunk in stride(from: 0, to: kids.count, by: 1000) {
            try first.send(ClientRequest.merge(path: "small", data: Array(kids[chunk..<min(kids.count, chunk + 1000)])).message(number: chunk + 1))
            guard first.response(chunk + 1).status == "ok" else { fatalError("merge failed") }
        }
        try first.send(ClientRequest.listen(path: "warm", query: .default, tag: nil, hash: "").message(number: 1_000_000))
        _ = first.response(1_000_000)
    }
    let before = settled(serve)
    let load = loadAverage()
    var clients: [WebSocketTestClient] = []
    for i in 0..<connections {
        let c = try WebSocketTestClient(port: serve.port, group: clientLoop(), source: sourceAddress())
        guard c.receive(timeout: 30) != nil else { fatalError("no hello on connection \(i)") }
        if listening {
            try c.send(ClientRequest.listen(path: Path(keys: ["small", ChildKey(String(format: "c%05d", i))]), query: .default, tag: nil, hash: "").message(number: 1))
            guard c.response(1).status == "ok" else { fatalError("listen \(i) failed") }
        }
        clients.append(c)
    }
    let after = settled(serve)
    guard !clients.contains(where: \.isClosed) else { fatalError("the server closed a connection") }
    for c in clients { c.close() }
    first.close()
    return MemoryRun(
        connections: connections, listening: listening, load: load,
        rssBeforeKiB: before.rssKiB, rssAfterKiB: after.rssKiB,
        privateDirtyBeforeKiB: before.privateDirtyKiB, privateDirtyAfterKiB: after.privateDirtyKiB,
        rssBytesPerConnection: Double(after.rssKiB - before.rssKiB) * 1024 / Double(connections),
        privateDirtyBytesPerConnection: Double(after.privateDirtyKiB - before.privateDirtyKiB) * 1024 / Double(connections))
}

/// The process's memory once two readings 0.5 s apart differ by under 0.5% (at least 1 s,
/// at most 10 s of waiting).
func settled(_ serve: ServeProcess) -> (rssKiB: Int, privateDirtyKiB: Int) {
    usleep(1_000_000)
    var last = serve.memory()
    for _ in 0..<18 {
        usleep(500_000)
        let m = serve.memory()
        defer { last = m }
        if abs(m.rssKiB - last.rssKiB) * 200 < max(1, last.rssKiB) { return m }
    }
    return last
}
