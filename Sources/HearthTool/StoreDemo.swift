import Foundation
import Hearth

/// The offline story on one bare store (`hearth demo --store-only`), step by step. Every event
/// printed is one a listener actually received, and each step compares what it saw with what
/// the page says (``DemoExpectations``). Nothing printed depends on the machine or the clock.
struct StoreDemo: DemoNarrator {
    let directory: String
    let scores: Path = "scores"
    let byValue = QuerySpec(orderBy: .value)
    /// What the steps saw, compared with the page.
    var checklist = Checklist()

    init(directory: String) {
        self.directory = directory
    }

    func say(_ s: String = "") { print(s) }

    /// Prints the lines and returns them, for the check.
    func show(_ lines: [String]) -> [String] {
        for l in lines { say(l) }
        return lines
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
            return "  value        \(e.node.childCount) children: \(e.node.plainJSONString())"
        default:
            let key = e.childKey?.string ?? "?"
            let prev = e.previousChildKey.map { " (after \($0))" } ?? ""
            return
                "  \(e.kind.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) The \(key) dinosaur's score is \(e.node.plainJSONString())\(prev)"
        }
    }

    /// Listens, lets the initial events arrive, prints them, says whether `value` fired, and
    /// checks them.
    mutating func listenOffline(_ store: Store, limit: Int, _ behaviour: Behaviour) throws -> ListenerToken {
        let recorder = Recorder()
        let token = try store.addListener(at: scores, query: try byValue.limitToLast(limit)) { recorder.record($0) }
        store.waitForEventDelivery()
        say("scoresRef.queryOrderedByValue().queryLimited(toLast: \(limit)).observe(…)")
        let events = recorder.take()
        let seen = show(events.map(describe))
        if events.contains(where: { $0.kind == .value }) {
            say("  → a value event fired: this exact query is complete in the cache")
        } else {
            say("  → no value event: the local data is not known complete for this query")
        }
        check(behaviour, seen)
        return token
    }

    /// Plays the story; returns what the steps saw, compared.
    mutating func run() throws -> Checklist {
        say("Hearth demo — the offline story of the Realtime Database documentation, on a real store")
        let started = Int64(Date().timeIntervalSince1970 * 1000)

        // 1. Online.
        heading(1, "Online: dinosaur scores arrive from the server")
        var store = try Store.open(directory: directory)
        let top4 = QueryLocation(path: scores, query: try byValue.limitToLast(4))
        let recorder = Recorder()
        let listener = try store.addListener(at: scores, query: top4.query) { recorder.record($0) }
        let data = Node(children: DemoExpectations.scores.map { (ChildKey($0.key), Node.number(Double($0.score))) })
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            // The server answers the listen: its data, and "this query is complete".
            try b.applyServerOverwrite(data, at: scores)
            try b.trackQuery(
                at: top4, complete: true, active: true,
                keys: ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])
        }
        store.waitForEventDelivery()
        say("scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(…)")
        check(DemoExpectations.storeOnlineLastFour, show(recorder.take().map(describe)))

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
        say("store closed and reopened:")
        check(
            DemoExpectations.storeRestart,
            show([
                "  tracked queries: \(try store.stats().trackedQueries)",
                "  pending writes: \(store.pendingWrites().count)",
            ]))

        // 4. Offline queries.
        heading(4, "Offline queries against the persisted cache")
        let t2 = try listenOffline(store, limit: 2, DemoExpectations.storeOfflineLastTwo)
        say()
        let t6 = try listenOffline(store, limit: 6, DemoExpectations.storeOfflineLastSix)
        say()
        let t4 = try listenOffline(store, limit: 4, DemoExpectations.storeOfflineLastFour)
        for t in [t2, t6, t4] { try store.removeListener(t) }

        // 5. Pending writes survived.
        heading(5, "Writes made offline survived the restart, in order")
        var queued: [String] = []
        for w in store.pendingWrites() {
            switch w.operation {
            case .set(let n):
                say("  #\(w.id) set    \(w.path) = \(n.exportJSONString())")
                queued.append("#\(w.id) set \(w.path)")
            case .update(let c):
                say(
                    "  #\(w.id) update \(w.path) with \(c.map { "\($0.path) = \($0.node.exportJSONString())" }.joined(separator: ", "))"
                )
                queued.append("#\(w.id) update \(w.path)")
            }
        }
        // The server timestamp resolved locally is this machine's clock: shown as such.
        var ada = try store.value(at: "players/ada")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        if let t = ada.child("lastSeen").leafValue?.exactInteger, started...now ~= t {
            ada = ada.updatingChild("lastSeen", .string("a timestamp"))
        }
        queued.append("local players/ada = \(ada.plainJSONString())")
        say("  read locally (server values resolved): players/ada = \(ada.plainJSONString())")
        check(DemoExpectations.storeQueueInOrder, queued)
        try store.close()

        try pruning()
        return checklist
    }
}

extension StoreDemo {
    /// keepSynced data survives pruning under a small cap; unpinned data is pruned. Then the
    /// store's stats.
    mutating func pruning() throws {
        heading(6, "keepSynced data survives pruning under a small cap; unpinned data is pruned")
        var small = Store.Options()
        small.cacheSizeBytes = Store.minimumCacheSize
        let store = try Store.open(directory: directory, options: small)
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
        // How much is pruned, and when, depends on when maintenance ran: the story prints what
        // does not (nothing pruned, some, or all).
        _ = try store.compact()
        let news = try store.serverValue(at: "news")
        let pruned = news.childCount > 0 && news.childCount < articles
        let kept = Set(news.children.map(\.key).compactMap { Int($0.string.dropFirst("article".count)) })
        let newestKept = kept == Set((articles - kept.count)..<articles)
        say(
            "cached \(articles) news articles (1.8 MB of random text, unpinned), then compacted: \(pruned ? "the least recently written were pruned, the newest kept" : "\(news.childCount) still cached")"
        )
        let cachedScores = try store.serverValue(at: scores)
        say("  scores still cached: \(cachedScores.plainJSONString())")
        let allScores = DemoExpectations.scores.allSatisfy {
            cachedScores.child(ChildKey($0.key)).leafValue?.exactInteger == Int64($0.score)
        }
        check(
            DemoExpectations.storePruning,
            [
                pruned && newestKept
                    ? "news: some of the \(articles) articles pruned, the least recently written"
                    : "news: \(news.childCount) of \(articles) articles cached, the newest kept: \(newestKept)",
                allScores
                    ? "scores: all \(DemoExpectations.scores.count) still cached"
                    : "scores: \(cachedScores.plainJSONString())",
            ])
        let stats = try store.stats()
        try store.close()

        heading(7, "The store's counts (hearth stats STORE prints them with its sizes)")
        say("  footprint within the cap: \(stats.footprintBytes <= UInt64(stats.cacheSizeBytes) ? "yes" : "no")")
        say("  pending writes: \(stats.pendingWrites)")
        say("  pins: \(stats.pins)")
        say("  transactions: \(stats.transactions)")
    }
}
