import Dispatch
import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

/// What the runtime keeps beside the core, under ``Database/state``.
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
    var pushIDs: PushIDGenerator
    var random: SeededRandom
    var info = InfoState()
    /// keepSynced locations (the store persists them; the core listens for them).
    var pinned: Set<QueryLocation> = []
    var registrations: [DatabaseHandle: Registration] = [:]
    var infoObservers: [DatabaseHandle: InfoObserver] = [:]
    var nextHandle: DatabaseHandle = 1
    /// Outcomes on their way to the app's handlers (writes' and named transactions').
    var outcomes: OutcomeLedger
    var onDisconnectCallbacks: [Int64: WriteCallback] = [:]
    /// Transactions in flight, by their current write id; named functions; transactions an
    /// earlier run queued, waiting for their function.
    var transactions = TransactionQueue<RunningTransaction>()
    var transactionFunctions: [String: TransactionFunction] = [:]
    var restoredTransactions: [QueuedTransaction] = []
    /// Writes held for an expired token, and who wants to know.
    var writesPaused = false
    var writesPausedObservers: [DatabaseHandle: (queue: DispatchQueue, handler: @Sendable (Bool) -> Void)] = [:]
    var getWaiters: [UInt64: @Sendable (Result<Node, DatabaseError>) -> Void] = [:]
    var nextGet: UInt64 = 1
    /// Transport reports not yet given to the core (drained together: one store commit for
    /// a burst of messages), within ``Database/Options/maxInboxBytes``.
    var inbox: Inbox
    /// The last store failure while applying the server's data (the data stays as it was;
    /// nothing acknowledged is lost — an ack that failed to commit is re-sent next run).
    var lastStorageError: DatabaseError?
    /// A sync of the app's commits failed (``Database/handOff(after:_:failed:)``): every later
    /// write is refused with it, and every commit not yet handed to the core fails with it.
    var durabilityFailure: DatabaseError?
    /// Commits waiting on the sync queue to be made durable and handed to the core.
    var handOffs = 0

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
