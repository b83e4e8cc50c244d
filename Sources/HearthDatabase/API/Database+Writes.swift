import Dispatch
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

/// The durable id of a write, given when the write is made: the outcome of every write ever
/// made — including writes restored after a restart, for which Firebase calls no completion
/// (firebase-android-sdk #642) — reaches ``Database/observeWriteResults(on:_:)`` under it.
public struct WriteID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The store's write id (increasing in write order, never reused).
    public let rawValue: Int64
    /// An id from its raw value.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static func < (a: WriteID, b: WriteID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "write#\(rawValue)" }
}

/// The server's answer to a write.
public struct WriteResult: Sendable, Equatable {
    /// Which write.
    public let id: WriteID
    /// `nil` when the server applied it; otherwise why it refused (the write was reverted).
    public let error: DatabaseError?
}

extension Database {
    /// Saves a write in the store without waiting for a sync (local observers see it at once),
    /// and returns its id. The database's queue then makes it durable at
    /// ``Options/durability`` and only then hands it to the core, which sends it when
    /// connected; a write that cannot be made durable is never sent, and its completion and
    /// the write-result observers get the error. `completion` runs when the server answers.
    func saveWrite(
        _ operation: PendingWrite.Operation, at ref: DatabaseReference, queue: DispatchQueue?,
        completion: (@Sendable (DatabaseError?) -> Void)?
    ) throws(DatabaseError) -> WriteID {
        if let invalid = ref.invalid { throw invalid }
        if ref.path.keys.first == Database.infoKey {
            throw .invalidPath("\(ref.pathString) is under .info, which is read-only")
        }
        let result: Result<WriteID, DatabaseError> = writeLock.withLock { _ in
            if state.withLock({ $0.closed }) { return .failure(.closed) }
            let id: Int64, lsn: LSN
            do throws(DatabaseError) { (id, lsn) = try saveWriteWithoutSync(operation, at: ref.path) } catch {
                return .failure(error)
            }
            if let completion {
                acknowledger.expect(WriteCallback(queue: queue ?? callbacks, handler: completion), forWrite: id)
            }
            markTransactionsOverwritten(by: ref.path)
            let write = PendingWrite(id: id, path: ref.path, operation: operation)
            let writer = writerID
            handOff(after: lsn) { [self] in
                step { (core, now) in core.write(write, writer: writer, now: now) }
            } failed: { [acknowledger, id] error in
                acknowledger.reportWrite(id, error)
            }
            return .success(WriteID(rawValue: id))
        }
        return try result.get()
    }

    /// Observes the outcome of every write: those made in this run and those restored from
    /// an earlier one. Handlers run on `queue` (default: the database's callback queue). The
    /// first observer registered also gets, at once, every result the store kept for want of
    /// a handler: those an earlier run had but whose handlers had not all returned when it
    /// stopped (see <doc:ExactlyOnceWrites>), and those answered in this run before any
    /// handler was registered, to a write without a completion.
    @discardableResult
    public func observeWriteResults(
        on queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (WriteResult) -> Void
    ) -> DatabaseHandle {
        observeOutcomes(OutcomeObserver(queue: queue ?? callbacks, handler: handler), on: \.writes)
    }

    /// Registers `observer` on the acknowledger's `channel`; the first one also gets, at once,
    /// every outcome waiting there.
    func observeOutcomes<Value: Sendable>(
        _ observer: OutcomeObserver<Value>, on channel: WritableKeyPath<OutcomeLedger, OutcomeChannel<Value>>
    ) -> DatabaseHandle {
        startIfNeeded()
        let handle = state.withLock { $0.newHandle() }
        acknowledger.observe(observer, as: handle, on: channel)
        return handle
    }

    /// Stops a write-result observer.
    public func removeWriteResultObserver(withHandle handle: DatabaseHandle) {
        acknowledger.removeObserver(handle, on: \.writes)
    }

    /// The writes the server has not answered yet (kept across restarts), oldest first.
    public var pendingWriteIDs: [WriteID] {
        store.pendingWrites().map { WriteID(rawValue: $0.id) }.sorted()
    }

    /// A new push id: time-ordered (by the server's clock, estimated), collision-resistant.
    func nextPushID() -> String {
        let now = options.clock() + Int64(serverTimeOffset)
        return pushIDs.withLock { $0.next(now: now) }
    }
}

/// The push id generator and the randomness its ids are drawn with (seeded by
/// ``Database/Options/seed``).
struct PushIDSource: Sendable {
    private var generator = PushIDGenerator()
    var random: SeededRandom

    init(random: SeededRandom) { self.random = random }

    mutating func next(now: Int64) -> String { generator.next(now: now, using: &random) }
}

