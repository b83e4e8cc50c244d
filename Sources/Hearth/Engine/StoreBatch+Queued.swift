// The batch's queued operations: transactions queued (typically offline) and onDisconnect
// operations, each saved, updated and removed by id.

import HearthModel

extension StoreBatch {
    // MARK: - Transactions

    /// The queued transaction with `id`, as this batch sees it.
    public func transaction(_ id: Int64) -> QueuedTransaction? {
        if let t = transactions[id] { return t }
        return base.transactions[id]
    }

    /// Queues a transaction; returns it with its new id.
    @discardableResult
    public mutating func enqueueTransaction(
        at path: Path, functionName: String, argument: Node, localResult: Node
    ) throws(StoreError) -> QueuedTransaction {
        try StoreBatch.validate(path)
        do { try path.validateWritable() } catch { throw .invalidPath(error) }
        try StoreBatch.validate(argument, at: path)
        try StoreBatch.validate(localResult, at: path)
        let tx = QueuedTransaction(
            id: nextTransactionID, path: path, functionName: functionName, argument: argument, localResult: localResult)
        nextTransactionID += 1
        transactions[tx.id] = tx
        events.append(.transactionSaved(tx))
        return tx
    }

    /// Updates a queued transaction's local result, retry count or status.
    @discardableResult
    public mutating func updateTransaction(
        _ id: Int64, localResult: Node? = nil, retryCount: Int? = nil, status: QueuedTransaction.Status? = nil
    ) throws(StoreError) -> QueuedTransaction {
        guard var tx = transaction(id) else { throw .unknownTransaction(id: id) }
        if let localResult {
            try StoreBatch.validate(localResult, at: tx.path)
            tx.localResult = localResult
        }
        if let retryCount {
            guard retryCount >= 0, retryCount <= Int(Int32.max) else {
                throw .invalidOption("retry count must be in 0…\(Int32.max)")
            }
            tx.retryCount = retryCount
        }
        if let status { tx.status = status }
        transactions[id] = tx
        events.append(.transactionSaved(tx))
        return tx
    }

    /// Keeps a plain write's outcome until the client has handed it to the app: a decided
    /// record (`status` ``QueuedTransaction/Status/writeApplied`` or
    /// ``QueuedTransaction/Status/writeRefused``) under a new id, holding the write's id as its
    /// argument and `reason` as its local result; it leaves with
    /// ``completeTransaction(_:)``. Returns the record.
    @discardableResult
    package mutating func saveWriteOutcome(
        writeID: Int64, at path: Path, status: QueuedTransaction.Status, reason: Node
    ) throws(StoreError) -> QueuedTransaction {
        guard status.isWriteOutcome else { throw .invalidOption("\(status) is not a write's outcome") }
        try StoreBatch.validate(path)
        try StoreBatch.validate(reason, at: path)
        let tx = QueuedTransaction(
            id: nextTransactionID, path: path, functionName: "", argument: Node(.integer(exactly: writeID)),
            localResult: reason, status: status)
        nextTransactionID += 1
        transactions[tx.id] = tx
        events.append(.transactionSaved(tx))
        return tx
    }

    /// Removes a completed (or abandoned) transaction.
    public mutating func completeTransaction(_ id: Int64) throws(StoreError) {
        guard transaction(id) != nil else { throw .unknownTransaction(id: id) }
        transactions[id] = .some(nil)
        events.append(.transactionRemoved(id: id))
    }

    // MARK: - onDisconnect

    /// The onDisconnect operation with `id`, as this batch sees it.
    public func onDisconnectOperation(_ id: Int64) -> OnDisconnectOperation? {
        if let op = onDisconnect[id] { return op }
        return base.onDisconnect[id]
    }

    /// Queues an onDisconnect operation; returns it with its new id.
    @discardableResult
    public mutating func queueOnDisconnect(
        _ action: OnDisconnectOperation.Action, at path: Path
    ) throws(StoreError) -> OnDisconnectOperation {
        try StoreBatch.validate(path)
        do { try path.validateWritable() } catch { throw .invalidPath(error) }
        switch action {
        case .set(let node): try StoreBatch.validate(node, at: path)
        case .update(let children): try StoreBatch.validate(children, at: path)
        case .remove, .cancel: break
        }
        let op = OnDisconnectOperation(id: nextOnDisconnectID, path: path, action: action)
        nextOnDisconnectID += 1
        onDisconnect[op.id] = op
        events.append(.onDisconnectSaved(op))
        return op
    }

    /// Records the server's acknowledgement of an onDisconnect operation. Acknowledging a
    /// `.cancel` removes it and every earlier operation at or below its path.
    public mutating func ackOnDisconnect(_ id: Int64) throws(StoreError) {
        guard var op = onDisconnectOperation(id) else { throw .unknownOnDisconnect(id: id) }
        op.acknowledged = true
        onDisconnect[id] = op
        events.append(.onDisconnectAcked(id: id))
    }

    /// Removes an onDisconnect operation (abandoned, or executed by the server).
    public mutating func removeOnDisconnect(_ id: Int64) throws(StoreError) {
        guard onDisconnectOperation(id) != nil else { throw .unknownOnDisconnect(id: id) }
        onDisconnect[id] = .some(nil)
        events.append(.onDisconnectRemoved(id: id))
    }
}
