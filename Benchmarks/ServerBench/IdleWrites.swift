// A write's cost beside idle connections: a `hearth serve` process holding `idle` protocol-v5
// connections that received the hello and do nothing, one connection listening where the
// writes land, and one writer putting one value at a time (put → ok). The figure is the
// writer's round trip, p50 and p99, quoted against the same process with no idle connection.
import Foundation
import Hearth
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting

/// Opens `idle` connections to a fresh `hearth serve`, then times `writes` acknowledged puts.
func idleWrites(idle: Int, writes: Int) throws -> IdleWritesRun {
    let dir = tempDir("idle")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // The default connection cap (10,000) would refuse the listener and the writer.
    let serve = try ServeProcess.start(
        directory: dir + "/db", extra: ["--idle-timeout", "86400", "--max-connections", String(idle + 100)])
    defer { serve.stop() }
    var clients: [WebSocketTestClient] = []
    clients.reserveCapacity(idle)
    for i in 0..<idle {
        let c = try WebSocketTestClient(port: serve.port, group: clientLoop(), source: sourceAddress())
        guard c.receive(timeout: 30) != nil else { fatalError("no hello on idle connection \(i)") }
        clients.append(c)
    }
    let listener = try WebSocketTestClient(port: serve.port, group: clientLoop())
    let writer = try WebSocketTestClient(port: serve.port, group: clientLoop())
    guard listener.receive() != nil, writer.receive() != nil else { fatalError("no hello") }
    try listener.send(ClientRequest.listen(path: "w", query: .default, tag: nil, hash: "").message(number: 1))
    guard listener.response(1).status == "ok" else { fatalError("listen failed") }
    let load = loadAverage()
    var times: [Double] = []
    times.reserveCapacity(writes)
    // The first tenth warms the path (allocations, the store's first commits) and is not counted.
    let warm = writes / 10
    for n in 1...(warm + writes) {
        let put = ClientRequest.put(path: Path(keys: ["w", ChildKey("k\(n % 100)")]), data: .number(Double(n)), hash: nil)
        let start = now()
        try writer.send(put.message(number: n))
        guard writer.response(n).status == "ok" else { fatalError("write \(n) failed") }
        if n > warm { times.append((now() - start) * 1000) }
    }
    guard !clients.contains(where: \.isClosed) else { fatalError("the server closed an idle connection") }
    for c in clients { c.close() }
    listener.close()
    writer.close()
    return IdleWritesRun(
        idle: idle, writes: writes, load: load, p50Ms: percentile(times, 0.5), p99Ms: percentile(times, 0.99))
}

/// The same question asked of the sans-I/O core alone, where the socket's noise does not hide
/// it: the core's time to take one put (a listener at the written location, the push rendered)
/// with `idle` connections open that hold no listen, per write, over `writes` puts, and a tick
/// (the clock's once-a-second visit) with those connections open.
func idleCore(idle: Int, writes: Int) -> (writeMicros: Double, tickMicros: Double) {
    var c = ServerCore.Configuration()
    c.emulator = true
    var core = ServerCore(data: .empty, configuration: c, policy: nil, seed: 1)
    let t0: Int64 = 1_700_000_000_000
    for i in 0..<idle { _ = core.connect(ConnectionID(UInt64(i + 10)), now: t0) }
    _ = core.connect(ConnectionID(1), now: t0)
    _ = core.connect(ConnectionID(2), now: t0)
    _ = core.receive(ConnectionID(1), frame: ClientRequest.listen(path: "w", query: .default, tag: nil, hash: "").message(number: 1), now: t0)
    var times: [Double] = []
    for n in 1...writes {
        let put = ClientRequest.put(path: Path(keys: ["w", ChildKey("k\(n % 100)")]), data: .number(Double(n)), hash: nil).message(number: n)
        let start = now()
        let out = core.receive(ConnectionID(2), frame: put, now: t0)
        _ = out.renderedMessages()
        times.append((now() - start) * 1e6)
    }
    var ticks: [Double] = []
    for k in 1...20 {
        let start = now()
        _ = core.tick(now: t0 + Int64(k))
        ticks.append((now() - start) * 1e6)
    }
    return (percentile(times, 0.5), percentile(ticks, 0.5))
}
