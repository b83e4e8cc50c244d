/// What the documentation's offline page ("Offline capabilities on Apple platforms") says each
/// step of the demos must show, written as the lines the steps print. A step compares the lines
/// it saw with these (``Checklist``); the page's example data are the dinosaur scores.
enum DemoExpectations {
    /// The page's scores, by key.
    static let scores: [(key: String, score: Int)] = [
        ("stegosaurus", 5), ("lambeosaurus", 21), ("triceratops", 22), ("bruhathkayosaurus", 55),
        ("linhenykus", 80), ("pterodactyl", 93),
    ]

    /// A `child_added` line as the steps print it (the page's `print`, and the previous sibling).
    static func added(_ key: String, after previous: String? = nil) -> String {
        let score = scores.first { $0.key == key }.map { "\($0.score)" } ?? "?"
        return "child_added The \(key) dinosaur's score is \(score)" + (previous.map { " (after \($0))" } ?? "")
    }

    /// The `child_added` lines of the last `n` scores by value, lowest first, each after the one
    /// before it (as a query's initial events arrive).
    static func addedLast(_ n: Int) -> [String] {
        let last = scores.suffix(n).map(\.key)
        return last.indices.map { i in added(last[i], after: i == last.startIndex ? nil : last[i - 1]) }
    }

    /// A `value` line: the query's children and their value, keys sorted.
    static func value(last n: Int) -> String {
        let members = scores.suffix(n).sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.score)" }
        return "value \(n) children: {\(members.joined(separator: ","))}"
    }

    // MARK: The page, with clients and a server (`hearth demo`)

    static let onlineLastFour = Behaviour(
        "online, queryLimited(toLast: 4) fires child_added for the last four scores, then value",
        addedLast(4) + [value(last: 4)])

    static let offlineLastTwo = Behaviour(
        "restarted offline, queryLimited(toLast: 2) fires child_added for the top two from the cache, and no value (the app never ran it online)",
        addedLast(2))

    static let offlineLastSix = Behaviour(
        "offline, queryLimited(toLast: 6) fires child_added at once for the four cached scores, and no value",
        addedLast(4))

    static let queueSurvivesRestart = Behaviour(
        "writes and transactions made offline are queued on disk: after another restart, still offline, they are all there and applied locally",
        ["pending writes: 3", #"local players/ada = {"best":97,"name":"Ada"}"#, "local visits = 2"])

    static let reconnectLastSix = Behaviour(
        "back online, queryLimited(toLast: 6) gets the last two child_added events and the value",
        [added("stegosaurus"), added("lambeosaurus", after: "stegosaurus"), value(last: 6)])

    static let queueDeliveredInOrder = Behaviour(
        "reconnected, the queued write and transactions are sent and answered in the order they were made",
        ["write 1: acknowledged", "transaction 1: committed", "transaction 2: committed"])

    static let transactionsApplied = Behaviour(
        "the queued transactions ran on the server's data: both increments count once, beside the set",
        [#"server players/ada = {"best":97,"name":"Ada"}"#, "server visits = 2"])

    static let keepSyncedFresh = Behaviour(
        "keepSynced keeps scores fresh with no listener: another client's change is there offline after a restart",
        ["offline after a restart: stegosaurus = 6"])

    static let presence = Behaviour(
        "presence: a second client sees the connection, then onDisconnect removes it and sets lastOnline to a server timestamp",
        ["1 connection(s), lastOnline = null", "0 connection(s), lastOnline = a server timestamp"])

    static let expiredTokenHoldsWrites = Behaviour(
        "an expired token pauses writes until the user signs in again; then the held write is sent",
        [
            "writes paused: false", "writes paused: true", "a write made now: held, not on the server",
            "writes paused: false", "write: acknowledged", "server notes/ada = \"written while the token was expired\"",
        ])

    // MARK: The offline story on one bare store (`hearth demo --store-only`)

    static let storeOnlineLastFour = Behaviour(
        "online, the last four scores: child_added for each, then value (the server said the query is complete)",
        addedLast(4) + [value(last: 4)])

    static let storeRestart = Behaviour(
        "the cache, its tracked query and the queued writes survive a restart",
        ["tracked queries: 1", "pending writes: 3"])

    static let storeOfflineLastTwo = Behaviour(
        "offline, queryLimited(toLast: 2) fires child_added for the top two from the cache, and no value",
        addedLast(2))

    static let storeOfflineLastSix = Behaviour(
        "offline, queryLimited(toLast: 6) fires child_added for the four cached scores, and no value",
        addedLast(4))

    static let storeOfflineLastFour = Behaviour(
        "offline, the query run online before (limitToLast 4) is complete in the cache: child_added and value",
        addedLast(4) + [value(last: 4)])

    static let storeQueueInOrder = Behaviour(
        "writes made offline survive the restart in the order they were made, and read locally with server values resolved",
        [
            "#1 set players/ada", "#2 update players/ada", "#3 set players/ada/lastSeen",
            #"local players/ada = {"best":97,"lastSeen":"a timestamp","name":"Ada","visits":1}"#,
        ])

    static let storePruning = Behaviour(
        "over the cache's cap, least recently used data is pruned; data kept synced is not",
        ["news: some of the 3000 articles pruned, the least recently written", "scores: all 6 still cached"])
}
