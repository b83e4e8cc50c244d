import HearthModel

/// The views at one location (Firebase's `SyncPoint`), in the order they were created (which
/// is the order their events come out in).
///
/// Invariant: at most one view per query identifier.
final class SyncPoint {
    let path: Path
    private(set) var views: [View] = []

    init(path: Path) { self.path = path }

    var isEmpty: Bool { views.isEmpty }

    /// The view for exactly this query identifier.
    func view(identifier: String) -> View? {
        views.first { $0.query.identifier == identifier }
    }

    /// The first view that loads all data (a "complete" view), if any.
    var completeView: View? { views.first { $0.query.loadsAllData } }

    var hasCompleteView: Bool { completeView != nil }

    /// The views of queries that do not load all data.
    var queryViews: [View] { views.filter { !$0.query.loadsAllData } }

    /// The view serving `query`: any complete view for a query that loads all data, else the
    /// query's own view.
    func viewForQuery(_ query: QuerySpec) -> View? {
        query.loadsAllData ? completeView : view(identifier: query.identifier)
    }

    /// A complete server node at `relative` below this location known to some view here.
    func completeServerCache(at relative: Path) -> Node? {
        for view in views {
            if let node = view.completeServerCache(at: relative) { return node }
        }
        return nil
    }

    /// Applies an operation to the one view it is tagged for, or to every view.
    ///
    /// `completeServerCache` is complete server data for this location read before the
    /// operation (from a view here or above), or nil. Filtered views may refill their windows
    /// from it, so they get it with the operation's server data applied (see
    /// ``ViewOperation/applyingServerData(to:)``); views that load all data never read it for
    /// server data, so the O(log n) update is skipped when every view here loads all data.
    func apply(_ operation: ViewOperation, writes: WriteTreeRef, completeServerCache: Node?) -> [ViewEvent] {
        if let queryID = operation.source.queryID {
            guard let view = view(identifier: queryID) else { return [] }
            return view.apply(operation, writes: writes, completeServerCache: completeServerCache)
        }
        var completeServerCache = completeServerCache
        if let node = completeServerCache, views.contains(where: { !$0.query.loadsAllData }) {
            completeServerCache = operation.applyingServerData(to: node)
        }
        var events: [ViewEvent] = []
        for view in views {
            events += view.apply(operation, writes: writes, completeServerCache: completeServerCache)
        }
        return events
    }

    /// The view for `query`, creating it (not yet stored) from the given server cache and the
    /// pending writes when it does not exist (`serverCacheFiltered`: the cache holds only the
    /// query's own children, see ``ServerCacheSource/serverCacheIsFiltered(at:query:)``).
    func viewCreatingIfNeeded(
        for query: QuerySpec, writes: WriteTreeRef, serverCache: Node, serverCacheComplete: Bool,
        serverCacheFiltered: Bool = false
    ) -> (view: View, created: Bool) {
        if let existing = view(identifier: query.identifier) { return (existing, false) }
        let eventCache: Node
        let eventCacheComplete: Bool
        if let complete = writes.calcCompleteEventCache(serverCacheComplete ? serverCache : nil) {
            eventCache = complete
            eventCacheComplete = true
        } else if !serverCache.isLeaf {
            eventCache = writes.calcCompleteEventChildren(serverCache)
            eventCacheComplete = false
        } else {
            eventCache = .empty
            eventCacheComplete = false
        }
        let view = View(
            path: path, query: query, serverCache: serverCache, serverCacheComplete: serverCacheComplete,
            serverCacheFiltered: serverCacheFiltered, eventCache: eventCache, eventCacheComplete: eventCacheComplete)
        return (view, true)
    }

    /// Adds a registration to the query's view (created when needed) and returns the
    /// initial events.
    func addRegistration(
        _ registration: ViewRegistration, query: QuerySpec, writes: WriteTreeRef, serverCache: Node,
        serverCacheComplete: Bool,
        serverCacheFiltered: Bool = false
    ) -> [ViewEvent] {
        let (view, created) = viewCreatingIfNeeded(
            for: query, writes: writes, serverCache: serverCache, serverCacheComplete: serverCacheComplete,
            serverCacheFiltered: serverCacheFiltered)
        if created { views.append(view) }
        return view.addRegistration(registration)
    }

    /// Removes a registration from the query's view — from every view here when `query` is the
    /// default query, as Firebase does (removing a location's listener removes its queries'
    /// registrations too). Returns the queries whose views went away (including the default
    /// query when the last complete view went away).
    func removeRegistration(_ registration: RegistrationID?, query: QuerySpec) -> [QuerySpec] {
        var removed: [QuerySpec] = []
        let hadCompleteView = hasCompleteView
        let targets = query.isDefault ? views : views.filter { $0.query.identifier == query.identifier }
        for view in targets {
            view.removeRegistration(registration)
            if view.isEmpty {
                views.removeAll { $0 === view }
                if !view.query.loadsAllData { removed.append(view.query) }
            }
        }
        if hadCompleteView && !hasCompleteView { removed.append(.default) }
        return removed
    }
}
