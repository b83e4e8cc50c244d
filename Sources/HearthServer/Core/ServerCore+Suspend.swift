@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthWire

// Writes suspended after a failed commit (a full disk): the data goes back to what the store
// holds, reads go on from it, and writes wait — a WebSocket connection that writes is held,
// its messages queued in order within its limits, so its client keeps the write rather than
// get an error for it; REST writes are answered 503; the onDisconnect operations of
// connections that close meanwhile are kept. When writes resume, all of it runs in order.

extension ServerCore {
    /// Suspends writes: a commit failed, so the data (and the writers' watermarks) go back to
    /// what the store holds, `durable` — nothing of what the failed commit and the outputs
    /// after it applied was released, and the adapter closes the connections that waited for
    /// those outputs.
    package mutating func suspendWrites(
        _ reason: String, durable: Node, writerWatermarks durableWatermarks: [String: WriterWatermark]
    ) {
        writesSuspended = reason
        data = durable
        writerWatermarks = Self.clientWatermarks(durableWatermarks)
    }

    /// Resumes writes: the onDisconnect operations kept meanwhile run first (their connections
    /// closed before anything held was sent), then each held connection's queued messages, in
    /// connection order.
    package mutating func resumeWrites(now: Int64) -> ServerOutput {
        self.now = max(self.now, now)
        writesSuspended = nil
        var out = ServerOutput()
        let deferred = deferredOnDisconnect
        deferredOnDisconnect = []
        for (session, ops) in deferred { endSession(session, ops, into: &out) }
        for id in connections.keys.sorted(by: { $0.rawValue < $1.rawValue }) where connections[id]!.awaitingWrites {
            connections[id]!.awaitingWrites = false
            drainQueue(id, into: &out)
        }
        return out
    }
}
