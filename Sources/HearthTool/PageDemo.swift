import Foundation
@_spi(HearthInternals) import Hearth
import HearthDatabase
@_spi(HearthInternals) import HearthServer
import Synchronization

/// The whole documentation page ("Offline capabilities"), played with real clients over real
/// sockets against an in-process `hearth serve`: every line printed is something a client's
/// observer or completion actually received, and each step compares what it saw with what the
/// page says (``DemoExpectations``).
///
/// The output is the same on every run: nothing printed depends on the machine, the port or the
/// clock, and what several handlers report arrives on one serial queue (the database's callback
/// queue) in the order the client produced it.
struct PageDemo: DemoNarrator {
    let directory: String
    /// What the steps saw, compared with the page.
    var checklist = Checklist()

    init(directory: String) {
        self.directory = directory
    }

    func say(_ s: String = "") {
        print(s)
        fflush(nil)
    }

    /// Lines collected from handlers on other threads.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ s: String) { lines.withLock { $0.append(s) } }
        func take() -> [String] {
            lines.withLock { l in
                defer { l = [] }; return l
            }
        }
        var count: Int { lines.withLock { $0.count } }
        var last: String? { lines.withLock { $0.last } }
    }

    /// Sleeps: a window in which something the page says must not happen could show up
    /// (a value event, a held write sent). Only a wrong outcome depends on its length.
    func pause(_ seconds: Double) { Thread.sleep(forTimeInterval: seconds) }

    /// Waits (bounded) until `condition` holds. The bound is generous: on a loaded machine a
    /// restart or a round trip can take seconds, and only a failure runs into it.
    @discardableResult
    func wait(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    func open(
        _ name: String, url: String, online: Bool, tokens: (@Sendable (Bool) async throws -> String?)? = nil
    ) throws -> Database {
        var o = Database.Options()
        o.storeDirectory = directory + "/" + name
        o.connectAtOpen = online
        o.tokenProvider = tokens
        // This thread waits for the handlers: they run on a queue of their own, not on main.
        o.callbackQueue = DispatchQueue(label: "hearth.callbacks")
        return try Database(url: url, options: o)
    }

    func describe(_ snap: DataSnapshot, _ kind: String, _ previous: String?) -> String {
        let prev = previous.map { " (after \($0))" } ?? ""
        return
            "  \(kind.padding(toLength: 12, withPad: " ", startingAt: 0)) The \(snap.key) dinosaur's score is \(snap.databaseValue)\(prev)"
    }

    /// Observes child_added and value on `limitToLast(n)` and collects what arrives (both
    /// handlers run on the database's callback queue, so in the order the client raised them).
    @discardableResult
    func observeTop(_ db: Database, _ n: Int, _ lines: Lines) -> DatabaseQuery {
        let q = db.reference(withPath: "scores").queryOrderedByValue().queryLimited(toLast: n)
        q.observe(
            .childAdded, andPreviousSiblingKeyWith: { snap, prev in lines.add(describe(snap, "child_added", prev)) })
        q.observe(.value) { snap in lines.add("  value        \(snap.childrenCount) children: \(snap.databaseValue)") }
        return q
    }

    /// Prints the lines and returns them, for the check.
    func show(_ lines: [String]) -> [String] {
        for l in lines { say(l) }
        return lines
    }

    /// The "increment" function of the demo's transactions.
    static let increment: TransactionFunction = { current, argument in
        .success(withValue: .int((current.int64Value ?? 0) + (argument.int64Value ?? 1)))
    }

    /// The server's value at `path`, read by `db` (online): what the server holds now.
    func serverValue(_ db: Database, _ path: String) async throws -> String {
        "server \(path) = \(try await db.reference(withPath: path).getData().databaseValue)"
    }

    /// Plays the page; returns what the steps saw, compared.
    mutating func run() async throws -> Checklist {
        say("Hearth demo — the Realtime Database documentation's offline page, with real clients over real sockets")
        // The server: `hearth serve` in-process, emulator mode, with the demo's secret: section 7's
        // tokens are signed with it, as a signed token's expiry is always enforced.
        let serverStore = try AuthoritativeStore.open(directory: directory + "/server")
        var configuration = ServerConfiguration()
        configuration.emulator = true
        configuration.idleTimeoutMs = 5_000
        let runtime = try ServerRuntime(
            store: serverStore, configuration: configuration,
            verifier: try await FirebaseTokenVerifier(secret: PageDemo.secret, emulator: true))
        let server = try await NetworkServer.start(host: "127.0.0.1", port: 0, runtime: runtime)
        let url = "ws://127.0.0.1:\(server.port)?ns=demo"
        say("hearth serve listening on a loopback port (namespace demo, emulator mode)")

        // Seed the scores through an admin client.
        let admin = try open("admin", url: url, online: true)
        try await admin.reference(withPath: "scores").setValue(
            .object(DatabaseValue.Object(DemoExpectations.scores.map { (key: $0.key, value: .int(Int64($0.score))) })))

        heading(1, "Online: the last four scores")
        var app = try open("app", url: url, online: true)
        let top4 = Lines()
        observeTop(app, 4, top4)
        wait { top4.count >= 5 }
        say("scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded)")
        check(DemoExpectations.onlineLastFour, show(top4.take()))

        heading(2, "The connection is lost and the app restarts, offline")
        try app.close()
        app = try open("app", url: url, online: false)
        app.registerTransactionFunction("increment", PageDemo.increment)
        let two = Lines()
        observeTop(app, 2, two)
        wait(30) { two.count >= 2 }  // the two cached children…
        wait(1) { two.count >= 3 }  // …and, for a second, nothing more (no value event)
        say("queryLimited(toLast: 2), offline, from the cache:")
        check(DemoExpectations.offlineLastTwo, show(two.take()))
        let six = Lines()
        observeTop(app, 6, six)
        wait(30) { six.count >= 4 }
        wait(1) { six.count >= 5 }
        say("queryLimited(toLast: 6), offline: the four cached children")
        check(DemoExpectations.offlineLastSix, show(six.take()))

        heading(3, "Offline writes and a transaction, kept across another restart")
        app.reference(withPath: "players/ada").setValue(["name": "Ada", "best": 97]) { _, _ in }
        try app.reference(withPath: "visits").runTransaction(named: "increment", argument: 1)
        try app.reference(withPath: "visits").runTransaction(named: "increment", argument: 1)
        say("set players/ada; two `increment` transactions on visits (a registered function) — queued, durable")
        try app.close()
        app = try open("app", url: url, online: false)
        // Every outcome is reported on the database's callback queue, in the order the client
        // learns it (the server answers a connection's writes in the order they were sent).
        let results = Lines()
        app.observeWriteResults { r in
            results.add("  write \(r.id.rawValue): \(r.error.map { "\($0)" } ?? "acknowledged")")
        }
        app.observeTransactionResults { r in
            results.add(
                "  transaction \(r.id): \(r.committed ? "committed" : "not committed \(r.error.map { "\($0)" } ?? "")")"
            )
        }
        // The queued transactions run again on the local data when their function is known.
        app.registerTransactionFunction("increment", PageDemo.increment)
        let local = Lines()
        local.add("  pending writes: \(app.pendingWriteIDs.count)")
        for path in ["players/ada", "visits"] {
            let before = local.count
            app.reference(withPath: path).observeSingleEvent(of: .value) {
                local.add("  local \(path) = \($0.databaseValue)")
            }
            wait { local.count > before }
        }
        say("after the restart, still offline (the set, and the two transactions run again on the local data):")
        check(DemoExpectations.queueSurvivesRestart, show(local.take()))
        let sixAgain = Lines()
        let sixQuery = observeTop(app, 6, sixAgain)
        wait(30) { sixAgain.count >= 4 }
        wait(1) { sixAgain.count >= 5 }
        _ = sixAgain.take()

        heading(4, "Back online")
        app.goOnline()
        wait { sixAgain.count >= 3 && results.count >= 3 }
        say("queryLimited(toLast: 6): the final child_added events and the value")
        check(DemoExpectations.reconnectLastSix, show(sixAgain.take()))
        sixQuery.removeAllObservers()
        say("the queued work, delivered in order:")
        check(DemoExpectations.queueDeliveredInOrder, show(results.take()))
        let applied = [try await serverValue(admin, "players/ada"), try await serverValue(admin, "visits")]
        check(DemoExpectations.transactionsApplied, show(applied.map { "  " + $0 }))

        try await keepSynced(&app, admin: admin, url: url)
        try await presence(admin: admin, url: url)
        try await expiredToken(admin: admin, url: url)

        try app.close()
        try admin.close()
        try await server.stop()
        try serverStore.store.close()
        return checklist
    }
}
