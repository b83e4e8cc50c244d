import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

// What Firebase's production servers say beyond data and answers: redirects to another host
// (a reset, the hello's host), a shutdown, server errors, security debug output, App Check
// revocations and listen warnings — handled as firebase-js-sdk `realtime/Connection.ts`
// (`onControl_`, `onReset_`, `onConnectionShutdown_`) and `core/PersistentConnection.ts`
// (`onDataPush_`, `onKill`, `warnOnListenWarnings_`) do.
extension ClientCore {
    /// A control message or push other than data, answers and the hello.
    mutating func controlReceived(_ message: ServerMessage, now: Int64, into out: inout ClientOutput) {
        switch message {
        case .reset(let target):
            reset(to: target, now: now, into: &out)
        case .shutdown(let reason):
            if retryAfterAppCheckShutdown(reason, now: now, into: &out) { return }
            // Firebase's clients warn and stop reconnecting (`interrupt(SERVER_KILL_INTERRUPT_REASON)`,
            // never resumed by the SDK): the server said this database is not to be used.
            // `.info/connected` turns false; writes stay queued. Here the app's goOnline()
            // tries again.
            out.events.append(.notice("server shutdown: \(reason)"))
            guard let id = currentConnection else { return }
            out.close = id
            let wasConnected = isConnected
            dropConnectionState(now: now, into: &out)
            phase = .offline
            shutdownReason = reason
            if wasConnected { out.events.append(.connected(false)) }
        case .serverError(let text):
            out.events.append(.notice("Server Error: \(text)"))
        case .securityDebug(let message):
            out.events.append(.notice("FIREBASE: " + message))
        case let .appCheckRevoked(status, reason):
            appCheckRevoked(status: status, reason: reason, now: now, into: &out)
        case .hello, .response, .set, .merge, .rangeMerge, .listenRevoked, .authRevoked, .pong:
            assertionFailure("controlReceived handles only control messages and pushes without data")
        }
    }

    /// Control `r`: connect to `target` from now on. Before the hello the attempt starts again
    /// there at once, without a backoff (the same attempt, as Firebase's `onReset_` restarts
    /// it); after it the connection closes and the next attempt, after the backoff, goes
    /// there. More than ``Configuration/maxResetsPerAttempt`` resets in one attempt fail it.
    mutating func reset(to target: String, now: Int64, into out: inout ClientOutput) {
        guard configuration.host != nil, ServerEndpoint.isValidHost(target) else {
            out.events.append(.protocolWarning("reset to \"\(target)\" ignored: not a host to follow"))
            return
        }
        follow(target, into: &out)
        switch phase {
        case .connected:
            closeAndRetry(now: now, into: &out)
        case .connecting(let old):
            resetsInAttempt += 1
            guard resetsInAttempt <= configuration.maxResetsPerAttempt else {
                out.events.append(
                    .protocolWarning("more than \(configuration.maxResetsPerAttempt) resets in one attempt"))
                closeAndRetry(now: now, into: &out)
                return
            }
            out.close = old
            let id = ConnectionID(nextConnection)
            nextConnection += 1
            currentOpened = false
            phase = .connecting(id)
            out.open = id
        case .offline, .waiting, .fetchingToken:
            break
        }
    }

    /// Takes `target` as the host for the connections that follow (Firebase's `RepoInfo.host`
    /// setter), reporting a change so that the runtime keeps it. The configured host itself is
    /// kept as `nil`.
    mutating func follow(_ target: String, into out: inout ClientOutput) {
        guard let configured = configuration.host, ServerEndpoint.isValidHost(target) else { return }
        let next = target.lowercased() == configured.lowercased() ? nil : target.lowercased()
        guard next != host else { return }
        host = next
        out.events.append(.hostChanged(next))
    }

    /// A connection that never opened: a host a server named may be gone, so the next attempt
    /// goes to the configured host again (Firebase's `onConnectionLost_` drops its cached host
    /// when a connection fails before it opens).
    mutating func connectFailed(into out: inout ClientOutput) {
        guard let failed = host else { return }
        host = nil
        out.events.append(.notice("could not connect to \(failed): back to the configured host"))
        out.events.append(.hostChanged(nil))
    }

    /// A listen's answer may carry warnings (`"w"`): `no_index` means the server filters the
    /// query without an index (Firebase's clients warn with the rule to add).
    func warnOfListenWarnings(_ data: JSONValue?, at location: QueryLocation, into out: inout ClientOutput) {
        guard case .array(let warnings)? = data?["w"], warnings.contains(where: { $0.stringValue == "no_index" })
        else { return }
        out.events.append(
            .notice(
                "Using an unspecified index. Your data will be downloaded and filtered on the client. "
                    + "Consider adding \".indexOn\": \"\(location.query.index.wireName)\" at /\(location.path.wireString)"
                    + " to your security rules for better performance."))
    }
}
