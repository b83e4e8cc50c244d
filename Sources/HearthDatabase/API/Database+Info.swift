import Dispatch
import Hearth
import HearthModel

/// What `.info` holds: Firebase's `connected`, `serverTimeOffset` and `authenticated`. It
/// lives in memory only (as in Firebase, where `.info` has its own sync tree), except the
/// offset, which starts from the store's last one.
struct InfoState: Sendable, Equatable {
    var connected = false
    var serverTimeOffset: Double = 0
    var authenticated = false

    var node: Node {
        Node(children: [
            (ChildKey("authenticated"), .bool(authenticated)),
            (ChildKey("connected"), .bool(connected)),
            (ChildKey("serverTimeOffset"), .number(serverTimeOffset)),
        ])
    }
}

/// An observer of a `.info` location.
struct InfoObserver: Sendable {
    let ref: DatabaseReference
    /// The path below `.info`.
    let path: Path
    let kind: DataEventType
    let queue: DispatchQueue
    let handler: @Sendable (DataSnapshot, String?) -> Void
    /// What the observer has seen.
    var last: Node
}

/// `.info` and its observers, under one lock: a change and the events it raises are one step,
/// so observers see the changes in order, none twice.
///
/// Invariant: after every call, each observer's ``InfoObserver/last`` is what ``info`` holds at
/// its path (what it has been told).
struct InfoBoard: Sendable {
    private(set) var info = InfoState()
    private var observers: [DatabaseHandle: InfoObserver] = [:]

    /// Applies `change`; returns each observer whose location changed (as it was before) with
    /// its new value.
    mutating func update(_ change: (inout InfoState) -> Void) -> [(InfoObserver, Node)] {
        change(&info)
        let root = info.node
        var fire: [(InfoObserver, Node)] = []
        for (handle, o) in observers {
            let now = root.child(at: o.path)
            if now != o.last {
                fire.append((o, now))
                observers[handle]!.last = now
            }
        }
        checkInvariants()
        return fire
    }

    /// Registers `observer` as `handle`; returns it (its `last` is what it hears first).
    mutating func add(_ observer: InfoObserver, as handle: DatabaseHandle) -> InfoObserver {
        precondition(observers[handle] == nil, "a handle names one observer")
        observers[handle] = observer
        checkInvariants()
        return observer
    }

    mutating func remove(_ handle: DatabaseHandle) {
        observers.removeValue(forKey: handle)
    }

    /// The observers of `path` (a path under `.info`, the root key included).
    func handles(at path: Path) -> [DatabaseHandle] {
        observers.filter { Path(keys: [Database.infoKey] + $0.value.path.keys) == path }.map(\.key)
    }

    private func checkInvariants() {
        assert(observers.values.allSatisfy { $0.last == info.node.child(at: $0.path) }, "observers know .info")
    }
}

extension Database {
    /// The `.info` root key.
    static let infoKey = ChildKey(".info")

    /// Changes `.info` and tells its observers what changed.
    func updateInfo(_ change: (inout InfoState) -> Void) {
        let fire = infoBoard.withLock { $0.update(change) }
        for (o, now) in fire { Database.raise(o, from: o.last, to: now) }
    }

    /// Registers an observer of a `.info` location and raises its initial events.
    func observeInfo(
        _ ref: DatabaseReference, _ kind: DataEventType, queue: DispatchQueue,
        handler: @escaping @Sendable (DataSnapshot, String?) -> Void
    ) -> DatabaseHandle {
        let relative = Path(keys: Array(ref.path.keys.dropFirst()))
        let handle = state.withLock { $0.newHandle() }
        let observer = infoBoard.withLock { board in
            board.add(
                InfoObserver(
                    ref: ref, path: relative, kind: kind, queue: queue, handler: handler,
                    last: board.info.node.child(at: relative)),
                as: handle)
        }
        Database.raise(observer, from: .empty, to: observer.last)
        return handle
    }

    /// The events one `.info` observer gets for a change from `old` to `new`: `value` always
    /// (also at first, for an absent location), child events by key.
    static func raise(_ o: InfoObserver, from old: Node, to new: Node) {
        switch o.kind {
        case .value:
            let snap = DataSnapshot(ref: o.ref, node: new, index: .priority)
            o.queue.async { o.handler(snap, nil) }
        case .childAdded, .childChanged, .childRemoved:
            var previous: String?
            for (key, child) in new.children {
                let before = old.child(key)
                let hit =
                    o.kind == .childAdded
                    ? before.isEmpty : (o.kind == .childChanged && !before.isEmpty && before != child)
                if hit {
                    let snap = DataSnapshot(ref: o.ref.child(key.string), node: child, index: .priority)
                    let prev = previous
                    o.queue.async { o.handler(snap, prev) }
                }
                previous = key.string
            }
            if o.kind == .childRemoved {
                for (key, child) in old.children where new.child(key).isEmpty {
                    let snap = DataSnapshot(ref: o.ref.child(key.string), node: child, index: .priority)
                    o.queue.async { o.handler(snap, nil) }
                }
            }
        case .childMoved:
            break  // `.info`'s children never reorder
        }
    }
}
