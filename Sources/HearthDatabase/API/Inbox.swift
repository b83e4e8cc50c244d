@_spi(HearthInternals) import HearthWire

/// The transport's reports waiting to be given to the core, counted in bytes from the moment
/// they arrive until the drain that handles them has finished.
///
/// When the count reaches ``limit``, the connection that delivered is told to stop reading;
/// once a drain brings the count back under the limit, it is told to read again. Nothing is
/// refused or dropped: the reports a transport had already read when told to stop still come
/// in, so the count may pass the limit by that much.
///
/// Invariant: ``bytes`` is the weight of the waiting reports plus that of the batch being
/// handled, and a connection is stopped only while the count is at the limit or was when it
/// was stopped and no drain has finished since.
struct Inbox: Sendable {
    /// The bytes at which the connection stops being read.
    let limit: Int
    /// The reports waiting, oldest first.
    private(set) var events: [(ConnectionID, TransportEvent)] = []
    /// The weight of ``events`` and of the batch taken and not yet handled.
    private(set) var bytes = 0
    /// The connection told to stop reading, if one is.
    private(set) var stopped: ConnectionID?

    /// What a report counts beyond a message's UTF-8 bytes.
    static let fixedCost = 64

    init(limit: Int) {
        precondition(limit > 0, "an inbox bound must be positive")
        self.limit = limit
    }

    static func weight(of event: TransportEvent) -> Int {
        if case .message(let text) = event { fixedCost + text.utf8.count } else { fixedCost }
    }

    /// Adds a report from connection `id`; returns `id` when that connection must stop reading
    /// now (the count has reached the limit and it is not stopped already).
    mutating func append(_ event: TransportEvent, from id: ConnectionID) -> ConnectionID? {
        events.append((id, event))
        bytes += Inbox.weight(of: event)
        guard bytes >= limit, stopped != id else { return nil }
        stopped = id
        return id
    }

    /// Takes every waiting report for one drain, with their weight (still counted until
    /// ``handled(_:)``).
    mutating func take() -> (events: [(ConnectionID, TransportEvent)], bytes: Int) {
        let batch = events
        events = []
        let weight = batch.reduce(0) { $0 + Inbox.weight(of: $1.1) }
        assert(weight <= bytes, "a batch weighs what the inbox counted for it")
        return (batch, weight)
    }

    /// A batch taken with ``take()`` has been handled; returns the connection to read again,
    /// if one was stopped and the count is back under the limit.
    mutating func handled(_ weight: Int) -> ConnectionID? {
        precondition(weight >= 0 && weight <= bytes, "handled more than the inbox held")
        bytes -= weight
        assert(!events.isEmpty || bytes == 0, "an empty inbox counts nothing once its batches are handled")
        guard let id = stopped, bytes < limit else { return nil }
        stopped = nil
        return id
    }
}
