import HearthModel

/// A registration on a view: who listens, for which event kinds.
struct ViewRegistration {
    let id: RegistrationID
    let kinds: ViewEventKinds
}

/// One query's view at one location (Firebase's `View`): its caches, its filter, its
/// registrations.
final class View {
    /// The location.
    let path: Path
    /// The query.
    let query: QuerySpec
    private(set) var registrations: [ViewRegistration] = []
    private let processor: ViewProcessor
    private let generator: EventGenerator
    private(set) var viewCache: ViewCache

    /// Creates a view from initial caches (raw nodes): the server cache is indexed, the event
    /// cache filtered by the query. A server cache that holds only the query's own children
    /// (`serverCacheFiltered`) stays marked filtered: a child outside it is unknown, not absent
    /// (Firebase's View resets the mark, so a deep update for another listener could complete
    /// such a child from nothing and bring it into a window).
    init(
        path: Path, query: QuerySpec, serverCache: Node, serverCacheComplete: Bool, serverCacheFiltered: Bool = false,
        eventCache: Node,
        eventCacheComplete: Bool
    ) {
        self.path = path
        self.query = query
        let filter = query.nodeFilter
        processor = ViewProcessor(filter: filter)
        generator = EventGenerator(path: path, query: query)
        let indexFilter = IndexedFilter(index: query.index)
        let empty = IndexedNode.empty(query.index)
        let server = indexFilter.updateFullNode(empty, serverCache, accumulator: nil)
        let event = filter.updateFullNode(empty, eventCache, accumulator: nil)
        viewCache = ViewCache(
            eventCache: CacheNode(indexed: event, fullyInitialized: eventCacheComplete, filtered: filter.filtersNodes),
            serverCache: CacheNode(
                indexed: server, fullyInitialized: serverCacheComplete,
                filtered: indexFilter.filtersNodes || serverCacheFiltered))
    }

    /// Whether no registration is left.
    var isEmpty: Bool { registrations.isEmpty }

    /// The server node when complete.
    var completeServerNode: Node? { viewCache.completeServerNode }

    /// The complete server node at `path` below this view, when this view knows it: a view
    /// that loads all data knows every path; a filtered one only its children in the window.
    func completeServerCache(at path: Path) -> Node? {
        guard let node = viewCache.completeServerNode else { return nil }
        if query.loadsAllData { return node.child(at: path) }
        if let front = path.front, !node.child(front).isEmpty { return node.child(at: path) }
        return nil
    }

    /// Replaces a server cache that holds only the window's children (marked filtered) by the
    /// whole complete server `node` of the location, which has the same window: no events.
    func completeFilteredServerCache(with node: Node) {
        assert(viewCache.serverCache.filtered, "only a filtered server cache is completed")
        let indexFilter = IndexedFilter(index: query.index)
        let server = indexFilter.updateFullNode(.empty(query.index), node, accumulator: nil)
        viewCache = viewCache.updatingServerCache(server, complete: true, filtered: indexFilter.filtersNodes)
    }

    /// Adds a registration and returns its initial events: `child_added` for every child in
    /// the event cache, then `value` if the event cache is complete.
    func addRegistration(_ registration: ViewRegistration) -> [ViewEvent] {
        registrations.append(registration)
        // Nothing to raise (a materializing registration): no changes to list.
        if registration.kinds.isEmpty { return [] }
        let eventCache = viewCache.eventCache
        var changes: [Change] = []
        if !eventCache.node.isLeaf {
            for (key, child) in eventCache.node.children { changes.append(.added(key, child)) }
        }
        if eventCache.fullyInitialized { changes.append(.value(eventCache.node)) }
        return generator.events(for: changes, eventCache: eventCache.indexed, registrations: [registration])
    }

    /// Removes `registration` (its first occurrence), or every registration when nil.
    func removeRegistration(_ registration: RegistrationID?) {
        guard let registration else {
            registrations.removeAll()
            return
        }
        if let i = registrations.firstIndex(where: { $0.id == registration }) { registrations.remove(at: i) }
    }

    /// Applies an operation and returns the events for every registration.
    func apply(_ operation: ViewOperation, writes: WriteTreeRef, completeServerCache: Node?) -> [ViewEvent] {
        let result = processor.apply(operation, to: viewCache, writes: writes, completeCache: completeServerCache)
        assert(
            result.viewCache.serverCache.fullyInitialized || !viewCache.serverCache.fullyInitialized,
            "once a server cache is complete it never goes back")
        viewCache = result.viewCache
        return generator.events(
            for: result.changes, eventCache: result.viewCache.eventCache.indexed, registrations: registrations)
    }
}
