import Dispatch
import Hearth
import HearthModel

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
                state.withLock {
                    $0.outcomes.expect(WriteCallback(queue: queue ?? callbacks, handler: completion), forWrite: id)
                }
            }
            markTransactionsOverwritten(by: ref.path)
            let write = PendingWrite(id: id, path: ref.path, operation: operation)
            let writer = writerID
            handOff(after: lsn) { [self] in
                step { (core, now) in core.write(write, writer: writer, now: now) }
            } failed: { [self, id] error in
                reportWrite(id, error)
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

    /// Stops a write-result observer.
    public func removeWriteResultObserver(withHandle handle: DatabaseHandle) {
        state.withLock { $0.outcomes.writes.remove(handle) }
    }

    /// The writes the server has not answered yet (kept across restarts), oldest first.
    public var pendingWriteIDs: [WriteID] {
        store.pendingWrites().map { WriteID(rawValue: $0.id) }.sorted()
    }

    /// A new push id: time-ordered (by the server's clock, estimated), collision-resistant.
    func nextPushID() -> String {
        let now = options.clock() + Int64(serverTimeOffset)
        return state.withLock { s in s.pushIDs.next(now: now, using: &s.random) }
    }
}
