import Foundation
import Hearth
import HearthDatabase
import HearthServer
import JWTKit
import Synchronization

/// The whole documentation page ("Offline capabilities"), played with real clients over real
/// sockets against an in-process `hearth serve`: every line printed is something a client's
/// observer or completion actually received.
struct PageDemo {
    let directory: String
    /// A client process for the presence section (`hearth connect`), if the binary is known.
    let connectBinary: String?

    func say(_ s: String = "") {
        print(s)
        fflush(nil)
    }

    func heading(_ n: Int, _ title: String) {
        say()
        say("\(n). \(title)")
        say(String(repeating: "─", count: title.count + 3))
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

    /// Sleeps (the demo paces itself; a synchronous pause is fine in a command-line tool).
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
        return try Database(url: url, options: o)
    }

    func describe(_ snap: DataSnapshot, _ kind: String, _ previous: String?) -> String {
        let prev = previous.map { " (after \($0))" } ?? ""
        return
            "  \(kind.padding(toLength: 12, withPad: " ", startingAt: 0)) The \(snap.key ?? "?") dinosaur's score is \(snap.databaseValue)\(prev)"
    }

    /// Observes child_added and value on `limitToLast(n)` and prints what arrives.
    func observeTop(_ db: Database, _ n: Int, _ lines: Lines) {
        let q = db.reference(withPath: "scores").queryOrderedByValue().queryLimited(toLast: n)
        q.observe(
            .childAdded, andPreviousSiblingKeyWith: { snap, prev in lines.add(describe(snap, "child_added", prev)) })
        q.observe(.value) { snap in lines.add("  value        \(snap.childrenCount) children: \(snap.databaseValue)") }
    }

    func run() async throws {
        say("Hearth demo — the Realtime Database documentation's offline page, with real clients over real sockets")
        say("working directory: \(directory)")
        // The server: `hearth serve` in-process, emulator mode, with the demo's secret: section 7's
        // tokens are signed with it, as a signed token's expiry is always enforced.
        var storeOptions = Store.Options()
        storeOptions.authoritative = true
        let serverStore = try Store.open(directory: directory + "/server", options: storeOptions)
        var configuration = ServerCore.Configuration()
        configuration.emulator = true
        configuration.idleTimeoutMs = 5_000
        let runtime = try ServerRuntime(
            store: serverStore, configuration: configuration,
            verifier: try await FirebaseTokenVerifier(secret: PageDemo.secret, emulator: true))
        let server = try await NetworkServer.start(host: "127.0.0.1", port: 0, runtime: runtime)
        let url = "ws://127.0.0.1:\(server.port)?ns=demo"
        say("hearth serve listening on \(url)")

        // Seed the scores through an admin client.
        let admin = try open("admin", url: url, online: true)
        try await admin.reference(withPath: "scores").setValue([
            "bruhathkayosaurus": 55, "lambeosaurus": 21, "linhenykus": 80, "pterodactyl": 93, "stegosaurus": 5,
            "triceratops": 22,
        ])

        heading(1, "Online: the last four scores")
        var app = try open("app", url: url, online: true)
        let top4 = Lines()
        observeTop(app, 4, top4)
        wait { top4.count >= 5 }
        say("scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded)")
        for l in top4.take() { say(l) }

        heading(2, "The connection is lost and the app restarts, offline")
        try app.close()
        app = try open("app", url: url, online: false)
        app.registerTransactionFunction("increment") { current, argument in
            .success(withValue: .int((current.int64Value ?? 0) + (argument.int64Value ?? 1)))
        }
        let two = Lines()
        observeTop(app, 2, two)
        wait(30) { two.count >= 2 }  // the two cached children…
        wait(1) { two.count >= 3 }  // …and, for a second, nothing more (no value event)
        say("queryLimited(toLast: 2), offline, from the cache:")
        for l in two.take() { say(l) }
        say("  → no value event: the app never ran this query online")
        let six = Lines()
        observeTop(app, 6, six)
        wait(30) { six.count >= 4 }
        wait(1) { six.count >= 5 }
        say("queryLimited(toLast: 6), offline: the four cached children")
        for l in six.take() { say(l) }

        heading(3, "Offline writes and a transaction, kept across another restart")
        let results = Lines()
        try app.reference(withPath: "players/ada").setValue(["name": "Ada", "best": 97]) { _, _ in }
        try app.reference(withPath: "visits").runTransaction(named: "increment", argument: 1)
        try app.reference(withPath: "visits").runTransaction(named: "increment", argument: 1)
        say("set players/ada; two `increment` transactions on visits (a registered function) — queued, durable")
        try app.close()
        app = try open("app", url: url, online: false)
        app.observeWriteResults { r in results.add("  write \(r.id): \(r.error.map { "\($0)" } ?? "acknowledged")") }
        app.observeTransactionResults { r in
            results.add(
                "  transaction \(r.id): \(r.committed ? "committed" : "not committed \(r.error.map { "\($0)" } ?? "")")"
            )
        }
        app.registerTransactionFunction("increment") { current, argument in
            .success(withValue: .int((current.int64Value ?? 0) + (argument.int64Value ?? 1)))
        }
        say(
            "after the restart, still offline: \(app.pendingWriteIDs.count) pending writes (the set, and the two transactions' results run again on the local data)"
        )
        let sixAgain = Lines()
        observeTop(app, 6, sixAgain)
        wait(30) { sixAgain.count >= 4 }
        wait(1) { sixAgain.count >= 5 }
        _ = sixAgain.take()

        heading(4, "Back online")
        app.goOnline()
        wait { sixAgain.count >= 3 && results.count >= 3 }
        wait(2) { sixAgain.count >= 3 }
        say("queryLimited(toLast: 6): the final child_added events and the value")
        for l in sixAgain.take() { say(l) }
        say("the queued work, delivered in order:")
        for l in results.take() { say(l) }
        say("  server: visits = \(try await admin.reference(withPath: "visits").getData().databaseValue)")

        heading(5, "keepSynced: a location kept fresh with no listener")
        let scoresRef = app.reference(withPath: "scores")
        try scoresRef.keepSynced(true)
        try await admin.reference(withPath: "scores/stegosaurus").setValue(6)
        wait { app.isConnected }
        pause(0.3)
        try app.close()
        app = try open("app", url: url, online: false)
        let cached = Lines()
        app.reference(withPath: "scores/stegosaurus").observe(.value) {
            cached.add("  offline after a restart: stegosaurus = \($0.databaseValue)")
        }
        wait { cached.count >= 1 }
        for l in cached.take() { say(l) }

        heading(6, "Presence: onDisconnect, .info/connected, server timestamps")
        let watcher = Lines()
        admin.reference(withPath: "users/morgan").observe(.value) { snap in
            let connections = snap.childSnapshot(forPath: "connections").childrenCount
            let last = snap.childSnapshot(forPath: "lastOnline").databaseValue
            watcher.add("  second client sees: \(connections) connection(s), lastOnline = \(last)")
        }
        try await presence(url: url, watcher: watcher)

        heading(7, "An expired token pauses writes until the user signs in again")
        // The provider hands out tokens that expire at `expiry` (seconds): 2 s from now at first.
        let expiry = Mutex(Int64(Date().timeIntervalSince1970) + 2)
        let tokens: @Sendable (Bool) async throws -> String? = { _ in
            try await PageDemo.signedToken(uid: "ada", expires: expiry.withLock { $0 })
        }
        let authed = try open("authed", url: url, online: true, tokens: tokens)
        let paused = Lines()
        authed.observeWritesPaused { paused.add("  writes paused: \($0)") }
        wait { authed.isConnected }
        wait(5) { authed.writesPaused }
        say("the token expired (writesPaused = \(authed.writesPaused))")
        let acked = Lines()
        try authed.reference(withPath: "notes/ada").setValue("written while the token was expired") { e, _ in
            acked.add("  write: \(e.map { "\($0)" } ?? "acknowledged")")
        }
        pause(0.5)
        say("a write made now: \(acked.count == 0 ? "held in the store, not sent" : "sent?!")")
        say("the user signs in again")
        expiry.withLock { $0 = Int64(Date().timeIntervalSince1970) + 3_600 }
        authed.updateAuthToken(try await PageDemo.signedToken(uid: "ada", expires: expiry.withLock { $0 }))
        wait { acked.count >= 1 }
        pause(0.1)
        for l in paused.take() { say(l) }
        for l in acked.take() { say(l) }
        try authed.close()

        try app.close()
        try admin.close()
        try await server.stop()
        try serverStore.close()
        say()
        say("done.")
    }

