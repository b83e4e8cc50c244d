import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

// The writes and onDisconnect operations the app queues: kept until answered, held while offline
// or while writes are paused for an expired token, and sent in id order on each connection.
extension ClientCore {
    /// A write the runtime has saved in the store: sent now when connected, else on the next
    /// connection (and on every one after until answered).
    /// `writer` is the writer id it was saved under (`StoreBatch.saveWrite(_:at:writer:)`;
    /// `nil`: never stamped).
    /// A transaction's write carries a `condition`: sent as a compare-and-set; if its
    /// connection drops after it was sent, the core forgets it and reports
    /// ``ClientEvent/conditionalWriteInterrupted(id:)`` (Firebase aborts such transactions
    /// with `disconnect`), stamped or not (see `dropConnectionState`).
    package mutating func write(
        _ write: PendingWrite, writer: String? = nil, condition: WriteCondition? = nil, now: Int64
    ) -> ClientOutput {
        var out = ClientOutput()
        assert(write.id > newestWriteID, "write ids increase")
        newestWriteID = max(newestWriteID, write.id)
        writes[write.id] = write
        writerIDs[write.id] = writer
        if let condition { conditions[write.id] = condition }
        flush(now: now, into: &out)
        return out
    }

    /// Withdraws a write that has not been sent on the current connection (a transaction
    /// aborted by a later set, Firebase's `repoAbortTransactions`): it is reverted in the
    /// store. Returns false, and does nothing, when it was sent (its answer will come) or is
    /// unknown.
    package mutating func withdrawUnsentWrite(_ id: Int64, now: Int64) -> (ClientOutput, Bool) {
        var out = ClientOutput()
        guard writes[id] != nil, !sentWrites.contains(id) else { return (out, false) }
        writes[id] = nil
        writerIDs[id] = nil
        conditions[id] = nil
        out.commits.append(.revertWrite(id))
        return (out, true)
    }

    /// An onDisconnect operation the runtime has saved in the store: sent now when connected
    /// (and writes are not held), else on the next connection; answered by a
    /// ``ClientEvent/onDisconnectCompleted(id:error:)``.
    package mutating func onDisconnect(_ op: OnDisconnectOperation, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        onDisconnects[op.id] = op
        flush(now: now, into: &out)
        return out
    }

    /// Sends, in id order, the writes and then the onDisconnect operations not yet sent on
    /// this connection — unless not connected, or writes are held for an expired token.
    /// Holding all of them while any is held keeps each kind in order.
    mutating func flush(now: Int64, into out: inout ClientOutput) {
        checkPause(now: now, into: &out)
        guard isConnected, !writesPaused(now: now) else { return }
        for id in writes.keys.sorted() where !sentWrites.contains(id) { sendWrite(writes[id]!, now: now, into: &out) }
        for id in onDisconnects.keys.sorted() where !sentOnDisconnects.contains(id) && !onDisconnects[id]!.acknowledged
        {
            sendOnDisconnect(onDisconnects[id]!, now: now, into: &out)
        }
    }

    /// Reports the moment writes become held (the token expired) and asks for a fresh token
    /// when connected.
    mutating func checkPause(now: Int64, into out: inout ClientOutput) {
        guard writesPaused(now: now), !pausedReported else { return }
        pausedReported = true
        out.events.append(.writesPaused(true))
        if isConnected && configuration.usesTokens && !refreshingToken {
            refreshingToken = true
            requestToken(force: true, into: &out)
        }
    }

    // MARK: - Sending

    mutating func sendWrite(_ write: PendingWrite, now: Int64, into out: inout ClientOutput) {
        let request: ClientRequest
        let condition = conditions[write.id]
        if let t = condition?.transactionID { out.commits.append(.transactionSent(t)) }
        // The server's deduplication relies on each writer's ids going out in increasing order
        // on every connection (ServerCore+ExactlyOnce.swift): flush sends in id order, and a
        // new write's id is above every earlier one's — so the writes of each of the writer
        // ids among them go out in increasing order too.
        assert(write.id > lastSentWriteID, "write \(write.id) sent after write \(lastSentWriteID) on one connection")
        lastSentWriteID = max(lastSentWriteID, write.id)
        let stamp = stampsWrites ? writerIDs[write.id].map { WriteStamp(writer: $0, id: write.id) } : nil
        switch write.operation {
        case .set(let node):
            request = .put(path: write.path, data: node.exportJSON(), hash: condition?.hash, stamp: stamp)
        case .update(let children):
            request = .merge(path: write.path, data: children.map { ($0.path, $0.node.exportJSON()) }, stamp: stamp)
        }
        let inserted = sentWrites.insert(write.id).inserted
        assert(inserted, "a write is sent once per connection")
        send(request, as: .write(write.id), now: now, into: &out)
    }

    mutating func sendOnDisconnect(_ op: OnDisconnectOperation, now: Int64, into out: inout ClientOutput) {
        let request: ClientRequest
        switch op.action {
        case .set(let node): request = .onDisconnectPut(path: op.path, data: node.exportJSON())
        case .update(let children):
            request = .onDisconnectMerge(path: op.path, data: children.map { ($0.path, $0.node.exportJSON()) })
        case .remove: request = .onDisconnectPut(path: op.path, data: .null)
        case .cancel: request = .onDisconnectCancel(path: op.path)
        }
        let inserted = sentOnDisconnects.insert(op.id).inserted
        assert(inserted, "an onDisconnect operation is sent once per connection")
        send(request, as: .onDisconnect(op.id), now: now, into: &out)
    }
}