// Every commit an app's call makes (a write, a transaction's, an onDisconnect's) is saved on the
// caller's thread without a sync, made durable on the database's queue, and only then handed to
// the core (which may send it).
extension Database {
    /// The most commits that may wait on ``work`` to be made durable and handed to the core; a
    /// call that finds more waits until ``work`` has caught up, so a caller faster than the
    /// disk is slowed down instead of growing the queue (the log's commit queue has the same
    /// bound).
    static let maxHandOffs = 4096

    /// Whether the store's tier syncs (`.full`): then the app's commits are saved without a sync
    /// on the caller's thread, and ``work`` syncs them (one sync for every commit written by
    /// then). Under `.batched` and `.buffered` a commit does not sync on the caller's thread
    /// anyway, and is as durable as its tier promises when it returns.
    var defersSync: Bool { store.options.durability == .full }

    /// Commits `build` on the caller's thread without waiting for a sync; returns its LSN for
    /// ``handOff(after:_:failed:)``. Local observers see the commit at once.
    func commitWithoutSync(_ build: (inout StoreBatch) throws(StoreError) -> Void) throws(DatabaseError) -> LSN {
        try withoutSync { (durability) throws(StoreError) in try store.commit(durability: durability, build).lsn }
    }

    /// Saves an app's write as ``commitWithoutSync(_:)`` would a batch of it alone, on the
    /// store's write path (encoded and deflated before the store's lock); returns its id and LSN.
    func saveWriteWithoutSync(
        _ operation: PendingWrite.Operation, at path: Path
    ) throws(DatabaseError) -> (
        id: Int64, lsn: LSN
    ) {
        try withoutSync { (durability) throws(StoreError) in
            try store.saveWrite(operation, at: path, writer: writerID, durability: durability)
        }
    }

    /// Runs `save` at the tier that leaves the sync to ``work`` (`.buffered` when the store's
    /// own tier would sync; nil, the store's tier, otherwise) — refused once a sync failed.
    private func withoutSync<T>(_ save: (Durability?) throws(StoreError) -> T) throws(DatabaseError) -> T {
        if let failure = handOffs.withLock({ $0.failure }) { throw failure }
        do { return try save(defersSync ? .buffered : nil) } catch { throw DatabaseError(error) }
    }

    /// On ``work``, after the calls queued before it: makes every commit up to `lsn` durable at
    /// the store's tier, then runs `handOff` — or, when the sync fails, `failed` with the error.
    /// A failed sync poisons the store's log: every later commit is refused (the engine's rule,
    /// until the store is reopened), and every hand-off still queued fails too, so a commit
    /// that was not made durable is never sent and its caller hears of it.
    ///
    /// Call it under ``writeLock`` when the commits must reach the core in their order.
    func handOff(
        after lsn: LSN, _ handOff: @escaping @Sendable () -> Void,
        failed: @escaping @Sendable (DatabaseError) -> Void
    ) {
        let backlog = handOffs.withLock { $0.queued() }
        work.async { [self] in
            let failure = makeDurable(through: lsn)
            handOffs.withLock { $0.ran() }
            if let failure { failed(failure) } else { handOff() }
        }
        if backlog > Database.maxHandOffs { work.sync {} }
    }

    /// [on ``work``] Syncs the store through `lsn` (nothing to do when the tier does not sync,
    /// or when an earlier sync covered it); the failure, kept for every later call.
    private func makeDurable(through lsn: LSN) -> DatabaseError? {
        dispatchPrecondition(condition: .onQueue(work))
        if let failure = handOffs.withLock({ $0.failure }) { return failure }
        guard defersSync else { return nil }
        do throws(StoreError) {
            try store.waitUntilDurable(lsn)
            return nil
        } catch {
            let failure = DatabaseError(error)
            handOffs.withLock { $0.failed(failure) }
            Database.logger(options)("writes refused until the database is reopened: a sync failed (\(error))")
            return failure
        }
    }
}

/// The app's commits between the caller's thread and the core (``Database/handOff(after:_:failed:)``).
///
/// Invariant: ``waiting`` counts the hand-offs queued on the database's queue that have not run
/// (never negative), and once a sync has failed ``failure`` stays: every later commit is refused
/// with it until the database is reopened.
struct HandOffGate: Sendable {
    /// Hand-offs queued and not yet run.
    private(set) var waiting = 0
    /// The first failed sync of the app's commits.
    private(set) var failure: DatabaseError?

    /// One more hand-off is queued; returns how many wait now (itself included).
    mutating func queued() -> Int {
        waiting += 1
        return waiting
    }

    /// A queued hand-off has run.
    mutating func ran() {
        precondition(waiting > 0, "a hand-off runs once for each one queued")
        waiting -= 1
    }

    /// A sync failed with `error`; the first failure is the one kept.
    mutating func failed(_ error: DatabaseError) {
        if failure == nil { failure = error }
    }
}
