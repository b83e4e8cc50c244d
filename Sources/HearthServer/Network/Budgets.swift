import NIOCore
import Synchronization

/// A total of bytes that every connection draws on: a reservation that would pass the limit is
/// refused, so the total never exceeds it.
final class ByteBudget: Sendable {
    let limit: Int
    let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = max(0, limit) }

    /// Reserves `n` bytes, or returns false when they would pass the limit.
    func reserve(_ n: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard n <= limit - current else { return false }
            let (done, found) = used.compareExchange(expected: current, desired: current + n, ordering: .relaxed)
            if done { return true }
            current = found
        }
    }

    /// The buffer NIO allocates to hold `bytes` bytes, a power of two: what a reservation for
    /// them counts, so that a budget bounds memory rather than bytes.
    static func bufferSize(_ bytes: Int) -> Int {
        bytes <= 1 ? bytes : bytes > 1 << 62 ? Int.max : 1 << (Int.bitWidth - (bytes - 1).leadingZeroBitCount)
    }

    /// Returns `n` reserved bytes.
    func release(_ n: Int) {
        guard n > 0 else { return }
        used.subtract(n, ordering: .relaxed)
    }
}

/// Counts the bytes queued to every connection (written to NIO, not yet taken by the socket; the
/// capacity of their buffers, which is what they hold):
/// over ``limit`` it disconnects the connection with the most queued — the slowest reader —
/// until the total is back under, so a group of clients that do not read cannot make the
/// server buffer without bound.
final class OutboundLedger: Sendable {
    let limit: Int
    let total = Atomic<Int>(0)
    /// The highest total seen, and the connections disconnected to come back under the limit.
    let peak = Atomic<Int>(0)
    let evictions = Atomic<Int>(0)
    let members = Mutex<[ObjectIdentifier: OutboundBudget]>([:])

    init(limit: Int) { self.limit = max(0, limit) }

    func join(_ budget: OutboundBudget) { members.withLock { $0[ObjectIdentifier(budget)] = budget } }
    func leave(_ budget: OutboundBudget) { _ = members.withLock { $0.removeValue(forKey: ObjectIdentifier(budget)) } }

    func added(_ n: Int) {
        let now = total.add(n, ordering: .relaxed).newValue
        var seen = peak.load(ordering: .relaxed)
        while now > seen {
            let (done, found) = peak.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if done { break }
            seen = found
        }
        if now > limit { evictSlowest() }
    }

    func removed(_ n: Int) { total.subtract(n, ordering: .relaxed) }

    /// Disconnects the connections with the most bytes queued until the total is within the
    /// limit. A disconnected connection's bytes stop counting at once (NIO drops them as its
    /// channel closes).
    func evictSlowest() {
        let victims = members.withLock { members -> [OutboundBudget] in
            var victims: [OutboundBudget] = []
            var ranked = members.values.map { ($0, $0.queued) }.sorted { $0.1 > $1.1 }[...]
            while total.load(ordering: .relaxed) > limit, let (budget, _) = ranked.popFirst() {
                guard budget.detach() else { continue }
                members.removeValue(forKey: ObjectIdentifier(budget))
                victims.append(budget)
            }
            return victims
        }
        evictions.add(victims.count, ordering: .relaxed)
        for victim in victims { victim.channel.close(promise: nil) }
    }
}

/// The bytes queued to one connection, counted in the server's ``OutboundLedger`` too.
final class OutboundBudget: Sendable {
    struct State {
        var queued = 0
        /// The most this connection may have queued (`Int.max`: only the total applies).
        var limit: Int
        /// Disconnected by the ledger: its bytes no longer count.
        var detached = false
    }
    let channel: any Channel
    let ledger: OutboundLedger
    let state: Mutex<State>

    /// A share of `ledger` for `channel`, joined at once. With `leavesOnClose`, it leaves the
    /// ledger when the channel closes; without, its owner calls ``OutboundLedger/leave(_:)``
    /// (a handler that sees the connection close anyway spares the close future a callback).
    init(channel: any Channel, ledger: OutboundLedger, limit: Int, leavesOnClose: Bool = true) {
        self.channel = channel
        self.ledger = ledger
        self.state = Mutex(State(limit: limit))
        ledger.join(self)
        if leavesOnClose { channel.closeFuture.whenComplete { [self] _ in ledger.leave(self) } }
    }

    var queued: Int { state.withLock { $0.queued } }

    /// Sets the connection's own limit (an HTTP connection's responses have none; once it
    /// carries an event stream, the stream's applies).
    func setLimit(_ limit: Int) { state.withLock { $0.limit = limit } }

    /// Counts `n` bytes about to be written; false (and nothing counted) when that would put the
    /// connection over its own limit or it was disconnected for the total.
    func add(_ n: Int) -> Bool {
        let counted = state.withLock { s -> Bool in
            guard !s.detached, n <= s.limit - s.queued else { return false }
            s.queued += n
            return true
        }
        if counted { ledger.added(n) }
        return counted
    }

    /// `n` bytes were written (or dropped with the connection).
    func done(_ n: Int) {
        let counted = state.withLock { s -> Bool in
            s.queued -= n
            return !s.detached
        }
        if counted { ledger.removed(n) }
    }

    /// Stops counting this connection in the total; false if it already was.
    func detach() -> Bool {
        state.withLock { s -> Bool in
            guard !s.detached else { return false }
            s.detached = true
            ledger.removed(s.queued)
            return true
        }
    }

    /// Writes `data` counted against the budgets; over a limit, closes the connection instead.
    /// Returns whether it was handed to the connection (false too for a connection already
    /// closed, whose bytes are returned at once).
    @discardableResult
    func write<Part: Sendable>(_ data: Part, bytes: Int) -> Bool {
        guard add(bytes) else {
            channel.close(promise: nil)  // not reading its socket, or the slowest of too many
            return false
        }
        let handed = channel.onEventLoop { [self] in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenComplete { [self] _ in done(bytes) }
            channel.writeAndFlush(data, promise: promise)
        }
        guard handed else {
            done(bytes)  // the connection is gone: nothing will be written or report done
            return false
        }
        return true
    }
}

/// Counts the server's open TCP connections and sheds those past the cap: the listening
/// channel's handler, ahead of NIO's own accept handler, closes a new connection at once
/// instead of passing it on, so the connections already open keep their descriptors and
/// their service.
final class ConnectionGate: Sendable {
    let cap: Int
    let open = Atomic<Int>(0)
    /// Connections closed at once because the cap was reached.
    let shed = Atomic<Int>(0)

    init(cap: Int) { self.cap = cap }

    /// The listening channel's handler.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = any Channel
        typealias InboundOut = any Channel
        let gate: ConnectionGate
        init(gate: ConnectionGate) { self.gate = gate }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let child = unwrapInboundIn(data)
            let gate = self.gate
            guard gate.open.add(1, ordering: .relaxed).newValue <= gate.cap else {
                gate.open.subtract(1, ordering: .relaxed)
                gate.shed.add(1, ordering: .relaxed)
                child.close(promise: nil)
                return
            }
            child.closeFuture.whenComplete { _ in gate.open.subtract(1, ordering: .relaxed) }
            context.fireChannelRead(data)
        }
    }
}
