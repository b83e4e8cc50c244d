// The time from `hearth serve` process start to accepting connections (a WebSocket hello
// received) over a database of `megabytes` MiB of string data.
import Foundation
import Hearth
import HearthWireTesting

func restart(megabytes: Int, runs: Int) throws -> [Double] {
    let dir = tempDir("restart")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var o = Store.Options()
    o.authoritative = true
    o.segmentSize = 16 << 20
    o.checkpointMinimumBytes = 16 << 20
    let store = try Store.open(directory: dir + "/db", options: o)
    // Random letters (they compress to about 60%), so the database is N MiB as JSON, written
    // in 1 MiB commits of 256 strings of 4 KiB.
    var rng = SystemRandomNumberGenerator()
    for chunk in 0..<megabytes {
        var kids: [ChildUpdate] = []
        for i in 0..<256 {
            var bytes = [UInt8](repeating: 0, count: 4096)
            for j in 0..<4096 { bytes[j] = UInt8(97 + rng.next() % 26) }
            kids.append(ChildUpdate(path: Path(keys: [ChildKey(String(format: "m%04d", chunk)), ChildKey(String(format: "k%03d", i))]), node: .string(String(decoding: bytes, as: UTF8.self))))
        }
        try store.applyServerMerge(kids, at: "data", durability: .buffered)
    }
    try store.compact()
    let stats = try store.stats()
    report("restart: database of \(megabytes) MiB of strings, \(stats.footprintBytes) bytes on disk")
    try store.close()
    var times: [Double] = []
    for _ in 0..<runs {
        let t0 = now()
        let serve = try ServeProcess.start(directory: dir + "/db")
        let c = try WebSocketTestClient(port: serve.port, group: clientGroup)
        _ = c.receive()
        times.append(now() - t0)
        c.close()
        serve.stop()
    }
    return times
}
