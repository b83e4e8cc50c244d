// First event after an offline cold start: a child process (this binary, mode `coldstart-child`)
// opens the store left by the reconnect runs — through a Database that stays offline, or as a
// bare Store — and times open → the first `.value` of a query over the cached 10 MiB.
import Dispatch
import Foundation
import Hearth
import HearthDatabase

/// What a child process measures.
enum ColdQuery: String, CaseIterable {
    case dbLast50 = "db-last50", dbWhole = "db-whole", storeLast50 = "store-last50", storeWhole = "store-whole"

    var viaDatabase: Bool { self == .dbLast50 || self == .dbWhole }
    var last50: Bool { self == .dbLast50 || self == .storeLast50 }
}

/// The child's side: prints `open_ms first_ms children` and exits without closing (as an app
/// would be killed; nothing was written).
func coldStartChild(_ query: ColdQuery, dir: String) throws -> Never {
    let t0 = now()
    var tOpen = 0.0
    var children = 0
    if query.viaDatabase {
        var o = Database.Options()
        o.storeDirectory = dir
        o.cacheSizeBytes = 100 << 20
        o.connectAtOpen = false
        // This thread waits for the handlers: they run on a queue of their own, not on main.
        o.callbackQueue = DispatchQueue(label: "hearth.callbacks")
        let db = try Database(url: "ws://127.0.0.1:9?ns=test", options: o)
        tOpen = now()
        let ref = db.reference(withPath: "big")
        let q: any DatabaseQueryConvertible = query.last50 ? ref.queryLimited(toLast: 50) : ref
        let first = DispatchSemaphore(value: 0)
        let count = Counter()
        q.observe(.value) { snap in
            if count.count == 0 { count.add(Int(snap.childrenCount) + 1) }
            first.signal()
        }
        first.wait()
        children = count.count - 1
    } else {
        var o = Store.Options()
        o.cacheSizeBytes = 100 << 20
        let store = try Store.open(directory: dir, options: o)
        tOpen = now()
        let spec = query.last50 ? try QuerySpec.default.limitToLast(50) : QuerySpec.default
        let result = try store.query(spec, at: "big")
        guard result.complete else { fatalError("the cache is not complete") }
        children = result.window.node.childCount
    }
    let t1 = now()
    print(String(format: "%.3f %.3f %d", (tOpen - t0) * 1000, (t1 - t0) * 1000, children))
    exit(0)
}

struct ColdRun {
    var openMs: Double
    var firstMs: Double
    var children: Int
    /// Spawn → exit, as the parent saw it.
    var processMs: Double
}

/// The parent's side: `runs` child processes for `query`.
func coldStart(_ query: ColdQuery, dir: String, runs: Int) throws -> [ColdRun] {
    let me = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    var out: [ColdRun] = []
    for _ in 0..<runs {
        let p = Process()
        p.executableURL = me
        p.arguments = ["coldstart-child", query.rawValue, dir]
        let pipe = Pipe()
        p.standardOutput = pipe
        let t0 = now()
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let wall = (now() - t0) * 1000
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        guard p.terminationStatus == 0, fields.count == 3, let open = Double(fields[0]), let first = Double(fields[1]), let n = Int(fields[2]) else {
            fatalError("cold start child failed: status \(p.terminationStatus), output \(fields)")
        }
        out.append(ColdRun(openMs: open, firstMs: first, children: n, processMs: wall))
    }
    return out
}
