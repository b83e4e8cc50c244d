@_spi(HearthInternals) import HearthWire

/// The bound on the runtime's commit queue: the bytes of the protocol messages and REST requests
/// taken from the network whose outputs the commit thread has not yet made durable and released.
///
/// A message is taken only when its weight fits under ``limit`` (or nothing is queued, so one
/// message larger than the limit still goes through alone) and no connection is waiting before
/// it; otherwise its connection joins a first-come, first-served line and stops being read.
/// When the commit thread releases a batch, the connections first in line whose messages now
/// fit are given their room at once, in line order, so a waiting connection is passed by no one
/// who came later.
///
/// Invariant: ``bytes`` never exceeds ``limit``, except by one message taken into an empty queue.
struct CommitBudget: Sendable {
    /// The most bytes queued at once.
    let limit: Int
    /// The bytes taken and not yet released.
    private(set) var bytes = 0
    /// The largest single weight taken into an empty queue while it exceeded ``limit``.
    private var oversize = 0
    /// The connections waiting for room, first in line first, with the weight each waits to take.
    private(set) var line: [(id: ConnectionID, weight: Int)] = []

    /// What every message or request counts beyond its UTF-8 bytes: the output and the closures
    /// it holds.
    static let fixedCost = 256

    init(limit: Int) {
        precondition(limit > 0, "a commit queue bound must be positive")
        self.limit = limit
    }

    /// The weight of a message or request body of `bytes` UTF-8 bytes.
    static func weight(ofBytes bytes: Int) -> Int { fixedCost + bytes }

    /// Whether `weight` fits now: nothing waits before it and it fits under the limit, or the
    /// queue is empty.
    func fits(_ weight: Int) -> Bool { line.isEmpty && room(for: weight) }

    private func room(for weight: Int) -> Bool { bytes == 0 || weight <= limit - bytes }

    /// Takes `weight` if it fits (true); otherwise leaves the budget as it is (false).
    mutating func take(_ weight: Int) -> Bool {
        precondition(weight > 0, "a taken message weighs something")
        guard fits(weight) else { return false }
        add(weight)
        return true
    }

    /// Takes `weight` now, or puts `id` at the end of the line to take it later (false).
    mutating func takeOrWait(_ weight: Int, for id: ConnectionID) -> Bool {
        if take(weight) { return true }
        assert(!line.contains { $0.id == id }, "a connection waits in line once")
        line.append((id, weight))
        return false
    }

    private mutating func add(_ weight: Int) {
        if bytes == 0 && weight > limit { oversize = weight }
        bytes += weight
        assert(bytes <= max(limit, oversize), "the commit queue passed its bound")
    }

    /// Gives back `weight` (released by the commit thread, dropped, or never used), then takes
    /// room for the connections first in line that now fit; returns them, in line order.
    mutating func release(_ weight: Int) -> [ConnectionID] {
        precondition(weight >= 0 && weight <= bytes, "released more than was taken")
        bytes -= weight
        if bytes == 0 { oversize = 0 }
        var admitted: [ConnectionID] = []
        while let first = line.first, room(for: first.weight) {
            line.removeFirst()
            add(first.weight)
            admitted.append(first.id)
        }
        return admitted
    }

    /// Takes `id` out of the line (its connection closed); true if it was waiting.
    mutating func leave(_ id: ConnectionID) -> Bool {
        guard let i = line.firstIndex(where: { $0.id == id }) else { return false }
        line.remove(at: i)
        return true
    }
}
