import Dispatch
@_spi(HearthInternals) import HearthWire

// Admission to the commit queue: a whole WebSocket message is handled only once it has room in
// the ``CommitBudget``. Without room its connection is parked — no longer read, its message and
// any frames already read after it kept in order — until the commit thread releases enough.

/// A connection waiting for room in the commit queue: the message that found no room, whether
/// its room has been taken since (it is next to be handled), and the frames read after it.
struct Parked: Sendable {
    var head: (text: String, weight: Int)?
    var admitted = false
    var frames: [String] = []
}

/// What one frame came to.
enum Assembled: Equatable {
    /// Part of a message, or nothing to handle now.
    case pending
    /// A whole message with room taken for it: handle it. `isFrame`: it is the frame itself
    /// (``FrameOutcome/complete(_:isFrame:)``).
    case taken(String, weight: Int, isFrame: Bool)
    /// A whole message with no room: parked, and the connection waits in line.
    case waiting
}

extension ServerRuntime {
    /// Assembles `frame` under the lock and, for a whole message, takes room for it or parks it.
    func assemble(_ id: ConnectionID, _ frame: String, now: Int64, _ s: inout State) -> Assembled {
        switch s.core.receiveFrame(id, frame, now: now) {
        case .pending(let out):
            if !out.isEmpty { s.queue.append(.output(out)) }
            return .pending
        case let .complete(text, isFrame):
            let weight = CommitBudget.weight(ofBytes: text.utf8.count)
            if s.budget.takeOrWait(weight, for: id) { return .taken(text, weight: weight, isFrame: isFrame) }
            assert(s.parked[id]?.head == nil, "a parked connection waits for one message at a time")
            s.parked[id, default: Parked()].head = (text, weight)
            return .waiting
        }
    }

    /// Decodes a whole message outside the lock and hands it to the core with its room.
    func handle(_ id: ConnectionID, _ text: String, weight: Int) {
        let decoded = ServerCore.decode(text)
        let now = clock()
        input(weight: weight) { core -> (ServerOutput, Void) in
            (core.receive(id, message: decoded, bytes: text.utf8.count, now: now), ())
        }
    }

    /// Handles the parked messages of the connections the budget let in (``State/release(_:)``),
    /// each off the caller's thread (the commit thread, or a connection's event loop).
    func resume(_ admitted: [ConnectionID]) {
        for id in admitted { DispatchQueue.global().async { [self] in self.drainParked(id) } }
    }

    /// Handles an admitted connection's parked message, then the frames read after it, in order,
    /// until it must wait again or has none left; then reads the connection again.
    func drainParked(_ id: ConnectionID) {
        enum Step {
            case stop
            case handle(String, weight: Int)
            case next
            case done((any ConnectionSink)?)
        }
        while true {
            let step = state.withLock { s -> Step in
                guard var p = s.parked[id], !s.stopped else { return .stop }
                if let head = p.head {
                    guard p.admitted else { return .stop }
                    (p.head, p.admitted) = (nil, false)
                    s.parked[id] = p
                    return .handle(head.text, weight: head.weight)
                }
                guard !p.frames.isEmpty else {
                    s.parked[id] = nil
                    return .done(s.deliveries[id]?.sink)
                }
                let frame = p.frames.removeFirst()
                s.parked[id] = p
                switch assemble(id, frame, now: clock(), &s) {
                case .pending: return .next
                case .waiting: return .stop
                case let .taken(text, weight, _): return .handle(text, weight: weight)
                }
            }
            switch step {
            case .stop: return
            case .next: wake.signal()
            case let .handle(text, weight): handle(id, text, weight: weight)
            case .done(let sink):
                wake.signal()
                sink?.setReading(true)
                return
            }
        }
    }

    /// Forgets a closed connection's parked input and gives back any room taken for it; returns
    /// the connections that room lets in.
    func unpark(_ id: ConnectionID, _ s: inout State) -> [ConnectionID] {
        guard let p = s.parked.removeValue(forKey: id), let head = p.head else { return [] }
        if p.admitted { return s.release(head.weight) }
        let left = s.budget.leave(id)
        assert(left, "a parked message not admitted is in line")
        return s.release(0)
    }

    /// The bytes the commit queue holds now (``CommitBudget/bytes``).
    var commitQueueBytes: Int { state.withLock { $0.budget.bytes } }
}

extension ServerRuntime.State {
    /// Queues `out` with the room `weight` its input took, or gives that room back at once when
    /// there is nothing to queue; returns the connections the room given back lets in.
    mutating func enqueue(_ out: ServerOutput, weight: Int) -> [ConnectionID] {
        if !out.isEmpty {
            queue.append(.output(out, weight: weight))
        } else if weight > 0 {
            return release(weight)
        }
        return []
    }

    /// Gives back `weight` of the commit queue's room and admits the connections first in line
    /// that now fit — in the same lock, so a connection is never out of line yet not admitted.
    mutating func release(_ weight: Int) -> [ConnectionID] {
        let admitted = budget.release(weight)
        for id in admitted {
            assert(parked[id]?.head != nil && parked[id]?.admitted == false, "admitted a connection not in line")
            parked[id]?.admitted = true
        }
        return admitted
    }
}
