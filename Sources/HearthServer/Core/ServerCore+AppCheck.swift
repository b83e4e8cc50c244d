import Hearth
@_spi(HearthInternals) import HearthWire

// App Check enforcement (``ServerConfiguration/enforcesAppCheck``), as Firebase's servers
// do it where App Check is enforced and its clients expect it (firebase-js-sdk
// `core/PersistentConnection.ts` `tryAppCheck`/`onAppCheckRevoked_`; the Android SDK's
// `onKill` with "Invalid appcheck token"): reads and writes of a connection without a valid
// token are refused `permission_denied`; an `appcheck` with an invalid token is answered
// `invalid_token` and the connection is shut down with ``ServerCore/invalidAppCheck`` (the
// clients reconnect with a fresh token, a few times); a token that expires is revoked (`apc`)
// and the connection's reads and writes are refused until it sends a new one. REST requests
// and event streams carry the token in the `X-Firebase-AppCheck` header, as Firebase's REST API
// takes it: without a valid one they are answered 401 before the rules are asked.
extension ServerCore {
    /// The shutdown reason for an invalid App Check token (what Firebase's clients look for).
    package static let invalidAppCheck = "Invalid appcheck token"
    /// The `apc` explanation when a connection's App Check token expires.
    package static let appCheckExpired = "App Check token expired"

    /// Whether a WebSocket connection lacks the valid App Check token enforcement asks for. The
    /// admin is exempt, as Firebase exempts its server SDKs (a service account is not an app);
    /// an event stream's token was checked when it opened, and its expiry ends the
    /// stream.
    func lacksAppCheck(_ id: ConnectionID) -> Bool {
        guard configuration.enforcesAppCheck, let c = connections[id], !c.isEventStream, c.principal != .admin else {
            return false
        }
        guard let expires = c.appCheckExpiresAt else { return true }
        return expires <= now
    }

    /// Whether a REST request or event stream lacks the valid App Check token
    /// (`X-Firebase-AppCheck`) enforcement asks for; the admin is exempt.
    func lacksAppCheck(_ request: RESTRequest) -> Bool {
        guard configuration.enforcesAppCheck, request.principal != .admin else { return false }
        guard let expires = request.appCheckExpiresAt else { return true }
        return expires <= now
    }

    /// `appcheck`: without enforcement acknowledged; with it, checked by the runtime's App
    /// Check verifier while the connection's later messages queue (as for `auth`).
    mutating func appCheckRequested(_ id: ConnectionID, number r: Int, token: String, into out: inout ServerOutput) {
        guard configuration.enforcesAppCheck else {
            out.send(id, .response(number: r, status: "ok", data: nil))
            return
        }
        assert(connections[id]!.awaitingTicket == nil, "a connection waits for one token check at a time")
        let ticket = nextCheck
        nextCheck += 1
        assert(pendingChecks[ticket] == nil && pendingAppChecks[ticket] == nil, "a ticket names one token check")
        pendingAppChecks[ticket] = (id, r)
        connections[id]!.awaitingTicket = ticket
        out.tokenChecks.append(TokenCheckRequest(ticket: ticket, credential: token, isJWT: true, isAppCheck: true))
    }

    /// The App Check verifier's answer for `appcheck` request `r` of connection `id`.
    mutating func appCheckChecked(
        _ id: ConnectionID, number r: Int, ticket: UInt64, _ result: TokenCheck
    )
        -> ServerOutput
    {
        var out = ServerOutput()
        guard connections[id] != nil else { return out }
        assert(connections[id]!.awaitingTicket == ticket, "a token check answers the one its connection waits for")
        connections[id]!.awaitingTicket = nil
        if case .valid(.user(let app)) = result, let expires = app.expiresAt, expires > now {
            connections[id]!.appCheckExpiresAt = expires
            out.send(id, .response(number: r, status: "ok", data: nil))
            drainQueue(id, into: &out)
            return out
        }
        connections[id]!.appCheckExpiresAt = nil
        out.send(id, .response(number: r, status: "invalid_token", data: .string(ServerCore.invalidAppCheck)))
        out.append(refuse(id, reason: ServerCore.invalidAppCheck, .permanent))
        return out
    }
}
