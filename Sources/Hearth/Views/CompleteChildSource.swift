import HearthModel

/// Where a filter finds complete children it does not hold itself (Firebase's
/// `CompleteChildSource`): the limit filter asks it for the child that refills a window.
protocol CompleteChildSource {
    /// The complete node of child `key`, when known.
    func completeChild(_ key: ChildKey) -> Node?
    /// The complete child ordered just after `child` in `index` order (just before it when
    /// `reverse`), when known.
    func childAfterChild(
        _ child: (key: ChildKey, value: Node), index: QueryIndex, reverse: Bool
    ) -> (key: ChildKey, value: Node)?
}

/// A source that knows nothing.
struct NoCompleteChildSource: CompleteChildSource {
    func completeChild(_ key: ChildKey) -> Node? { nil }
    func childAfterChild(
        _ child: (key: ChildKey, value: Node), index: QueryIndex, reverse: Bool
    ) -> (key: ChildKey, value: Node)? { nil }
}

/// The complete children a view can see: its event cache where complete, else the server data
/// (its own, or a complete server cache found above it) with the pending writes applied.
struct WriteTreeCompleteChildSource: CompleteChildSource {
    let writes: WriteTreeRef
    let viewCache: ViewCache
    /// A complete server node for the view's location from elsewhere in the tree, if any.
    let completeServerCache: Node?

    func completeChild(_ key: ChildKey) -> Node? {
        let eventCache = viewCache.eventCache
        if eventCache.isCompleteForChild(key) { return eventCache.node.child(key) }
        if let completeServerCache {
            return writes.calcCompleteChild(key, completeServerNode: completeServerCache)
        }
        return writes.calcCompleteChild(key, serverCache: viewCache.serverCache)
    }

    func childAfterChild(
        _ child: (key: ChildKey, value: Node), index: QueryIndex, reverse: Bool
    ) -> (key: ChildKey, value: Node)? {
        let post = IndexPost(child: child.key, child.value, index: index)
        if let completeServerCache {
            return writes.calcNextChild(
                completeServerData: completeServerCache, indexedServer: nil, after: post, reverse: reverse, index: index
            )
        }
        let server = viewCache.serverCache
        return writes.calcNextChild(
            completeServerData: server.fullyInitialized ? server.node : nil,
            indexedServer: server.fullyInitialized ? server.indexed : nil,
            after: post, reverse: reverse, index: index)
    }
}
