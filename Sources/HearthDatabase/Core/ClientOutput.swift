import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

/// A store mutation the core asks for. The runtime applies one output's commits as one store
/// commit, before it delivers that output's events.
package enum ClientCommit: Sendable, Equatable {
    /// Untagged server data (`d`): the data at `path` is `node`.
    case serverOverwrite(Path, Node)
    /// Untagged server merge (`m`).
    case serverMerge(Path, [ChildUpdate])
    /// Tagged server data for the listen at `location` (`StoreBatch.applyTaggedServerOverwrite(_:at:for:)`).
    case taggedOverwrite(Path, Node, for: QueryLocation)
    /// Tagged server merge for the listen at `location`.
    case taggedMerge(Path, [ChildUpdate], for: QueryLocation)
    /// The listen at `location` was answered `ok`.
    case listenComplete(QueryLocation)
    /// The server acknowledged write `id` (`StoreBatch.applyAckedWrite(_:)`).
    case ackWrite(Int64)
    /// The server refused write `id`: it is reverted.
    case revertWrite(Int64)
    /// The server's clock minus ours, from its hello (persisted, so a cold start offline
    /// estimates server timestamps with it).
    case serverTimeOffset(Double)
    /// The auth token in use (persisted with its expiry).
    case saveAuth(AuthToken)
    /// The token was refused: forget it.
    case clearAuth
    /// The server acknowledged onDisconnect operation `id` (it will run when this
    /// connection drops).
    case ackOnDisconnect(Int64)
    /// The operation is gone: refused, cancelled, or run.
    case removeOnDisconnect(Int64)
    /// A persisted transaction's compare-and-set is about to be sent (from here on its outcome
    /// may be unknown after a crash).
    case transactionSent(Int64)
    /// The connection dropped with operation `id` acknowledged: the server ran it, so its
    /// effect becomes server data here (`StoreBatch.applyOnDisconnectLocally(_:)`).
    case applyOnDisconnectLocally(Int64)

    package static func == (lhs: ClientCommit, rhs: ClientCommit) -> Bool {
        String(describing: lhs) == String(describing: rhs)
    }
}

/// Something the app hears about (after the output's commits are durable).
package enum ClientEvent: Sendable, Equatable {
    /// `.info/connected` changed.
    case connected(Bool)
    /// `.info/serverTimeOffset` changed (ms).
    case serverTimeOffset(Double)
    /// `.info/authenticated` changed (the server accepted, or no longer holds, a token).
    case authenticated(Bool)
    /// The outcome of write `id`: `nil` when the server applied it.
    case writeCompleted(id: Int64, error: DatabaseError?)
    /// The server ended the listen at `location` (e.g. `permission_denied`); its observers
    /// are cancelled with `error`.
    case listenRevoked(QueryLocation, DatabaseError)
    /// The answer to ``ClientCore/get(_:at:now:)`` request `id`: the server's data (already
    /// committed to the cache), or why there is none.
    case getCompleted(id: UInt64, Result<Node, DatabaseError>)
    /// The outcome of onDisconnect operation `id` (`nil`: the server holds it).
    case onDisconnectCompleted(id: Int64, error: DatabaseError?)
    /// Conditional write `id` (a transaction's compare-and-set) was sent and its connection
    /// dropped before the answer: whether the server applied it is unknown. The core forgot
    /// it; the runtime decides (re-run when provably not applied, else abort).
    case conditionalWriteInterrupted(id: Int64)
    /// Whether writes are held because the token has expired (Firebase pauses them "until
    /// you re-authenticate the user"): `true` from expiry until a new token arrives.
    case writesPaused(Bool)
    /// The server said something the core could not use (logged, otherwise ignored).
    case protocolWarning(String)
    /// Something Firebase's clients log: a server error, security debug output, a shutdown, a
    /// query the server filters without an index, a fall back to the configured host.
    case notice(String)
    /// The host connections go to changed (``ClientCore/host``; `nil`: the configured one
    /// again): the runtime keeps it for the next start.
    case hostChanged(String?)
}

/// What the runtime must do after one call into ``ClientCore``, in this order: open or close
/// connections, apply ``commits`` as one store commit, send ``messages`` on the current
/// connection, then deliver ``events``.
package struct ClientOutput: Sendable {
    /// Messages for the current connection, in order (whole protocol messages as JSON text;
    /// the transport splits them into frames).
    package var messages: [String] = []
    /// Store mutations, in order.
    package var commits: [ClientCommit] = []
    /// Events for the app, in order.
    package var events: [ClientEvent] = []
    /// Open a new connection with this id (and the session id to resume).
    package var open: ConnectionID?
    /// Close this connection.
    package var close: ConnectionID?
    /// Ask the app's token provider for a token, then hand its answer to
    /// ``ClientCore/tokenFetched(_:fetch:now:)`` (or a failure to
    /// ``ClientCore/tokenFetchFailed(fetch:now:)``) with this request's number.
    package var fetchToken: TokenFetch?
    /// Ask the app's App Check provider for a token, then hand its answer to
    /// ``ClientCore/appCheckTokenFetched(_:fetch:now:)`` (or a failure to
    /// ``ClientCore/appCheckTokenFetchFailed(fetch:now:)``) with this request's number.
    package var fetchAppCheckToken: TokenFetch?

    /// Nothing to do.
    package init() {}

    /// Whether there is nothing to do.
    package var isEmpty: Bool {
        messages.isEmpty && commits.isEmpty && events.isEmpty && open == nil && close == nil && fetchToken == nil
            && fetchAppCheckToken == nil
    }

    /// Appends another output's work after this one's.
    package mutating func append(_ other: ClientOutput) {
        messages += other.messages
        commits += other.commits
        events += other.events
        if let o = other.open { open = o }
        if let c = other.close { close = c }
        if let f = other.fetchToken { fetchToken = f }
        if let f = other.fetchAppCheckToken { fetchAppCheckToken = f }
    }
}

/// A request for a token from the app's token provider.
package struct TokenFetch: Equatable, Sendable {
    /// Whether the provider must refresh the token rather than return a cached one.
    package var force: Bool
    /// The request's number (increasing): its answer carries it back, so that the core can
    /// drop an answer that a newer token overtook.
    package var number: Int64

    /// A request numbered `number`.
    package init(force: Bool, number: Int64) {
        self.force = force
        self.number = number
    }
}
