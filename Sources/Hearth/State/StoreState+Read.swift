import HearthModel

extension StoreState {
    /// The server cache at `path`, without pending writes.
    public func serverValue(at path: Path) -> Node {
        serverCache.child(at: path)
    }

    /// The value at `path` with every pending write applied in write-id order over the
    /// server cache, server values resolved at `now` — the reference model of the overlay,
    /// independent of the views, that tests check the store against. The store itself answers
    /// reads, queries and listeners from one overlay, the views' (``Store/value(at:)``), whose
    /// server-value estimates are taken once, when each write reaches the views.
    ///
    /// - Parameter now: the local clock in ms since the epoch; `{".sv":"timestamp"}` resolves
    ///   to `now` + ``serverTimeOffsetMs``, `{".sv":{"increment":n}}` to the current number at
    ///   its location plus n (or n when there is no number there).
    package func localValue(at path: Path, now: Int64) -> Node {
        // `.priority` is not a child but the priority of the node above it, which exists only
        // while that node is non-empty and only as a number or string. So project the owning
        // node and read the priority (and anything "below" it, always empty) from the result.
        // Overlaying writes at `x/.priority` as if it were an ordinary child returned a
        // priority for an absent `x`, and returned objects or server-value results written
        // there (or below it) that the materialized tree never holds.
        if let (owner, rest) = path.splitAtPriority {
            return localValue(at: owner, now: now).child(at: rest)
        }
        return overlayPendingWrites(on: serverCache.child(at: path), at: path, now: now)
    }

    /// `base` (the server value at `path`, which holds no `.priority` key) with every pending
    /// write applied; see ``localValue(at:now:)``.
    func overlayPendingWrites(on base: Node, at path: Path, now: Int64) -> Node {
        var value = base
        let serverNow = Double(now) + serverTimeOffsetMs
        for write in pendingWrites {
            switch write.operation {
            case .set(let node):
                value = StoreState.overlay(value, at: path, write: node, writtenAt: write.path, serverNow: serverNow)
            case .update(let children):
                for child in children {
                    value = StoreState.overlay(
                        value, at: path, write: child.node, writtenAt: write.path.appending(child.path),
                        serverNow: serverNow)
                }
            }
        }
        return value
    }

    /// Projects a write of `node` at `target` onto the value at `path`, resolving server
    /// values against what is there when `serverNow` is given.
    static func overlay(
        _ value: Node, at path: Path, write node: Node, writtenAt target: Path, serverNow: Double?
    ) -> Node {
        if let rel = target.relativePath(to: path) {
            // The write covers the whole location.
            let written = node.child(at: rel)
            return serverNow.map { written.resolvingServerValues(over: value, serverNow: $0) } ?? written
        }
        if let rel = path.relativePath(to: target) {
            // The write lands below the location.
            let written =
                serverNow.map { node.resolvingServerValues(over: value.child(at: rel), serverNow: $0) } ?? node
            return value.updating(rel, with: written)
        }
        return value
    }

    /// Whether the local data for `query` at `path` is complete (a `value` event may fire):
    /// its own tracked query is complete, or a complete default query at the path or above
    /// it, or a pending set (or a child of a pending update) covers the location.
    public func isComplete(path: Path, query: QuerySpec) -> Bool {
        // A pending set covers its path; a pending update is a set at each child's path
        // (Firebase's WriteTree stores a merge as complete overwrites at every child path), so
        // it covers each of those too: a location fully written by an offline update
        // (`update({"b": …})` at `a`, listened at `a/b`) is complete.
        for write in pendingWrites where write.touchedPaths.contains(where: { $0.contains(path) }) {
            return true
        }
        if let id = trackedByLocation[QueryLocation(path: path, query: query)], trackedQueries[id]?.complete == true {
            return true
        }
        var keys = path.keys
        while true {
            if let id = trackedByLocation[QueryLocation(path: Path(keys: keys), query: .default)],
                trackedQueries[id]?.complete == true
            {
                return true
            }
            if keys.isEmpty { return false }
            keys.removeLast()
        }
    }

    /// The tracked query at a location, if any.
    public func trackedQuery(at location: QueryLocation) -> TrackedQuery? {
        trackedByLocation[location].flatMap { trackedQueries[$0] }
    }
}

extension Path {
    /// For a path through `.priority` (`x/.priority…`): the owning node's path `x` and the rest
    /// (`.priority…`); `nil` for other paths.
    var splitAtPriority: (owner: Path, rest: Path)? {
        guard let i = keys.firstIndex(where: { $0.string == ".priority" }) else { return nil }
        return (Path(keys: Array(keys[..<i])), Path(keys: Array(keys[i...])))
    }
}

extension PendingWrite.Operation {
    /// Whether the written data holds a server value (a placeholder resolved when read).
    var containsServerValue: Bool {
        switch self {
        case .set(let node): node.containsServerValue
        case .update(let children): children.contains { $0.node.containsServerValue }
        }
    }

    /// The operation, written at `path`, with its server values resolved at `serverNow` against
    /// `existing(p)`, the value at each location `p` it writes — asked only where a server value
    /// is (``HearthModel/Node/resolvingServerValues(over:serverNow:)``).
    func resolvingServerValues(at path: Path, serverNow: Double, existing: (Path) -> Node) -> Self {
        switch self {
        case .set(let node):
            guard node.containsServerValue else { return self }
            return .set(node.resolvingServerValues(over: existing(path), serverNow: serverNow))
        case .update(let children):
            return .update(
                children.map { child in
                    guard child.node.containsServerValue else { return child }
                    let resolved = child.node.resolvingServerValues(
                        over: existing(path.appending(child.path)), serverNow: serverNow)
                    return ChildUpdate(path: child.path, node: resolved)
                })
        }
    }
}

extension PendingWrite {
    /// Whether the written data holds a server value.
    var containsServerValue: Bool { operation.containsServerValue }
}
