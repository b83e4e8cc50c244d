import Dispatch
import Hearth
import HearthModel

/// What an update function returns (Firebase's `TransactionResult`): commit a value, or
/// abort.
public struct TransactionResult: Sendable {
    enum Outcome: Sendable {
        case abort
        case value(DatabaseValue)
        /// A ``MutableData``'s data, validated as it was set.
        case data(Node)
        /// A ``MutableData`` write that was refused: the transaction ends with it.
        case invalid(DatabaseError)
    }

    let outcome: Outcome

    init(_ outcome: Outcome) { self.outcome = outcome }

    /// Abort, as Firebase's `TransactionResult()` does.
    public init() { outcome = .abort }

    /// Commit `value` (`.null` removes the data).
    @_disfavoredOverload
    public static func success(withValue value: DatabaseValue) -> TransactionResult { TransactionResult(.value(value)) }

    /// Commit the data of the ``MutableData`` the block was given (all of it, whichever of
    /// its children `value` is), as Firebase does; a refused write to it ends the transaction
    /// with its error.
    public static func success(withValue value: MutableData) -> TransactionResult {
        switch value.root.outcome {
        case .success(let node): TransactionResult(.data(node))
        case .failure(let error): TransactionResult(.invalid(error))
        }
    }

    /// Abort: nothing is written; the completion reports not committed.
    public static func abort() -> TransactionResult { TransactionResult(.abort) }
}

/// The outcome of a named transaction, reported to ``Database/observeTransactionResults(on:_:)``
/// — also for transactions queued by an earlier run of the app.
public struct TransactionOutcome: Sendable, Equatable {
    /// The transaction's durable id (from ``DatabaseReference/runTransaction(named:argument:on:andCompletionBlock:)``).
    public let id: Int64
    /// Whether the server applied it.
    public let committed: Bool
    /// Why not, when it did not (`nil` when the function aborted): `maxretry` (25 stale
    /// attempts), `disconnect` (the connection dropped while it was in flight: whether the
    /// server applied it is unknown — Firebase's reason), or what the server said.
    public let error: DatabaseError?
}

/// An update function: the current value at the location (`.null` when empty) and the
/// argument it was started with.
public typealias TransactionFunction =
    @Sendable (_ current: DatabaseValue, _ argument: DatabaseValue) -> TransactionResult

/// A transaction in flight, kept in the runtime's ``TransactionQueue`` under its current write
/// id (which decides its steps).
struct RunningTransaction: Sendable {
    let ref: DatabaseReference
    /// The block: given the data at the location (priorities included).
    let update: @Sendable (Node) -> TransactionResult
    /// A persisted (named) transaction's store id.
    var storeID: Int64?
    var retries = 0
    let queue: DispatchQueue
    let completion: (@Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void)?
    /// The value listener that keeps the location's data fresh while it runs (Firebase's).
    var listener: DatabaseHandle?
    /// Whether observers see the block's results before the server commits one (Firebase's
    /// `withLocalEvents`): `false` saves each result as a hidden write
    /// (the store's `saveHiddenWrite`), so only the server's data raises events.
    var localEvents = true
}

extension Database {
    /// Registers a named update function. Transactions started by name are persisted with
    /// their argument and run again after a restart (Firebase loses queued transactions on
    /// restart); the ones an earlier run queued for `name` start now.
    public func registerTransactionFunction(_ name: String, _ function: @escaping TransactionFunction) {
        startIfNeeded()
        let restored: [QueuedTransaction] = state.withLock { s in
            s.transactionFunctions[name] = function
            let mine = s.restoredTransactions.filter { $0.functionName == name }
            s.restoredTransactions.removeAll { $0.functionName == name }
            return mine
        }
        for tx in restored.sorted(by: { $0.id < $1.id }) {
            let ref = DatabaseReference(database: self, path: tx.path)
            let argument = DatabaseValue(node: tx.argument)
            var t = RunningTransaction(
                ref: ref, update: { function(DatabaseValue(node: $0), argument) }, storeID: tx.id,
                retries: tx.retryCount, queue: callbacks,
                completion: nil)
            t.listener = ref.observe(.value) { _ in }
            run(t, persist: nil)
        }
    }

