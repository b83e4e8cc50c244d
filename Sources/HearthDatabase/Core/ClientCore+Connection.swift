import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

// The connection's life: going on- and offline, attempts with backoff, the token before each
// attempt, the hello, restoring state, and the end of a connection.
extension ClientCore {
    /// The app wants to be online (also the first call after creating the core): connect now
    /// unless a connection is already opening or open. It also ends a server's shutdown
    /// (``shutdownReason``): the app asked again.
    package mutating func goOnline(now: Int64) -> ClientOutput {
        var out = ClientOutput()
        shutdownReason = nil
        appCheckShutdowns = 0
        switch phase {
        case .offline, .waiting:
            backoff.reset()
            attempt(now: now, into: &out)
        case .fetchingToken, .connecting, .connected:
            break
        }
        return out
    }

    /// The app wants to be offline: the connection closes and no attempt follows until
    /// ``goOnline(now:)``. Pending writes stay queued.
    package mutating func goOffline(now: Int64) -> ClientOutput {
        var out = ClientOutput()
        if let id = currentConnection { out.close = id }
        let wasConnected = isConnected
        dropConnectionState(now: now, into: &out)
        phase = .offline
        if wasConnected { out.events.append(.connected(false)) }
        return out
    }

    /// Starts an attempt: a token first when the app supplies them, else the connection.
    mutating func attempt(now: Int64, into out: inout ClientOutput) {
        assert(currentConnection == nil, "an attempt starts only when no connection is open or opening")
        let id = ConnectionID(nextConnection)
        nextConnection += 1
        backoff.attempted(at: now)
        currentOpened = false
        resetsInAttempt = 0
        if configuration.usesTokens || configuration.usesAppCheck {
            // Both tokens are asked for at once; the connection opens when both have come
            // (firebase-js-sdk `establishConnection_`).
            phase = .fetchingToken(id)
            awaitingAuth = configuration.usesTokens
            awaitingAppCheck = configuration.usesAppCheck
            if configuration.usesTokens { requestToken(force: forceTokenRefresh, into: &out) }
            if configuration.usesAppCheck { requestAppCheckToken(force: forceAppCheckRefresh, into: &out) }
        } else {
            phase = .connecting(id)
            out.open = id
        }
    }

    /// Asks the token provider for a token, numbering the request.
    mutating func requestToken(force: Bool, into out: inout ClientOutput) {
        tokenFetches += 1
        out.fetchToken = TokenFetch(force: force, number: tokenFetches)
    }

    /// The token provider answered request `fetch` (``ClientOutput/fetchToken``; `nil`: no
    /// user signed in). An answer to a request made before the token was last set is stale
    /// and dropped: the token set since is newer (see ``token``).
    package mutating func tokenFetched(_ token: AuthToken?, fetch: Int64, now: Int64) -> ClientOutput {
        guard fetch > tokenFetchesBeforeToken else { return ClientOutput() }
        tokenFetchesBeforeToken = fetch
        return setToken(token, now: now)
    }

    /// The app handed over a token (`nil`: signed out): it is newer than every answer still
    /// due from the provider, which are dropped when they arrive.
    package mutating func authTokenUpdated(_ token: AuthToken?, now: Int64) -> ClientOutput {
        tokenFetchesBeforeToken = tokenFetches
        return setToken(token, now: now)
    }

    /// A new token: before a connection attempt the connection opens; on an open connection
    /// it is sent at once (`auth`), and writes held while the old one was expired go out, in
    /// order.
    mutating func setToken(_ token: AuthToken?, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        forceTokenRefresh = false
        refreshingToken = false
        if token != self.token {
            self.token = token
            out.commits.append(token.map(ClientCommit.saveAuth) ?? .clearAuth)
        }
        if pausedReported && !writesPaused(now: now) {
            pausedReported = false
            out.events.append(.writesPaused(false))
        }
        switch phase {
        case .fetchingToken(let id):
            awaitingAuth = false
            openIfTokensReady(id, into: &out)
        case .connected:
            if let token {
                send(
                    .auth(credential: token.token, isJWT: ClientCore.isJWT(token.token), override: nil),
                    as: .auth(token.token),
                    now: now, into: &out)
            } else {
                send(.unauth, as: .auth(nil), now: now, into: &out)
            }
            flush(now: now, into: &out)
        case .offline, .waiting, .connecting:
            break
        }
        return out
    }