    /// The page's presence example in its own client; the client then dies (a `hearth connect`
    /// process killed with SIGKILL when available, else its connection dropped), and the
    /// server runs its onDisconnect operations.
    func presence(url: String, watcher: Lines) async throws {
        let morgan = try open("morgan", url: url, online: true)
        let myConnectionsRef = morgan.reference(withPath: "users/morgan/connections")
        let lastOnlineRef = morgan.reference(withPath: "users/morgan/lastOnline")
        let registered = Lines()
        morgan.reference(withPath: ".info/connected").observe(.value) { snapshot in
            guard let connected = snapshot.value as? Bool, connected else { return }
            let con = myConnectionsRef.childByAutoId()
            _ = try? con.setValue(true) { _, _ in }
            try? con.onDisconnectRemoveValue { _, _ in registered.add("") }
            try? lastOnlineRef.onDisconnectSetValue(ServerValue.timestamp()) { _, _ in registered.add("") }
        }
        wait(30) { registered.count >= 2 }
        wait(30) { watcher.count >= 1 }
        say("morgan's client connected and registered its onDisconnect operations")
        if let last = watcher.take().last { say(last) }
        say("morgan's client goes away (its connection drops)")
        try morgan.close()
        // Both operations ran: the connection gone and lastOnline a server timestamp (they may
        // arrive as two events).
        wait { watcher.last.map { $0.contains("0 connection(s)") && !$0.hasSuffix("null") } ?? false }
        if let last = watcher.take().last { say(last) }
    }

    /// The demo server's HS256 secret (at least 32 bytes, as the verifier requires). Fixed and
    /// public: it guards nothing but this throwaway server on a loopback port.
    static let secret = "hearth demo: a public HS256 secret for a throwaway server"

    /// A token's claims: the user and its times, in seconds since the epoch.
    struct Claims: JWTPayload {
        let uid: String
        let iat: Int64
        let exp: Int64
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A JWT for `uid` signed HS256 with ``secret`` (by JWTKit, as the server verifies it),
    /// expiring at `expires` (seconds since the epoch). Signed: an emulator-mode server need not
    /// enforce an unsigned token's expiry (Firebase's emulator does not).
    static func signedToken(uid: String, expires: Int64) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(uid: uid, iat: Int64(Date().timeIntervalSince1970) - 1, exp: expires))
    }
}