    /// Observes the outcome of every named transaction, including those queued by an earlier
    /// run. The first observer registered also gets, at once, every outcome the store kept
    /// for want of a handler: those an earlier run decided but whose handlers had not all
    /// returned when it stopped (see <doc:ExactlyOnceWrites>), and those decided in this run
    /// before any handler was registered.
    @discardableResult
    public func observeTransactionResults(
        on queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (TransactionOutcome) -> Void
    ) -> DatabaseHandle {
        observeOutcomes(OutcomeObserver(queue: queue ?? callbacks, handler: handler), on: \.transactions)
    }

    /// At open: transactions an earlier run left. Their optimistic writes are reverted (a
    /// transaction's write is only ever sent as a compare-and-set, never restored as a plain
    /// write); queued ones wait for their function's registration and run again; one that was
    /// in flight when the app stopped may or may not have been applied, so it is decided
    /// `disconnect`; decided ones (and those) are outcomes to deliver.
    static func restoreTransactions(
        _ store: Store
    ) throws(StoreError) -> (queued: [QueuedTransaction], outcomes: [TransactionOutcome]) {
        let all = store.transactions().sorted { $0.id < $1.id }
        guard !all.isEmpty else { return ([], []) }
        let decided = all.filter(\.status.isDecided)
        let txs = all.filter { !$0.status.isDecided }
        var writes = store.pendingWrites().sorted { $0.id < $1.id }
        var revert: [Int64] = []
        for tx in txs {
            // Saved in the same commit as its write: the oldest unmatched write of its value at
            // its path is its own.
            if let i = writes.firstIndex(where: { $0.path == tx.path && $0.operation == .set(tx.localResult) }) {
                revert.append(writes[i].id)
                writes.remove(at: i)
            }
        }
        let unknown = txs.filter { $0.status == .sent }.map(\.id)
        let (status, reason) = decidedRecord(committed: false, error: .transactionAborted("disconnect"))
        var outcomes = decided.compactMap(Database.outcome(of:))
        let retried = txs.filter { $0.status == .needsRetry }
        guard !revert.isEmpty || !unknown.isEmpty || !retried.isEmpty else { return (txs, outcomes) }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            for id in revert { try b.revertWrite(id) }
            for id in unknown {
                outcomes.append(Database.outcome(of: try b.updateTransaction(id, localResult: reason, status: status))!)
            }
            for tx in retried { try b.updateTransaction(tx.id, status: .queued) }
        }
        return (txs.filter { $0.status != .sent }, outcomes.sorted { $0.id < $1.id })
    }

    /// Runs a transaction's function on the local value (pending writes included) and queues
    /// its result as a compare-and-set write against that value's hash; `persist` (name,
    /// argument) saves a new named transaction in the same commit.
    /// Returns the persisted transaction's id (nil for a closure, or when the function
    /// aborted at once).
    ///
    /// The function runs holding no lock of the database, so that it may read and write the
    /// database itself; if the local value changed meanwhile (a write it or another thread
    /// made), it runs again on the new value, as it would after a stale answer.
    @discardableResult
    func run(_ transaction: RunningTransaction, persist: (name: String, argument: Node)?) -> Int64? {
        var t = transaction
        let path = t.ref.path
        for attempt in 0... {
            let seen: Node
            do throws(StoreError) { seen = try store.value(at: path) } catch {
                finish(t, committed: false, error: DatabaseError(error))
                return nil
            }
            let result: Node
            switch t.update(seen).outcome {
            case .abort:
                // The function aborted: not committed, and no error (Firebase's `nodata`).
                finish(t, committed: false, error: nil)
                return nil
            case .invalid(let error):
                finish(t, committed: false, error: error)
                return nil
            case .data(let node):
                result = node
            case .value(let value):
                do throws(DatabaseError) { result = try HearthDatabase.node(from: value, at: path) } catch {
                    finish(t, committed: false, error: error)
                    return nil
                }
            }
            let sent: Int64?? = writeLock.withLock { _ -> Int64?? in
                let current: Node
                do throws(StoreError) { current = try store.value(at: path) } catch {
                    finish(t, committed: false, error: DatabaseError(error))
                    return .some(nil)
                }
                // Bounded as the server's retries are: past them, the server's check decides.
                if current != seen && attempt < TransactionQueue<RunningTransaction>.maxRetries { return nil }
                return .some(queueResult(&t, over: seen, result: result, persist: persist))
            }
            if let sent { return sent }
        }
        return nil
    }

    /// Saves a transaction's result as a write and hands it to the core as a compare-and-set
    /// against `current`, the value the function saw. Called under the write lock.
    private func queueResult(
        _ t: inout RunningTransaction, over current: Node, result: Node, persist: (name: String, argument: Node)?
    ) -> Int64? {
        let path = t.ref.path
        var writeID: Int64 = 0
        let lsn: LSN
        do throws(DatabaseError) {
            lsn = try commitWithoutSync { (b: inout StoreBatch) throws(StoreError) in
                writeID =
                    t.localEvents
                    ? try b.saveWrite(.set(result), at: path, writer: writerID)
                    : try b.saveHiddenWrite(result, at: path, writer: writerID)
                if let persist {
                    t.storeID = try b.enqueueTransaction(
                        at: path, functionName: persist.name, argument: persist.argument, localResult: result
                    ).id
                } else if let id = t.storeID, b.transaction(id) != nil {
                    try b.updateTransaction(id, localResult: result, retryCount: t.retries, status: .queued)
                }
            }
        } catch {
            finish(t, committed: false, error: error)
            return nil
        }
        let entry = t
        state.withLock { $0.transactions.sent(writeID, path: path, retries: entry.retries, payload: entry) }
        let write = PendingWrite(id: writeID, path: path, operation: .set(result))
        let condition = ClientCore.WriteCondition(hash: current.hash, transactionID: t.storeID)
        let writer = writerID
        handOff(after: lsn) { [self] in
            step { (core, now) in core.write(write, writer: writer, condition: condition, now: now) }
        } failed: { [self] error in
            // Never sent: the transaction ends with the error, as a server's refusal would.
            transactionSteps.async { [weak self] in
                self?.transactionAnswered(writeID: write.id, error: error, interrupted: false)
            }
        }
        return t.storeID
    }

    /// The server answered (or the connection dropped under) a transaction's write: the
    /// queue decides (``TransactionQueue``).
    func transactionAnswered(writeID: Int64, error: DatabaseError?, interrupted: Bool) {
        let decided = state.withLock { s in
            interrupted ? s.transactions.interrupted(writeID) : s.transactions.answered(writeID, error: error)
        }
        guard let (entry, step) = decided else { return }
        if interrupted {
            // The core forgot the write; the store still holds it.
            _ = try? store.commit { (b: inout StoreBatch) throws(StoreError) in
                if b.pendingWrite(writeID) != nil { try b.revertWrite(writeID) }
            }
        }
        var t = entry.payload
        switch step {
        case .committed:
            finish(t, committed: true, error: nil)
        case .runAgain:
            t.retries = entry.retries
            run(t, persist: nil)
        case .aborted(let error):
            finish(t, committed: false, error: error)
        }
    }

    /// Ends a transaction: its listener stops and the app hears. A named one's record stays in
    /// the store, decided, with its outcome (committed at the store's durability tier before
    /// any handler runs), until every handler has returned (``WriteAcknowledger/reportTransaction(_:completion:)``):
    /// a process that dies first reports it at the next start.
    private func finish(_ t: RunningTransaction, committed: Bool, error: DatabaseError?) {
        if let h = t.listener { removeObserver(h) }
        let snapshot = DataSnapshot(ref: t.ref, node: (try? store.value(at: t.ref.path)) ?? .empty, index: .priority)
        let completion = t.completion.map { c in (queue: t.queue, run: { @Sendable in c(error, committed, snapshot) }) }
        guard let id = t.storeID else {
            if let completion { completion.queue.async { completion.run() } }
            return
        }
        let (status, reason) = Database.decidedRecord(committed: committed, error: error)
        _ = try? store.commit { (b: inout StoreBatch) throws(StoreError) in
            if b.transaction(id) != nil { try b.updateTransaction(id, localResult: reason, status: status) }
        }
        acknowledger.reportTransaction(
            TransactionOutcome(id: id, committed: committed, error: error), completion: completion)
    }

    /// A plain write at `path`: transactions at, above or below it will abort with `set`
    /// rather than run again (their compare-and-set fails once the write is in).
    /// Those not yet sent are withdrawn and abort now. Called under the write lock, before
    /// the write reaches the core.
    func markTransactionsOverwritten(by path: Path) {
        let related = state.withLock { $0.transactions.related(to: path) }
        for id in related {
            var withdrawn = false
            work.sync {
                step { (core, now) in
                    let (out, done) = core.withdrawUnsentWrite(id, now: now)
                    withdrawn = done
                    return out
                }
            }
            let aborted: (TransactionQueue<RunningTransaction>.Entry, TransactionQueue<RunningTransaction>.Step)? =
                state.withLock { s in
                    if withdrawn { return s.transactions.withdrawn(id) }
                    s.transactions.markOverwritten(id)
                    return nil
                }
            if case let (entry, .aborted(error))? = aborted { finish(entry.payload, committed: false, error: error) }
        }
    }
}

