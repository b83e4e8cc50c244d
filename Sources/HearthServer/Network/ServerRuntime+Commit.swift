import Dispatch
import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthWire

// The commit thread: group commit, release in order, and what a failed commit does — writes
// suspended on the data the store holds, retried until one succeeds.

extension ServerRuntime {
    /// The first retry after a failed commit (ms).
    static let firstRetryInterval: Int64 = 1_000
    /// The longest wait between retries (ms).
    static let maxRetryInterval: Int64 = 30_000

    func commitLoop() {
        while true {
            if state.withLock({ $0.retryAt != nil }) {
                _ = wake.wait(timeout: .now() + .milliseconds(250))
                retryWritesIfDue()
            } else {
                wake.wait()
            }
            // The core's data is taken with the queue, under the same lock: exactly the data
            // after the outputs taken, which the store checkpoints (an immutable tree: kept, not
            // copied).
            let (items, deliveries, stopped, data) = state.withLock {
                s -> ([Item], [ConnectionID: Delivery], Bool, Node) in
                defer { s.queue.removeAll(keepingCapacity: true) }
                return (s.queue, s.queue.isEmpty ? [:] : s.deliveries, s.stopped, s.core.data)
            }
            if !items.isEmpty {
                release(items, deliveries, data: data)
                let freed = items.reduce(0) { $0 + $1.weight }
                if freed > 0 { resume(state.withLock { $0.release(freed) }) }
            }
            if stopped && state.withLock({ $0.queue.isEmpty }) {
                done.signal()
                return
            }
        }
    }

    /// Commits every write of the batch in one store commit (`data`: the core's data after
    /// them), then delivers in order.
    /// The onDisconnect journal's changes follow the store commit (a session ends only after
    /// its operations' writes and marker are durable), and both precede the messages.
    func release(_ items: [Item], _ deliveries: [ConnectionID: Delivery], data: Node) {
        let (removals, pendingEnded) = state.withLock { s in
            defer { (s.markersToRemove, s.pendingEnded) = ([], []) }
            return (s.markersToRemove, s.pendingEnded)
        }
        var writes = items.flatMap(\.output.writes)
        if !removals.isEmpty { writes.append(.writerWatermarksRemoved(removals)) }
        if !writes.isEmpty {
            do {
                guard let store = store.withLock({ $0 }) else { throw StoreError.closed }
                try store.commit(data: data) { (batch: inout AuthoritativeBatch) throws(StoreError) in
                    for w in writes { try batch.apply(w) }
                }
                commits.add(1, ordering: .relaxed)
                committedWrites.add(writes.count, ordering: .relaxed)
                state.withLock { $0.retryInterval = 0 }
            } catch {
                state.withLock { s in
                    s.markersToRemove += removals
                    s.pendingEnded += pendingEnded
                }
                suspendWrites("the database could not be written: \(error)", dropping: items)
                return
            }
        }
        let changes = pendingEnded.map(OnDisconnectChange.ended) + items.flatMap(\.output.onDisconnect)
        do { try journal.append(changes) } catch {
            suspendWrites("the onDisconnect journal could not be written: \(error)", dropping: items)
            return
        }
        let ended = changes.compactMap { c -> String? in
            if case .ended(let session) = c { return ServerCore.onDisconnectMarker(session) }
            return nil
        }
        if !ended.isEmpty { state.withLock { $0.markersToRemove += ended } }
        var touched = Set<ConnectionID>()
        for item in items {
            let out = item.output
            for (id, message) in out.messages {
                deliveries[id]?.send(message)
                touched.insert(id)
            }
            for id in out.closes { deliveries[id]?.close() }
            for check in out.tokenChecks {
                Task { [self] in
                    let result =
                        check.isAppCheck
                        ? await appCheckVerifier?.check(check.credential, now: clock()) ?? .invalid("no App Check key")
                        : await verifier.check(check.credential, now: clock())
                    let now = clock()
                    input { $0.tokenChecked(check.ticket, result, now: now) }
                }
            }
            if case .rest(_, let reply, let respond, _) = item {
                DispatchQueue.global().async { respond(reply.render()) }
            }
        }
        enforceWaitingLimits(touched, deliveries)
    }

