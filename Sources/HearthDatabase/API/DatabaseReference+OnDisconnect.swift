import Dispatch
import Hearth
import HearthModel

// onDisconnect, Firebase's shape: the server holds the operation and runs it when this
// client's connection drops (cleanly or not). Hearth also keeps it in the store until the
// server acknowledged it — an operation queued offline is sent on the next connection, even
// after a restart (Firebase keeps them in memory only) — and, as the SDKs do, applies an
// acknowledged operation to the local cache when its own connection drops.
extension DatabaseReference {
    /// When this client disconnects, set the data here to `value`.
    public func onDisconnectSetValue(
        _ value: DatabaseValue, andPriority priority: DatabaseValue? = nil, on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) {
        let node = try valueNode(value, priority: priority)
        try database.saveOnDisconnect(.set(node), at: self, queue: queue, completion: completion(block))
    }

    /// ``onDisconnectSetValue(_:andPriority:on:withCompletionBlock:)`` that waits until the
    /// server holds it.
    public func onDisconnectSetValue(
        _ value: DatabaseValue, andPriority priority: DatabaseValue? = nil
    ) async throws(DatabaseError) {
        let node = try valueNode(value, priority: priority)
        try await awaitServer { done throws(DatabaseError) in
            try database.saveOnDisconnect(.set(node), at: self, queue: nil, completion: done)
        }
    }

    /// When this client disconnects, write these children (paths relative to here).
    public func onDisconnectUpdateChildValues(
        _ values: DatabaseValue.Object, on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) {
        try database.saveOnDisconnect(
            .update(try childUpdates(from: values, at: path)), at: self, queue: queue, completion: completion(block))
    }

    /// ``onDisconnectUpdateChildValues(_:on:withCompletionBlock:)`` that waits until the
    /// server holds it.
    public func onDisconnectUpdateChildValues(_ values: DatabaseValue.Object) async throws(DatabaseError) {
        let children = try childUpdates(from: values, at: path)
        try await awaitServer { done throws(DatabaseError) in
            try database.saveOnDisconnect(.update(children), at: self, queue: nil, completion: done)
        }
    }

    /// When this client disconnects, remove the data here.
    public func onDisconnectRemoveValue(
        on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) {
        try database.saveOnDisconnect(.remove, at: self, queue: queue, completion: completion(block))
    }

    /// ``onDisconnectRemoveValue(on:withCompletionBlock:)`` that waits until the server holds it.
    @discardableResult
    public func onDisconnectRemoveValue() async throws(DatabaseError) -> DatabaseReference {
        try await awaitServer { done throws(DatabaseError) in
            try database.saveOnDisconnect(.remove, at: self, queue: nil, completion: done)
        }
        return self
    }

    /// Cancels every onDisconnect operation at and below this location.
    public func cancelDisconnectOperations(
        on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) {
        try database.saveOnDisconnect(.cancel, at: self, queue: queue, completion: completion(block))
    }

    /// ``cancelDisconnectOperations(on:withCompletionBlock:)`` that waits for the server.
    @discardableResult
    public func cancelDisconnectOperations() async throws(DatabaseError) -> DatabaseReference {
        try await awaitServer { done throws(DatabaseError) in
            try database.saveOnDisconnect(.cancel, at: self, queue: nil, completion: done)
        }
        return self
    }

}

extension DatabaseReference {
    /// A completion of the database's shape for a reference's handler.
    func completion(
        _ block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)?
    ) -> (@Sendable (DatabaseError?) -> Void)? {
        guard let block else { return nil }
        let ref = self
        return { error in block(error, ref) }
    }

    /// Starts an operation whose completion resumes the caller.
    func awaitServer(
        _ start: (@escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) -> Void
    ) async throws(DatabaseError) {
        let result: Result<Void, DatabaseError> = await withCheckedContinuation { continuation in
            do throws(DatabaseError) {
                try start { error in continuation.resume(returning: error.map { .failure($0) } ?? .success(())) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        try result.get()
    }
}

extension Database {
    /// Saves an onDisconnect operation in the store and hands it to the core.
    func saveOnDisconnect(
        _ action: OnDisconnectOperation.Action, at ref: DatabaseReference, queue: DispatchQueue?,
        completion: (@Sendable (DatabaseError?) -> Void)?
    ) throws(DatabaseError) {
        if let invalid = ref.invalid { throw invalid }
        if ref.path.keys.first == Database.infoKey {
            throw .invalidPath("\(ref.pathString) is under .info, which is read-only")
        }
        let result: Result<Void, DatabaseError> = writeLock.withLock { _ in
            if state.withLock({ $0.closed }) { return .failure(.closed) }
            var op: OnDisconnectOperation?
            let lsn: LSN
            do throws(DatabaseError) {
                lsn = try commitWithoutSync { (b: inout StoreBatch) throws(StoreError) in
                    op = try b.queueOnDisconnect(action, at: ref.path)
                }
            } catch {
                return .failure(error)
            }
            guard let op else { return .failure(.storage("onDisconnect not saved")) }
            if let completion {
                onDisconnectCallbacks.withLock {
                    $0[op.id] = WriteCallback(queue: queue ?? callbacks, handler: completion)
                }
            }
            handOff(after: lsn) { [self] in
                step { (core, now) in core.onDisconnect(op, now: now) }
            } failed: { [self] error in
                let callback = onDisconnectCallbacks.withLock { $0.removeValue(forKey: op.id) }
                if let callback { callback.queue.async { callback.handler(error) } }
            }
            return .success(())
        }
        try result.get()
    }
}
