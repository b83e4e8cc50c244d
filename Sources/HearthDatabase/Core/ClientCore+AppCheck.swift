import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

// App Check: the app's attestation token beside the auth token, as firebase-js-sdk
// `core/PersistentConnection.ts` (`tryAppCheck`, `refreshAppCheckToken`, `onAppCheckRevoked_`)
// and the Android SDK's `PersistentConnectionImpl` (`onKill` with "Invalid appcheck token")
// handle it. The token is asked for before every connection, beside the auth token; it goes
// out as `appcheck` after the hello (after `auth`) and whenever it changes; its removal goes
// out as `unappcheck`. A refusal or a revocation (`apc`) forgets it and asks for a fresh one;
// a server that enforces App Check shuts connections with an invalid token down, and after
// ``Configuration/invalidTokenThreshold`` such shutdowns in a row the client stops
// reconnecting, as Android's does.
extension ClientCore {
    /// The reason a server that enforces App Check gives when it shuts a connection down
    /// for an invalid token (the Android SDK's `INVALID_APP_CHECK_TOKEN`).
    package static let invalidAppCheckShutdown = "Invalid appcheck token"

    /// Asks the App Check provider for a token, numbering the request.
    mutating func requestAppCheckToken(force: Bool, into out: inout ClientOutput) {
        appCheckFetches += 1
        out.fetchAppCheckToken = TokenFetch(force: force, number: appCheckFetches)
    }

    /// The App Check provider answered request `fetch` (``ClientOutput/fetchAppCheckToken``;
    /// `nil`: no token). An answer to a request made before the token was last set is stale
    /// and dropped, as for auth tokens.
    package mutating func appCheckTokenFetched(_ token: AuthToken?, fetch: Int64, now: Int64) -> ClientOutput {
        guard fetch > appCheckFetchesBeforeToken else { return ClientOutput() }
        appCheckFetchesBeforeToken = fetch
        return setAppCheckToken(token, now: now)
    }

    /// The App Check provider failed request `fetch`: the connection goes ahead without an App
    /// Check token (a server that does not enforce App Check serves it; one that does refuses
    /// it, and the next attempt asks again).
    package mutating func appCheckTokenFetchFailed(fetch: Int64, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        guard fetch == appCheckFetches, fetch > appCheckFetchesBeforeToken else { return out }
        out.events.append(.notice("could not get an App Check token: connecting without one"))
        refreshingAppCheck = false
        if case .fetchingToken(let id) = phase {
            awaitingAppCheck = false
            openIfTokensReady(id, into: &out)
        }
        return out
    }

    /// The app's App Check token changed (the provider's token listener; `nil`: removed). It is
    /// newer than every answer still due from the provider.
    package mutating func appCheckTokenUpdated(_ token: AuthToken?, now: Int64) -> ClientOutput {
        appCheckFetchesBeforeToken = appCheckFetches
        return setAppCheckToken(token, now: now)
    }

    /// A new App Check token: before a connection attempt the connection opens (once the auth
    /// token is in too); on an open connection it goes out at once — `appcheck`, or
    /// `unappcheck` for none (firebase-js-sdk `refreshAppCheckToken`).
    mutating func setAppCheckToken(_ token: AuthToken?, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        refreshingAppCheck = false
        if token != nil { forceAppCheckRefresh = false }
        let changed = token?.token != appCheckToken?.token
        appCheckToken = token
        if changed, let token, token.expiresAt < Int64.max, token.expiresAt > now {
            // Halfway to its expiry, measured from when it arrived: a fresh one is asked for
            // while this one is still good.
            appCheckRefreshAt = now + (token.expiresAt - now) / 2
        } else if changed || token == nil {
            appCheckRefreshAt = nil
        }
        switch phase {
        case .fetchingToken(let id):
            awaitingAppCheck = false
            openIfTokensReady(id, into: &out)
        case .connected:
            if let token {
                send(.appCheck(token: token.token), as: .appCheck(token.token), now: now, into: &out)
            } else {
                send(.unappCheck, as: .appCheck(nil), now: now, into: &out)
            }
        case .offline, .waiting, .connecting:
            break
        }
        return out
    }

