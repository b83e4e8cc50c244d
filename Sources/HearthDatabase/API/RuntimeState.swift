import Dispatch
import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

/// What the runtime keeps beside the core, under ``Database/state``: what must change in the
/// same step as the core (the connection, the listens' registrations, the transactions). The
/// parts with an owner of their own keep their state under their own lock: the ack path
/// (``Database/acknowledger``), the inbox, the hand-offs, the push ids, the writes-paused signal, `.info`.
struct RuntimeState: Sendable {
    var core: ClientCore
    /// Where the connections go (the URL's host, or an emulator's).
    var endpoint: ServerEndpoint
    /// Where a persistent store keeps the host a server redirected ``endpoint`` to (`nil`:
    /// memory only).
    var hostCache: HostCache?
    /// Whether the app has used the database (a reference, goOnline/goOffline): settings that
    /// must precede the first use are refused after it.
    var started = false
    var connection: (id: ConnectionID, link: any TransportConnection)?
    var closed = false
    var timer: TimerSource?
    /// keepSynced locations (the store persists them; the core listens for them).
    var pinned: Set<QueryLocation> = []
    var registrations: [DatabaseHandle: Registration] = [:]
    var nextHandle: DatabaseHandle = 1
    /// Transactions in flight, by their current write id; named functions; transactions an
    /// earlier run queued, waiting for their function.
    var transactions = TransactionQueue<RunningTransaction>()
    var transactionFunctions: [String: TransactionFunction] = [:]
    var restoredTransactions: [QueuedTransaction] = []
    var getWaiters: [UInt64: @Sendable (Result<Node, DatabaseError>) -> Void] = [:]
    var nextGet: UInt64 = 1

    mutating func newHandle() -> DatabaseHandle {
        defer { nextHandle += 1 }
        return nextHandle
    }
}

/// A dispatch timer, which is thread-safe (Dispatch synchronizes its sources) but not marked
/// `Sendable`.
final class TimerSource: @unchecked Sendable {
    let source: DispatchSourceTimer
    init(_ source: DispatchSourceTimer) { self.source = source }
    func cancel() { source.cancel() }
}

/// An observer registered on the store.
struct Registration: Sendable {
    let token: ListenerToken
    /// The location as the store tracks it, and as the core listens to it.
    let location: QueryLocation
    /// The query as observed (its view's order; ``location`` folds a query that loads all
    /// data into the default query).
    let spec: QuerySpec
    let cancel: (@Sendable (DatabaseError) -> Void)?
    let queue: DispatchQueue
}
