import HearthModel

/// The decisions of transactions, with no I/O (sans-I/O): what happens to a transaction when
/// the server answers its compare-and-set, when the connection drops under it, or when a plain
/// write at its location comes after it — Firebase's `repoSendTransactionQueue` /
/// `repoRerunTransactions` outcome handling.
///
/// A transaction runs its update function on the local value and hands the result to
/// ``ClientCore/write(_:condition:now:)`` as a compare-and-set against that value's hash; the
/// runtime (or the simulator) records it here under that write's id with ``sent(_:path:retries:payload:)``.
/// Each report answers what to do:
/// - `ok` → ``Step/committed``;
/// - `datastale` → ``Step/runAgain`` (the entry's ``Entry/retries`` counted) until
///   ``maxRetries`` stale attempts → aborted `maxretry`; a transaction a plain write came after
///   aborts `set` instead of running on;
/// - another refusal → aborted with what the server said;
/// - the connection dropped after it was sent (``ClientEvent/conditionalWriteInterrupted(id:)``)
///   → aborted `disconnect`: whether the server applied it is unknown (Firebase's reason);
/// - withdrawn before it was sent (a plain write came after it) → aborted `set`.
///
/// The runtime does the I/O: runs the function, saves writes, calls back the app.
struct TransactionQueue<Payload: Sendable>: Sendable {
    /// One transaction in flight, under its current write id.
    struct Entry: Sendable {
        /// Its location.
        let path: Path
        /// Stale attempts so far.
        var retries: Int
        /// A plain write at, above or below its location came after it.
        var overwritten = false
        /// What the runtime keeps with it (its function, its callbacks).
        var payload: Payload
    }

    /// What to do next.
    enum Step: Sendable, Equatable {
        /// The server applied it.
        case committed
        /// Run the function again on the newer local data (the entry says how many times it
        /// was stale).
        case runAgain
        /// It ends without committing, for this reason.
        case aborted(DatabaseError)
    }

    /// The most times a transaction runs against stale data before it aborts (Firebase: 25).
    static var maxRetries: Int { 25 }

    /// The transactions in flight, by write id.
    private(set) var entries: [Int64: Entry] = [:]

    /// An empty queue.
    init() {}

    /// Whether write `id` is a transaction's compare-and-set in flight.
    func contains(_ writeID: Int64) -> Bool { entries[writeID] != nil }

    /// A transaction's compare-and-set went to the core as write `writeID`.
    mutating func sent(_ writeID: Int64, path: Path, retries: Int, payload: Payload) {
        entries[writeID] = Entry(path: path, retries: retries, payload: payload)
    }

    /// The server answered write `writeID` (`nil`: applied). Returns the transaction and the
    /// step (for ``Step/runAgain`` its retries are counted), or nil for a write that is no
    /// transaction's.
    mutating func answered(_ writeID: Int64, error: DatabaseError?) -> (Entry, Step)? {
        guard var entry = entries.removeValue(forKey: writeID) else { return nil }
        switch error {
        case nil:
            return (entry, .committed)
        case .serverError(status: "datastale", _)? where entry.overwritten:
            return (entry, .aborted(.transactionAborted("set")))
        case .serverError(status: "datastale", _)?:
            entry.retries += 1
            guard entry.retries < TransactionQueue.maxRetries else {
                return (entry, .aborted(.transactionAborted("maxretry")))
            }
            return (entry, .runAgain)
        case let error?:
            return (entry, .aborted(error))
        }
    }

    /// The connection dropped after write `writeID` was sent: the outcome is unknown.
    mutating func interrupted(_ writeID: Int64) -> (Entry, Step)? {
        guard let entry = entries.removeValue(forKey: writeID) else { return nil }
        return (entry, .aborted(.transactionAborted("disconnect")))
    }

    /// The transactions a plain write at `path` comes after (at, above or below their
    /// location), by write id. The runtime withdraws each one the core has not sent
    /// (``withdrawn(_:)``) and marks the others (``markOverwritten(_:)``).
    func related(to path: Path) -> [Int64] {
        entries.filter { $0.value.path.contains(path) || path.contains($0.value.path) }.map(\.key).sorted()
    }

    /// Write `writeID` was withdrawn before it was sent: the transaction aborts `set`.
    mutating func withdrawn(_ writeID: Int64) -> (Entry, Step)? {
        guard let entry = entries.removeValue(forKey: writeID) else { return nil }
        return (entry, .aborted(.transactionAborted("set")))
    }

    /// Write `writeID` was sent before a plain write at its location: if it comes back stale
    /// it aborts `set` rather than run again.
    mutating func markOverwritten(_ writeID: Int64) {
        entries[writeID]?.overwritten = true
    }
}

extension DatabaseError {
    /// A transaction's abort reason.
    static func transactionAborted(_ reason: String) -> DatabaseError {
        .serverError(status: reason, message: "transaction aborted: \(reason)")
    }
}