    /// Opens the connection of attempt `id` once every token it waits for has come.
    mutating func openIfTokensReady(_ id: ConnectionID, into out: inout ClientOutput) {
        guard !awaitingAuth, !awaitingAppCheck else { return }
        phase = .connecting(id)
        out.open = id
    }

    /// The App Check token to send after the hello, if any.
    mutating func sendAppCheckAfterHello(now: Int64, into out: inout ClientOutput) {
        guard let appCheckToken else { return }
        send(.appCheck(token: appCheckToken.token), as: .appCheck(appCheckToken.token), now: now, into: &out)
    }

    /// The answer to an `appcheck` (`token`) or `unappcheck` (`nil`).
    mutating func appCheckAnswered(
        _ token: String?, status: String, data: JSONValue?, now: Int64, into out: inout ClientOutput
    ) {
        // An answer about a token replaced since is not about the token in use.
        guard let token, token == appCheckToken?.token else { return }
        if status == "ok" {
            invalidAppCheckTokens = 0
            appCheckShutdowns = 0
        } else {
            appCheckRevoked(status: status, reason: data?.stringValue ?? "error", now: now, into: &out)
        }
    }

    /// The server refused (`appcheck` answered with an error) or revoked (`apc`) the App Check
    /// token. As Firebase's clients do, the connection stays (a server that enforces App Check
    /// closes it itself), the token is forgotten and the next one is forced fresh; a refusal
    /// as invalid counts towards ``Configuration/invalidTokenThreshold``, past which a warning
    /// is logged. While connected and under the threshold a fresh token is asked for at once,
    /// so that an open connection recovers without waiting for the next one.
    mutating func appCheckRevoked(status: String, reason: String, now: Int64, into out: inout ClientOutput) {
        out.events.append(.notice("App Check token revoked: \(status)/\(reason)"))
        appCheckToken = nil
        appCheckRefreshAt = nil
        forceAppCheckRefresh = true
        if status == "invalid_token" || status == "permission_denied" {
            invalidAppCheckTokens += 1
            if invalidAppCheckTokens >= configuration.invalidTokenThreshold {
                out.events.append(
                    .notice(
                        "Provided App Check credentials are invalid. This usually indicates the app's App Check"
                            + " provider was not set up correctly."))
                return
            }
        }
        if isConnected && configuration.usesAppCheck && !refreshingAppCheck {
            refreshingAppCheck = true
            requestAppCheckToken(force: true, into: &out)
        }
    }

    /// A shutdown for an invalid App Check token (``invalidAppCheckShutdown``): the first
    /// ``Configuration/invalidTokenThreshold`` in a row reconnect with a fresh token, as the
    /// Android SDK's `onKill` does. Returns false when the shutdown is to stand.
    mutating func retryAfterAppCheckShutdown(_ reason: String, now: Int64, into out: inout ClientOutput) -> Bool {
        guard reason == ClientCore.invalidAppCheckShutdown, appCheckShutdowns < configuration.invalidTokenThreshold
        else { return false }
        appCheckShutdowns += 1
        let left = configuration.invalidTokenThreshold - appCheckShutdowns
        out.events.append(.notice("Detected invalid App Check token. Reconnecting (\(left) attempts remaining)"))
        appCheckToken = nil
        appCheckRefreshAt = nil
        forceAppCheckRefresh = true
        closeAndRetry(now: now, into: &out)
        return true
    }

    /// Time passed: halfway to its expiry, the App Check token in use is refreshed (the
    /// provider is asked for a fresh one, which goes out as `appcheck`).
    mutating func refreshAppCheckIfDue(now: Int64, into out: inout ClientOutput) {
        guard let due = appCheckRefreshAt, now >= due, isConnected, configuration.usesAppCheck, !refreshingAppCheck
        else { return }
        appCheckRefreshAt = nil
        refreshingAppCheck = true
        requestAppCheckToken(force: true, into: &out)
    }
}