    static func isJWT(_ token: String) -> Bool {
        token.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// The token provider failed request `fetch`: retry later, as after a failed connection.
    /// Only the failure of the last request ends a connection attempt's wait.
    package mutating func tokenFetchFailed(fetch: Int64, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        guard case .fetchingToken = phase, fetch == tokenFetches else { return out }
        scheduleRetry(now: now, into: &out)
        return out
    }

    /// The transport reported the connection open (the WebSocket handshake finished). The
    /// core waits for the server's hello before it sends anything.
    package mutating func connectionOpened(_ id: ConnectionID, now: Int64) -> ClientOutput {
        if currentConnection == id { currentOpened = true }
        return ClientOutput()
    }

    /// The transport reported the connection gone. A report about an older connection is
    /// ignored.
    package mutating func connectionClosed(_ id: ConnectionID, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        guard currentConnection == id else { return out }
        let wasConnected = isConnected
        if case .connecting = phase, !currentOpened { connectFailed(into: &out) }
        dropConnectionState(now: now, into: &out)
        if wasConnected { out.events.append(.connected(false)) }
        scheduleRetry(now: now, into: &out)
        return out
    }

    /// Ends the current connection from this side (a refused token, a shutdown message) and
    /// schedules the next attempt.
    mutating func closeAndRetry(now: Int64, into out: inout ClientOutput) {
        guard let id = currentConnection else { return }
        out.close = id
        let wasConnected = isConnected
        dropConnectionState(now: now, into: &out)
        if wasConnected { out.events.append(.connected(false)) }
        scheduleRetry(now: now, into: &out)
    }

    /// Forgets what belonged to the connection: requests in flight (writes and listens are
    /// kept and restored on the next one; gets wait again, with the offline timeout).
    mutating func dropConnectionState(now: Int64, into out: inout ClientOutput) {
        requests.removeAll()
        // A compare-and-set sent on this connection may or may not have been applied: it is
        // given up, as Firebase does (`disconnect`), stamped or not. Re-sending it stamped is
        // not safe: the server's mark is a high-water mark, so a compare-and-set it refused
        // (`datastale`, answer lost) followed by a later write it applied would be answered
        // `ok` as a re-send it never applied — the simulator found it (seed 61 of the merged
        // workload: a transaction reported committed whose write never landed).
        for id in sentWrites.sorted() where conditions[id] != nil {
            interruptConditional(id, into: &out)
        }
        sentWrites.removeAll()
        lastSentWriteID = .min
        stampsWrites = false
        sentOnDisconnects.removeAll()
        refreshingToken = false
        refreshingAppCheck = false
        // The server ran the acknowledged onDisconnect operations when this connection
        // dropped: their effect becomes server data here, in order (Firebase's
        // `runOnDisconnectEvents`).
        for id in onDisconnects.keys.sorted() where onDisconnects[id]!.acknowledged {
            onDisconnects[id] = nil
            out.commits.append(.applyOnDisconnectLocally(id))
        }
        for id in gets.keys {
            gets[id]!.sent = false
            gets[id]!.deadline = gets[id]!.deadline ?? now + configuration.getOfflineTimeoutMs  // a failed attempt must not extend it
        }
        if isAuthenticated {
            isAuthenticated = false
            out.events.append(.authenticated(false))
        }
    }

    /// Gives up a conditional write whose outcome the client cannot learn.
    mutating func interruptConditional(_ id: Int64, into out: inout ClientOutput) {
        conditions[id] = nil
        writes[id] = nil
        writerIDs[id] = nil
        out.events.append(.conditionalWriteInterrupted(id: id))
    }

    mutating func scheduleRetry(now: Int64, into out: inout ClientOutput) {
        let wait = backoff.nextWait(now: now, random: rng.unitInterval())
        phase = .waiting(until: now + wait)
        if wait == 0 { attempt(now: now, into: &out) }
    }

    /// Time passed: a due reconnect attempt, a keepalive, gets that timed out offline.
    package mutating func tick(now: Int64) -> ClientOutput {
        var out = ClientOutput()
        if case .waiting(let until) = phase, now >= until { attempt(now: now, into: &out) }
        checkPause(now: now, into: &out)
        refreshAppCheckIfDue(now: now, into: &out)
        if isConnected && now - lastSend >= configuration.keepAliveIntervalMs {
            out.messages.append("0")
            lastSend = now
        }
        for (id, g) in gets.sorted(by: { $0.key < $1.key }) {
            if let t = g.deadline, now >= t, !g.sent {
                gets[id] = nil
                out.events.append(.getCompleted(id: id, .failure(.offline)))
            }
        }
        return out
    }

    /// The server's hello: the connection is up. Records the server time offset, then
    /// restores state in Firebase's order: auth, listens, writes, gets.
    mutating func helloReceived(
        _ id: ConnectionID, timestamp: Int64, host: String, sessionID: String, extensions: [String], now: Int64,
        into out: inout ClientOutput
    ) {
        // Firebase's clients take the hello's host for every later connection
        // (`onHandshake_` sets `repoInfo.host`) without reconnecting now.
        if !host.isEmpty { follow(host, into: &out) }
        assert(phase == .connecting(id), "a hello is taken only on the connection being opened")
        // Every request, write and operation in flight belonged to the last connection and was
        // forgotten with it (dropConnectionState): this one starts clean.
        assert(requests.isEmpty, "a new connection starts with no request in flight")
        assert(sentWrites.isEmpty && lastSentWriteID == .min, "a new connection starts with no write sent")
        assert(sentOnDisconnects.isEmpty, "a new connection starts with no onDisconnect operation sent")
        phase = .connected(id)
        resetsInAttempt = 0
        stampsWrites = extensions.contains(ServerMessage.writeIDsExtension)
        lastSend = now
        backoff.established(at: now)
        lastSessionID = sessionID
        serverTimeOffsetMs = Double(timestamp - now)
        out.commits.append(.serverTimeOffset(serverTimeOffsetMs))
        out.events.append(.serverTimeOffset(serverTimeOffsetMs))
        if let token {
            send(
                .auth(credential: token.token, isJWT: ClientCore.isJWT(token.token), override: nil),
                as: .auth(token.token),
                now: now, into: &out)
        }
        sendAppCheckAfterHello(now: now, into: &out)
        for (location, listen) in listens.sorted(by: { $0.value.order < $1.value.order }) {
            sendListen(location, tag: listen.tag, now: now, into: &out)
        }
        flush(now: now, into: &out)
        for getID in gets.keys.sorted() { sendGet(getID, now: now, into: &out) }
        out.events.append(.connected(true))
    }

    /// The server refused or revoked the token: connect again with a fresh one. An expired
    /// token is kept (as expired) so that writes stay held until a new one arrives — sending
    /// them unauthenticated would fail them under the rules; an invalid one is forgotten.
    mutating func tokenRefused(status: String, now: Int64, into out: inout ClientOutput) {
        if status == "expired_token", let t = token {
            if t.expiresAt > now {
                token = AuthToken(token: t.token, expiresAt: now)
                out.commits.append(.saveAuth(token!))
            }
        } else if token != nil {
            token = nil
            out.commits.append(.clearAuth)
        }
        forceTokenRefresh = true
        if status == "invalid_token" || status == "permission_denied" {
            invalidTokens += 1
            if invalidTokens >= configuration.invalidTokenThreshold {
                // Firebase waits the longest delay once tokens keep failing.
                for _ in 0..<20 { _ = backoff.nextWait(now: now, random: 0) }
            }
        }
        closeAndRetry(now: now, into: &out)
    }
}
