import HearthModel

/// A view's two caches (Firebase's `ViewCache`): the event cache — what the listeners have
/// been told, i.e. server data with the visible pending writes layered on top and the query's
/// filter applied — and the server cache — the server's data alone.
struct ViewCache {
    /// What the listeners see.
    let eventCache: CacheNode
    /// What the server sent.
    let serverCache: CacheNode

    /// The caches with a new event cache.
    func updatingEventCache(_ node: IndexedNode, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(
            eventCache: CacheNode(indexed: node, fullyInitialized: complete, filtered: filtered),
            serverCache: serverCache)
    }

    /// The caches with a new server cache.
    func updatingServerCache(_ node: IndexedNode, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(
            eventCache: eventCache,
            serverCache: CacheNode(indexed: node, fullyInitialized: complete, filtered: filtered))
    }

    /// The event node when the event cache is complete.
    var completeEventNode: Node? { eventCache.fullyInitialized ? eventCache.node : nil }

    /// The server node when the server cache is complete.
    var completeServerNode: Node? { serverCache.fullyInitialized ? serverCache.node : nil }
}
