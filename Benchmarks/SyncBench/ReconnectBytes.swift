// Reconnect bytes: a client keeps ~10 MiB synced (one location, or 100 locations), closes, and
// a new Database on the same store reconnects; the counting transport sums what crosses the
// wire until every listen is answered. Unchanged data should cost no data (the listens carry
// the cached data's hashes); then 10% of the data is changed while the client is away — spread
// over it, then in one block (which the compound hash's range merges re-send alone).
import Foundation
import Hearth
import HearthDatabase
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting

/// Where the ~10 MiB live: 10,240 children of 1,000 bytes, under one location or spread
/// over 100 (102–103 children each).
enum Layout: String, CaseIterable {
    case single, spread

    static let children = 10_240
    static let filler = String(repeating: "x", count: 1000)

    /// The synced locations.
    var locations: [String] {
        switch self {
        case .single: ["big"]
        case .spread: (0..<100).map { String(format: "locs/l%02d", $0) }
        }
    }

    /// The root of the layout and child `i`'s path under it.
    var root: String { self == .single ? "big" : "locs" }
    func childPath(_ i: Int) -> Path {
        switch self {
        case .single: Path(keys: [ChildKey(String(format: "c%05d", i))])
        case .spread: Path(keys: [ChildKey(String(format: "l%02d", i % 100)), ChildKey(String(format: "c%05d", i))])
        }
    }

    /// The children changed in round `round`: every tenth child (single), or every child of
    /// every tenth location (spread) — 10% of the data either way.
    func changed(round: Int) -> [Int] {
        switch self {
        case .single: (0..<Layout.children).filter { $0 % 10 == round % 10 }
        case .spread: (0..<Layout.children).filter { ($0 % 100) % 10 == round % 10 }
        }
    }

    /// The children changed in round `round` of the block changes: 1,024 consecutive children
    /// (single) — 10% of the data in one part of it; as ``changed(round:)`` for spread, whose
    /// locations are blocks already.
    func changedBlock(round: Int) -> [Int] {
        switch self {
        case .single: Array((round * 2048 % Layout.children)..<(round * 2048 % Layout.children + 1024))
        case .spread: changed(round: round)
        }
    }
}

/// Writes children through a raw client in ~1 MB merges.
func serverMerge(_ server: LiveServer, layout: Layout, indices: [Int], value: (Int) -> String) throws {
    let w = try server.rawClient()
    var n = 1
    for chunk in stride(from: 0, to: indices.count, by: 1024) {
        let part = indices[chunk..<min(indices.count, chunk + 1024)].map { (layout.childPath($0), JSONValue.string(value($0))) }
        try w.send(ClientRequest.merge(path: Path(keys: [ChildKey(layout.root)]), data: part).message(number: n))
        guard w.response(n, timeout: 60).status == "ok" else { fatalError("seeding failed") }
        n += 1
    }
    w.close()
}

/// What one connection cost, from opening the Database to the last listen answered.
struct WireCost {
    var sent: Int
    var received: Int
    var dataPushes: Int
    var seconds: Double
}

struct ReconnectFigures {
    var first: WireCost
    var unchanged: [WireCost] = []
    var changed: [WireCost] = []
    var changedBlock: [WireCost] = []
}

/// Opens a Database on `dir` with the counting transport, keeps every location synced
/// (already pinned after the first run), waits until every listen is answered, closes.
func syncOnce(_ server: LiveServer, dir: String, layout: Layout, transport: CountingTransport) throws -> WireCost {
    transport.reset()
    var o = Database.Options()
    o.storeDirectory = dir
    o.cacheSizeBytes = 100 << 20
    o.transport = transport
    // This thread waits for the handlers: they run on a queue of their own, not on main.
    o.callbackQueue = DispatchQueue(label: "hearth.callbacks")
    let t0 = now()
    let db = try Database(url: server.url, options: o)
    for location in layout.locations { db.reference(withPath: location).keepSynced(true) }
    let count = layout.locations.count
    guard waitUntil(timeout: 300, { transport.snapshot.listensAnswered >= count }) else {
        fatalError("listens not answered: \(transport.snapshot.listensAnswered) of \(count)")
    }
    let s = transport.snapshot
    try db.close()
    return WireCost(sent: s.sentBytes, received: s.receivedBytes, dataPushes: s.dataPushes, seconds: s.lastListenAnswer - t0)
}

/// The whole scenario for one layout. Returns the figures and the client's store directory
/// (kept, closed, for the cold-start runs; the caller removes it).
func reconnectBench(layout: Layout, runs: Int) async throws -> (ReconnectFigures, String) {
    let server = try await LiveServer()
    try serverMerge(server, layout: layout, indices: Array(0..<Layout.children)) { _ in Layout.filler }
    let dir = tempDir("cache-\(layout.rawValue)")
    let transport = CountingTransport()
    var figures = ReconnectFigures(first: try syncOnce(server, dir: dir, layout: layout, transport: transport))
    for _ in 0..<runs { figures.unchanged.append(try syncOnce(server, dir: dir, layout: layout, transport: transport)) }
    for round in 0..<runs {
        let mark = String(format: "%03d", round)
        try serverMerge(server, layout: layout, indices: layout.changed(round: round)) { _ in mark + Layout.filler.dropFirst(3) }
        figures.changed.append(try syncOnce(server, dir: dir, layout: layout, transport: transport))
    }
    for round in 0..<runs {
        let mark = String(format: "b%02d", round)
        try serverMerge(server, layout: layout, indices: layout.changedBlock(round: round)) {
            _ in mark + Layout.filler.dropFirst(3)
        }
        figures.changedBlock.append(try syncOnce(server, dir: dir, layout: layout, transport: transport))
    }
    try await server.stop()
    return (figures, dir)
}