extension DatabaseReference {
    /// Runs a transaction with a closure (Firebase's `runTransactionBlock`): `block` runs at
    /// once on the local value, its result is shown locally and sent as a compare-and-set; if
    /// the server's data differed, `block` runs again on the newer data (up to 25 times).
    /// Lives in memory, as in Firebase; ``runTransaction(named:argument:on:andCompletionBlock:)``
    /// survives restarts. (Firebase's form, whose block takes a ``MutableData``, is preferred
    /// where a closure fits both.)
    @_disfavoredOverload
    public func runTransactionBlock(
        _ block: @escaping @Sendable (DatabaseValue) -> TransactionResult, on queue: DispatchQueue? = nil,
        andCompletionBlock completion: (@Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void)? = nil
    ) throws(DatabaseError) {
        try check()
        var t = RunningTransaction(
            ref: self, update: { block(DatabaseValue(node: $0)) }, queue: queue ?? database.callbacks,
            completion: completion)
        t.listener = observe(.value) { _ in }
        database.run(t, persist: nil)
    }

    /// ``runTransactionBlock(_:on:andCompletionBlock:)`` that waits for the outcome.
    @_disfavoredOverload
    public func runTransactionBlock(
        _ block: @escaping @Sendable (DatabaseValue) -> TransactionResult
    ) async throws(DatabaseError) -> (committed: Bool, snapshot: DataSnapshot?) {
        try check()
        let r: Result<(Bool, DataSnapshot?), DatabaseError> = await withCheckedContinuation { c in
            do throws(DatabaseError) {
                try runTransactionBlock(block) { error, committed, snap in
                    c.resume(returning: error.map { .failure($0) } ?? .success((committed, snap)))
                }
            } catch { c.resume(returning: .failure(error)) }
        }
        let (committed, snapshot) = try r.get()
        return (committed, snapshot)
    }

