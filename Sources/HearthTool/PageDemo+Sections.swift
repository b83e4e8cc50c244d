import Foundation
import HearthDatabase
import JWTKit
import Synchronization

// The page's last sections: keepSynced, presence, and an expired token.

extension PageDemo {
    /// keepSynced keeps a location fresh with no listener: another client changes it, the app
    /// restarts offline, and the change is in its cache.
    mutating func keepSynced(_ app: inout Database, admin: Database, url: String) async throws {
        heading(5, "keepSynced: a location kept fresh with no listener")
        app.reference(withPath: "scores").keepSynced(true)
        try await admin.reference(withPath: "scores/stegosaurus").setValue(6)
        // The server sends each connection its messages in the order it produced them: the
        // answer to a read the app makes now comes after the change (the read is of another
        // location, so only keepSynced brings the scores).
        _ = try await app.reference(withPath: "users/nobody").getData()
        try app.close()
        app = try open("app", url: url, online: false)
        let cached = Lines()
        app.reference(withPath: "scores/stegosaurus").observeSingleEvent(of: .value) {
            cached.add("  offline after a restart: stegosaurus = \($0.databaseValue)")
        }
        wait { cached.count >= 1 }
        check(DemoExpectations.keepSyncedFresh, show(cached.take()))
    }

    /// The page's presence example in its own client; the client then goes away, and the
    /// server runs its onDisconnect operations, which a second client sees.
    mutating func presence(admin: Database, url: String) async throws {
        heading(6, "Presence: onDisconnect, .info/connected, server timestamps")
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        let watcher = Lines()
        admin.reference(withPath: "users/morgan").observe(.value) { snap in
            let connections = snap.childSnapshot(forPath: "connections").childrenCount
            let last = snap.childSnapshot(forPath: "lastOnline").databaseValue
            // A server timestamp is the server's clock: this machine's, since the demo started.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let lastOnline = last.int64Value.map { started...now ~= $0 } == true ? "a server timestamp" : "\(last)"
            watcher.add("  second client sees: \(connections) connection(s), lastOnline = \(lastOnline)")
        }
        let morgan = try open("morgan", url: url, online: true)
        let myConnectionsRef = morgan.reference(withPath: "users/morgan/connections")
        let lastOnlineRef = morgan.reference(withPath: "users/morgan/lastOnline")
        let registered = Lines()
        morgan.reference(withPath: ".info/connected").observe(.value) { snapshot in
            guard let connected = snapshot.value as? Bool, connected else { return }
            let con = myConnectionsRef.childByAutoId()
            con.onDisconnectRemoveValue { _, _ in registered.add("") }
            con.setValue(true) { _, _ in registered.add("") }
            lastOnlineRef.onDisconnectSetValue(ServerValue.timestamp()) { _, _ in registered.add("") }
        }
        wait { registered.count >= 3 }
        wait { watcher.last?.contains(" 1 connection(s)") ?? false }
        say("morgan's client connected, registered its onDisconnect operations and marked itself online")
        var seen = show(watcher.take().suffix(1))
        say("morgan's client goes away (its connection drops)")
        try morgan.close()
        // Both operations ran: the connection gone and lastOnline a server timestamp (they may
        // arrive as two events).
        wait { watcher.last.map { $0.contains(" 0 connection(s)") && !$0.hasSuffix("null") } ?? false }
        seen += show(watcher.take().suffix(1))
        check(DemoExpectations.presence, seen.map { $0.replacingOccurrences(of: "second client sees: ", with: "") })
    }

    /// A token that expires pauses writes; a write made then is held in the store until the
    /// user signs in again.
    mutating func expiredToken(admin: Database, url: String) async throws {
        heading(7, "An expired token pauses writes until the user signs in again")
        let session = Session()
        let tokens: @Sendable (Bool) async throws -> String? = { _ in
            try await PageDemo.signedToken(uid: "ada", expires: await session.expiry())
        }
        let authed = try open("authed", url: url, online: true, tokens: tokens)
        // The pause's changes and the write's completion both run on the callback queue, in
        // the order the client raised them.
        let seen = Lines()
        authed.observeWritesPaused { seen.add("  writes paused: \($0)") }
        wait { authed.isConnected }
        wait { authed.writesPaused }
        say("the token expired (writesPaused = \(authed.writesPaused))")
        authed.reference(withPath: "notes/ada").setValue("written while the token was expired") { e, _ in
            seen.add("  write: \(e.map { "\($0)" } ?? "acknowledged")")
        }
        pause(0.5)
        let onServer = try await admin.reference(withPath: "notes/ada").getData().databaseValue
        var lines = seen.take()
        lines.append("  a write made now: \(onServer.isNull ? "held, not on the server" : "sent: \(onServer)")")
        say("the user signs in again")
        session.signIn()
        wait { seen.last?.contains("write: ") ?? false }
        lines += seen.take()
        lines.append("  " + (try await serverValue(admin, "notes/ada")))
        check(DemoExpectations.expiredTokenHoldsWrites, show(lines))
        try authed.close()
    }

    /// The demo user's session, as the app's token provider sees it: the first token is valid
    /// for 3 s; once it has expired, the provider waits for the user to sign in again (as an
    /// app's provider waits for its user), so the client holds its writes until then — and no
    /// token of the old session can arrive after the new one.
    final class Session: Sendable {
        private let state = Mutex<(expiry: Int64?, waiting: [CheckedContinuation<Int64, Never>])>((nil, []))

        /// The expiry (seconds since the epoch) of the token to hand out now.
        func expiry() async -> Int64 {
            await withCheckedContinuation { c in
                let now = Int64(Date().timeIntervalSince1970)
                let valid: Int64? = state.withLock { s in
                    let expiry = s.expiry ?? now + 3
                    s.expiry = expiry
                    if expiry > now { return expiry }
                    s.waiting.append(c)
                    return nil
                }
                if let valid { c.resume(returning: valid) }
            }
        }

        /// The user signs in again: a token valid for an hour, to every request waiting.
        func signIn() {
            let expiry = Int64(Date().timeIntervalSince1970) + 3_600
            let waiting = state.withLock { s in
                s.expiry = expiry
                defer { s.waiting = [] }
                return s.waiting
            }
            for c in waiting { c.resume(returning: expiry) }
        }
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
