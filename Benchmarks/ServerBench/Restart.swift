// The time from `hearth serve` process start to accepting connections (a WebSocket hello
// received) over a database of `megabytes` MiB of string data.
import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthWireTesting

func restart(megabytes: Int, runs: Int) throws -> [Double] {
    let dir = tempDir("restart")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var o = AuthoritativeStore.Options()
    o.durability = .buffered
    let opened = try AuthoritativeStore.open(directory: dir + "/db", options: o)
    let store = opened.store
    var data = opened.data
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
        data = data.merging(kids.map { ($0.path, $0.node) }, at: "data")
        try store.commit(data: data) { (batch: inout AuthoritativeBatch) throws(StoreError) in
            try batch.merge(kids, at: "data")
        }
    }
    // Closing checkpoints the log, as `hearth serve` leaves it when it stops.
    try store.close()
    report("restart: database of \(megabytes) MiB of strings, \(directoryBytes(dir + "/db")) bytes on disk")
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