    /// Runs the update function registered as `name` with `argument`, persisted: queued
    /// offline and across restarts until the server commits it or it aborts; the outcome goes
    /// to `completion` (this run only) and to ``Database/observeTransactionResults(on:_:)``.
    /// Returns the transaction's durable id (the one ``TransactionOutcome/id`` reports), or
    /// nil when the function aborted at once (nothing was queued; `completion` says so).
    @discardableResult
    public func runTransaction(
        named name: String, argument: DatabaseValue = .null, on queue: DispatchQueue? = nil,
        andCompletionBlock completion: (@Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void)? = nil
    ) throws(DatabaseError) -> Int64? {
        try check()
        guard let function = database.state.withLock({ $0.transactionFunctions[name] }) else {
            throw .invalidValue("no transaction function is registered as \"\(name)\"")
        }
        let arg = try HearthDatabase.node(from: argument, at: path)
        var t = RunningTransaction(
            ref: self, update: { function(DatabaseValue(node: $0), argument) }, queue: queue ?? database.callbacks,
            completion: completion)
        t.listener = observe(.value) { _ in }
        return database.run(t, persist: (name, arg))
    }

    /// Refuses a transaction on an invalid reference or under `.info`.
    func check() throws(DatabaseError) {
        if let invalid { throw invalid }
        if path.keys.first == Database.infoKey {
            throw .invalidPath("\(pathString) is under .info, which is read-only")
        }
    }
}
