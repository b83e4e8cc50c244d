import ArgumentParser
import Foundation
import Hearth

/// `hearth demo [DIR]`: the product documentation's offline page, played end to end with real
/// clients over real sockets against an in-process server; `--store-only` plays the offline
/// story on a bare store (the engine alone).
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Play the documentation's offline page with real clients and a server: cached queries, restarts, offline queries, queued writes and transactions, keepSynced, presence, an expiring token.",
        discussion:
            "Uses a fresh temporary directory unless DIR is given (DIR must be empty or absent). With --store-only, plays the offline story on one bare store instead: cached queries, a restart, offline queries, pending writes, keepSynced under pruning."
    )

    @Argument(help: "Where to put the demo's stores (default: a fresh temporary directory).")
    var directory: String?

    @Flag(help: "Play the engine-only story on one store (no server, no sockets).")
    var storeOnly = false

    func run() async throws {
        let dir =
            directory
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("hearth-demo-\(UUID().uuidString)").path
        if FileManager.default.fileExists(atPath: dir + "/MANIFEST")
            || ((try? FileManager.default.contentsOfDirectory(atPath: dir))?.isEmpty == false)
        {
            throw ToolError.failed("\(dir) is not empty; give an empty directory")
        }
        if storeOnly {
            try Demo(directory: dir).run()
        } else {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try await PageDemo(directory: dir, connectBinary: nil).run()
        }
    }
}

/// The story, step by step. Every event printed is one a listener actually received.
struct Demo {
    let directory: String
    let scores: Path = "scores"
    let byValue = QuerySpec(orderBy: .value)

    func say(_ s: String = "") { print(s) }

    func heading(_ n: Int, _ title: String) {
        say()
        say("\(n). \(title)")
        say(String(repeating: "─", count: title.count + 3))
    }

