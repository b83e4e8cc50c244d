// Shared helpers for the HearthLog tests: deterministic payloads, store setup, model reads.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthModel
import HearthTesting

let storeDir = "/store"

/// A JSON-like payload (what the engine will log), deterministic from `seed`/`i`.
func jsonPayload(_ i: Int, seed: UInt64 = 1, extra: Int = 0) -> [UInt8] {
    var g = SeededRandom(seed: seed &* 1_000_003 &+ UInt64(i))
    let ops = ["set", "update", "remove", "merge"]
    let keys = ["users", "rooms", "messages", "presence", "settings"]
    var s = "{\"op\":\"\(ops[Int(g.next() % 4)])\",\"path\":\"/\(keys[Int(g.next() % 5)])/u\(g.next() % 1000)\","
    s += "\"id\":\"\(String(g.next(), radix: 16))\",\"ts\":\(1_700_000_000_000 + Int(g.next() % 1_000_000)),"
    s += "\"value\":{\"name\":\"user \(g.next() % 500)\",\"online\":\(g.next() % 2 == 0),\"score\":\(g.next() % 10000)"
    for k in 0..<Int(g.next() % 4) + extra { s += ",\"field\(k)\":\"value-\(g.next() % 100)\"" }
    s += "}}"
    return Array(s.utf8)
}

/// Random bytes (incompressible), deterministic.
func randomBytes(_ n: Int, seed: UInt64) -> [UInt8] {
    var g = SeededRandom(seed: seed)
    return (0..<n).map { _ in UInt8(truncatingIfNeeded: g.next()) }
}

/// Every record after `after`, as (lsn, type, payload).
func readAll(_ log: Log, after: LSN = 0) throws -> [(lsn: LSN, type: UInt8, payload: [UInt8])] {
    var out: [(LSN, UInt8, [UInt8])] = []
    let r = log.reader(after: after)
    var n = 0
    while let rec = try r.next() {
        out.append((rec.lsn, rec.type, rec.payload))
        n += 1
        precondition(n < 10_000_000)
    }
    return out.map { (lsn: $0.0, type: $0.1, payload: $0.2) }
}

/// Encodes a list of payloads as a checkpoint body: [u32 count] then per payload [u32 length][bytes].
func encodeBody(_ payloads: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    func u32(_ v: Int) { for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
    u32(payloads.count)
    for p in payloads {
        u32(p.count)
        out += p
    }
    return out
}

func decodeBody(_ b: [UInt8]) -> [[UInt8]]? {
    var i = 0
    func u32() -> Int? {
        guard i + 4 <= b.count else { return nil }
        defer { i += 4 }
        return (0..<4).reduce(0) { $0 | Int(b[i + $1]) << (8 * $1) }
    }
    guard let n = u32(), n < 1_000_000 else { return nil }
    var out: [[UInt8]] = []
    for _ in 0..<n {
        guard let len = u32(), i + len <= b.count else { return nil }
        out.append(Array(b[i..<i + len]))
        i += len
    }
    return i == b.count ? out : nil
}

/// The whole recovered history: checkpoint body (decoded as payload list) + records after it.
func recoveredHistory(_ log: Log) throws -> [[UInt8]] {
    var history: [[UInt8]] = []
    var after: LSN = 0
    if let c = log.checkpoint {
        let body = try c.readBody()
        history = try #require(decodeBody(body), "checkpoint body does not decode")
        #expect(LSN(history.count) == c.lsn)
        after = c.lsn
    }
    for r in try readAll(log, after: after) {
        #expect(r.lsn == LSN(history.count) + 1, "LSN continuity")
        history.append(r.payload)
    }
    return history
}

extension Log.Options {
    static func test(segmentSize: Int = 4096, durability: Durability = .full, salvage: Bool = false) -> Log.Options {
        var o = Log.Options()
        o.segmentSize = segmentSize
        o.durability = durability
        o.salvage = salvage
        return o
    }
}

/// Runs `body(t)` on `n` OS threads at once and waits for all.
func onThreads(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<n).map { t in OSThread { body(t) } }
    for t in threads { t.join() }
}