    /// Aborts a connection with more waiting than its limit, then — while the total is over its
    /// limit — the connection with the most waiting.
    func enforceWaitingLimits(_ touched: Set<ConnectionID>, _ deliveries: [ConnectionID: Delivery]) {
        let (perConnection, total) = state.withLock {
            ($0.core.configuration.maxWaitingBytesPerConnection, $0.core.configuration.maxWaitingBytesTotal)
        }
        for id in touched {
            if let d = deliveries[id], d.waiting.load(ordering: .relaxed) > perConnection { d.abort() }
        }
        var aborted = Set<ConnectionID>()
        while waitingTotal.value.load(ordering: .relaxed) > total {
            let live = deliveries.filter { !aborted.contains($0.key) }
            guard
                let (id, d) = live.max(by: {
                    $0.value.waiting.load(ordering: .relaxed) < $1.value.waiting.load(ordering: .relaxed)
                }),
                d.waiting.load(ordering: .relaxed) > 0
            else { break }
            d.abort()
            aborted.insert(id)
        }
    }

    /// A commit failed. Nothing of `items` or of the outputs queued after them is released:
    /// their connections are closed (and REST requests answered 503), the store is reopened to
    /// learn what it holds, and the core goes back to it with writes suspended.
    func suspendWrites(_ reason: String, dropping items: [Item]) {
        FileHandle.standardError.write(
            Data("hearth serve: writes suspended: \(reason); reads go on, writes are retried\n".utf8))
        let old = store.withLock { s -> AuthoritativeStore? in
            defer { s = nil }
            return s
        }
        try? old?.close()
        var durable: (data: Node, marks: [String: WriterWatermark])?
        if let reopen {
            if let writable = try? reopen(false) {
                durable = (writable.data, writable.store.writerWatermarks())
                store.withLock { $0 = writable.store }
            } else if let readable = try? reopen(true) {
                durable = (readable.data, readable.store.writerWatermarks())
                try? readable.store.close()
            }
        }
        var refused: [@Sendable (RESTResponse) -> Void] = []
        var doomed: [Delivery] = []
        var admitted: [ConnectionID] = []
        state.withLock { s in
            let dropped = items + s.queue
            // The batch's own room is given back by the commit loop; the queued outputs' here.
            admitted = s.release(s.queue.reduce(0) { $0 + $1.weight })
            s.queue.removeAll()
            for case .rest(_, _, let respond, _) in dropped { refused.append(respond) }
            guard let durable else {
                // Nothing to serve reads from: stop, as a server that cannot read its store.
                s.failure = reason
                s.stopped = true
                doomed = Array(s.deliveries.values)
                return
            }
            var affected = Set<ConnectionID>()
            for item in dropped {
                let out = item.output
                affected.formUnion(out.messages.map(\.0))
                affected.formUnion(out.closes)
                for check in out.tokenChecks {
                    if let id = s.core.pendingChecks[check.ticket]?.0 ?? s.core.pendingAppChecks[check.ticket]?.0 {
                        affected.insert(id)
                    }
                }
            }
            s.core.suspendWrites(reason, durable: durable.data, writerWatermarks: durable.marks)
            requeueEnded(dropped, durableMarks: durable.marks, &s)
            let now = clock()
            for id in affected.sorted(by: { $0.rawValue < $1.rawValue }) {
                if let d = s.deliveries.removeValue(forKey: id) { doomed.append(d) }
                let out = s.core.disconnect(id, now: now)
                if !out.isEmpty { s.queue.append(.output(out)) }
            }
            s.retryInterval = min(
                max(2 * s.retryInterval, ServerRuntime.firstRetryInterval), ServerRuntime.maxRetryInterval)
            s.retryAt = now + s.retryInterval
        }
        for d in doomed { d.abort() }
        resume(admitted)
        for respond in refused { respond(.error(503, "writes are suspended: \(reason); try again later")) }
        wake.signal()
    }

    /// When writes are suspended and their retry is due: a store that takes writes (reopened
    /// if needed), then the core resumes — the held writes go to the next commit, which
    /// suspends them again if it fails.
    func retryWritesIfDue() {
        let now = clock()
        guard state.withLock({ s in s.retryAt.map { now >= $0 } ?? false }) else { return }
        if store.withLock({ $0 }) == nil {
            guard let reopen, let writable = try? reopen(false) else {
                state.withLock { s in
                    s.retryInterval = min(2 * s.retryInterval, ServerRuntime.maxRetryInterval)
                    s.retryAt = now + s.retryInterval
                }
                return
            }
            // The data it opened with is the core's already (writes were suspended on it).
            store.withLock { $0 = writable.store }
        }
        state.withLock { s in
            guard !s.stopped else { return }
            s.retryAt = nil
            let out = s.core.resumeWrites(now: now)
            if !out.isEmpty { s.queue.append(.output(out)) }
        }
        FileHandle.standardError.write(Data("hearth serve: writes resumed\n".utf8))
    }
}