    /// Collects a listener's events so the story can print them in order.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [ViewEvent] = []
        func record(_ e: ViewEvent) { lock.lock(); events.append(e); lock.unlock() }
        func take() -> [ViewEvent] { lock.lock(); defer { events = []; lock.unlock() }; return events }
    }

    func describe(_ e: ViewEvent) -> String {
        switch e.kind {
        case .value:
            return "  value          \(e.node.plainJSONString())"
        default:
            let key = e.childKey?.string ?? "?"
            let prev = e.previousChildKey.map { " (after \($0))" } ?? ""
            return
                "  \(e.kind.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)) The \(key) dinosaur's score is \(e.node.plainJSONString())\(prev)"
        }
    }

    /// Listens, lets the initial events arrive, prints them, and says whether `value` fired.
    func listenOffline(_ store: Store, limit: Int) throws -> ListenerToken {
        let recorder = Recorder()
        let token = try store.addListener(at: scores, query: try byValue.limitToLast(limit)) { recorder.record($0) }
        store.waitForEventDelivery()
        let events = recorder.take()
        say("scoresRef.queryOrderedByValue().queryLimited(toLast: \(limit)).observe(…)")
        for e in events where e.kind != .value { say(describe(e)) }
        if events.contains(where: { $0.kind == .value }) {
            say("  → a value event fired: this exact query is complete in the cache")
        } else {
            say("  → no value event: the local data is not known complete for this query")
        }
        return token
    }

    func run() throws {
        say("Hearth demo — the offline story of the Realtime Database documentation, on a real store")
        say("store directory: \(directory)")

        // 1. Online.
        heading(1, "Online: dinosaur scores arrive from the server")
        var store = try Store.open(directory: directory)
        let top4 = QueryLocation(path: scores, query: try byValue.limitToLast(4))
        let recorder = Recorder()
        let listener = try store.addListener(at: scores, query: top4.query) { recorder.record($0) }
        let data = try Node(
            jsonText:
                #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
        )
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            // The server answers the listen: its data, and "this query is complete".
            try b.applyServerOverwrite(data, at: scores)
            try b.trackQuery(
                at: top4, complete: true, active: true,
                keys: ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])
        }
        store.waitForEventDelivery()
        say("scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(…)")
        for e in recorder.take() { say(describe(e)) }

        // 2. Offline writes.
        heading(2, "The connection drops; the user keeps writing")
        let w1 = try store.saveWrite(.set(try Node(jsonText: #"{"name":"Ada","best":97}"#)), at: "players/ada")
        let w2 = try store.saveWrite(
            .update([ChildUpdate(path: "visits", node: try Node(jsonText: #"{".sv":{"increment":1}}"#))]),
            at: "players/ada")
        let w3 = try store.saveWrite(.set(try Node(jsonText: #"{".sv":"timestamp"}"#)), at: "players/ada/lastSeen")
        say("saved pending writes \(w1), \(w2), \(w3) (durable before the calls returned; not sent yet)")
        try store.removeListener(listener)

        // 3. Restart.
        heading(3, "The app restarts, still offline")
        try store.close()
        store = try Store.open(directory: directory)
        say(
            "store closed and reopened: \(try store.stats().trackedQueries) tracked query, \(store.pendingWrites().count) pending writes"
        )

        // 4. Offline queries.
        heading(4, "Offline queries against the persisted cache")
        let t2 = try listenOffline(store, limit: 2)
        say()
        let t6 = try listenOffline(store, limit: 6)
        say()
        let t4 = try listenOffline(store, limit: 4)
        for t in [t2, t6, t4] { try store.removeListener(t) }

        // 5. Pending writes survived.
        heading(5, "Writes made offline survived the restart, in order")
        for w in store.pendingWrites() {
            switch w.operation {
            case .set(let n): say("  #\(w.id) set    \(w.path) = \(n.exportJSONString())")
            case .update(let c):
                say(
                    "  #\(w.id) update \(w.path) with \(c.map { "\($0.path) = \($0.node.exportJSONString())" }.joined(separator: ", "))"
                )
            }
        }
        say(
            "  read locally (server values resolved): players/ada = \(try store.value(at: "players/ada").plainJSONString())"
        )
        try store.close()

        // 6. Pruning under a small cap.
        heading(6, "keepSynced data survives pruning under a small cap; unpinned data is pruned")
        var small = Store.Options()
        small.cacheSizeBytes = Store.minimumCacheSize
        store = try Store.open(directory: directory, options: small)
        try store.keepSynced(QueryLocation(path: scores, query: .default), true)
        say("scoresRef.keepSynced(true); cap \(small.cacheSizeBytes) bytes")
        // Random text barely compresses, so 3,000 articles of 600 bytes (1.8 MB) exceed the cap.
        var rng = SeededRandom(seed: 2026)
        let articles = 3000
        for i in 0..<articles {
            let text = (0..<600).map { _ in Character(Unicode.Scalar(UInt8(97 + rng.next() % 26))) }
            try store.applyServerOverwrite(
                .string(String(text)), at: Path(keys: ["news", ChildKey("article\(i)")]), durability: .buffered)
        }
        let (before, after) = try store.compact()
        say(
            "cached \(articles) news articles (1.8 MB of random text, unpinned), then compacted: footprint \(before) → \(after) bytes"
        )
        let news = try store.serverValue(at: "news")
        let oldestKept =
            news.children.map(\.key).compactMap { Int($0.string.dropFirst("article".count)) }.min() ?? articles
        say(
            "  news articles still cached: \(news.childCount) of \(articles) — the \(oldestKept) least recently written were pruned"
        )
        say("  scores still cached: \(try store.serverValue(at: scores).plainJSONString())")
        try store.close()

        // 7. Stats.
        heading(7, "hearth stats \(directory)")
        fflush(nil)  // all C streams: print() is buffered, the stats command writes directly
        let stats = try StatsCommand.parse([directory, "--cache-size", String(small.cacheSizeBytes)])
        try stats.run()
    }
}
