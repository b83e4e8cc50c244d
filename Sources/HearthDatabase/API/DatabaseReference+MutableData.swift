import Dispatch
import HearthModel

// Firebase's transactions, as its Swift API spells them: the block takes a ``MutableData``, the
// completion an `Error?`, and starting one does not throw (an invalid reference reports its
// error to the completion). They run on the same machinery as the typed form.
extension DatabaseReference {
    /// Runs a transaction (Firebase's `runTransactionBlock(_:)`): `block` gets the data here
    /// — first the local value, which is `nil` when nothing is cached — and returns
    /// `TransactionResult.success(withValue:)` or ``TransactionResult/abort()``. The result
    /// is sent as a compare-and-set; if the server's data differed, `block` runs again on it
    /// (up to 25 times). `block` runs holding no lock of the database: it may read and write
    /// the database.
    public func runTransactionBlock(_ block: @escaping @Sendable (MutableData) -> TransactionResult) {
        runTransactionBlock(block, andCompletionBlock: nil, withLocalEvents: true)
    }

    /// `runTransactionBlock(_:)` with a completion: the error (`nil` when committed or
    /// aborted by the block), whether it committed, and the data here after it.
    public func runTransactionBlock(
        _ block: @escaping @Sendable (MutableData) -> TransactionResult,
        andCompletionBlock completion: @escaping @Sendable (Error?, Bool, DataSnapshot?) -> Void
    ) {
        runTransactionBlock(block, andCompletionBlock: completion, withLocalEvents: true)
    }

    /// ``runTransactionBlock(_:andCompletionBlock:)``, choosing whether local observers see
    /// the block's results before the server commits them (Firebase's `withLocalEvents`).
    ///
    /// `true`: each result of the block shows at once, as a local write does (and a retry
    /// replaces it). `false`: the results stay hidden — observers, and reads of local data,
    /// see only the data the server sends, the committed value among it. A result still
    /// pending when the app stops is sent again at the next start as a visible write.
    public func runTransactionBlock(
        _ block: @escaping @Sendable (MutableData) -> TransactionResult,
        andCompletionBlock completion: (@Sendable (Error?, Bool, DataSnapshot?) -> Void)?,
        withLocalEvents localEvents: Bool
    ) {
        do throws(DatabaseError) { try check() } catch {
            Database.logger(database.options)("runTransactionBlock at \(pathString) did not start: \(error)")
            if let completion { database.callbacks.async { completion(error, false, nil) } }
            return
        }
        var done: (@Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void)?
        if let completion { done = { error, committed, snapshot in completion(error, committed, snapshot) } }
        start(block, completion: done, localEvents: localEvents)
    }

    /// `runTransactionBlock(_:)` that waits for the outcome: whether it committed, and the
    /// data here after it.
    /// - Throws: ``DatabaseError``: why it did not start, or the server's reason (`maxretry`,
    ///   `disconnect`, a refusal) or a refused write to the ``MutableData``.
    public func runTransactionBlock(
        _ block: @escaping @Sendable (MutableData) -> TransactionResult
    ) async throws(DatabaseError) -> (Bool, DataSnapshot) {
        try check()
        let empty = DataSnapshot(ref: self, node: .empty, index: .priority)
        let r: Result<(Bool, DataSnapshot), DatabaseError> = await withCheckedContinuation { c in
            start(block) { error, committed, snapshot in
                c.resume(returning: error.map { .failure($0) } ?? .success((committed, snapshot ?? empty)))
            }
        }
        return try r.get()
    }

    /// Starts a transaction whose block takes a ``MutableData`` on the database's machinery.
    private func start(
        _ block: @escaping @Sendable (MutableData) -> TransactionResult,
        completion: (@Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void)?, localEvents: Bool = true
    ) {
        let location = path
        var t = RunningTransaction(
            ref: self, update: { node in block(MutableData(root: MutableData.Root(node, at: location), path: .root)) },
            queue: database.callbacks, completion: completion)
        t.localEvents = localEvents
        t.listener = observe(.value) { _ in }
        database.run(t, persist: nil)
    }
}
