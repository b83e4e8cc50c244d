import HearthModel

/// Turns a view's raw changes into ``ViewEvent``s (Firebase's `EventGenerator`).
///
/// A `child_changed` whose indexed value changed also yields a `child_moved`. Events come out
/// by type — `child_removed`, `child_added`, `child_moved`, `child_changed`, `value` — each type
/// sorted by the query's index order; for each change every registration that wants the
/// type gets one event. The previous-child key of added, moved and changed events is the
/// child's predecessor in the **new** event cache, in index order.
struct EventGenerator {
    let path: Path
    let query: QuerySpec

    /// Orders types as Firebase raises them.
    private static let typeOrder: [Change.Kind] = [.childRemoved, .childAdded, .childMoved, .childChanged, .value]

    func events(
        for changes: [Change], eventCache: IndexedNode, registrations: [ViewRegistration]
    ) -> [ViewEvent] {
        // Only the types some registration wants are sorted and located: a registration that
        // wants none (a view the store keeps materialized, ViewHost.materialize) costs nothing
        // here, where sorting a whole location's `child_added` changes and finding each one's
        // predecessor would take a quarter of rebuilding every view at open.
        let wantedKinds = registrations.reduce(into: ViewEventKinds()) { $0.formUnion($1.kinds) }
        guard !wantedKinds.isEmpty, !changes.isEmpty else { return [] }
        let index = query.index
        var moves: [Change] = []
        if wantedKinds.contains(.childMoved) {
            for change in changes where change.kind == .childChanged {
                if let key = change.childKey, let old = change.oldNode,
                    index.indexedValueChanged(from: old, to: change.node)
                {
                    moves.append(.moved(key, change.node))
                }
            }
        }
        var out: [ViewEvent] = []
        for kind in Self.typeOrder where wantedKinds.contains(ViewEventKinds(kind.eventKind)) {
            var ofKind = (kind == .childMoved ? moves : changes).filter { $0.kind == kind }
            if ofKind.isEmpty { continue }
            if kind != .value {
                ofKind.sort { a, b in
                    guard let ka = a.childKey, let kb = b.childKey else { return false }
                    return index.compare((ka, a.node), (kb, b.node)) < 0
                }
            }
            let eventKind = kind.eventKind
            let wanted = ViewEventKinds(eventKind)
            for change in ofKind {
                var previous: ChildKey?
                if kind != .value && kind != .childRemoved, let key = change.childKey {
                    previous = eventCache.predecessorKey(of: key, change.node)
                }
                for registration in registrations where registration.kinds.contains(wanted) {
                    out.append(
                        ViewEvent(
                            kind: eventKind, path: path, query: query, registration: registration.id,
                            childKey: change.childKey, previousChildKey: previous, node: change.node))
                }
            }
        }
        return out
    }
}

extension Change.Kind {
    var eventKind: ViewEvent.Kind {
        switch self {
        case .childAdded: .childAdded
        case .childRemoved: .childRemoved
        case .childChanged: .childChanged
        case .childMoved: .childMoved
        case .value: .value
        }
    }
}
