import HearthModel

/// Applies operations to a view's caches and collects the resulting changes (Firebase's
/// `ViewProcessor`).
///
/// The server cache takes server data (filtered when it arrived tagged or the cache is a
/// window already); the event cache is recomputed from it with the pending writes on top,
/// except where a pending write shadows the change. User writes change the event cache only.
/// Acks and reverts re-apply the server cache for the written paths as if it had just
/// arrived, which yields the compensating events.
struct ViewProcessor {
    let filter: any NodeFilter

    /// The result of one operation.
    struct Result {
        let viewCache: ViewCache
        let changes: [Change]
    }

    func apply(_ operation: ViewOperation, to old: ViewCache, writes: WriteTreeRef, completeCache: Node?) -> Result {
        let accumulator = ChildChangeAccumulator()
        let new: ViewCache
        switch operation {
        case let .overwrite(source, path, node):
            if source.fromUser {
                new = applyUserOverwrite(old, path, node, writes, completeCache, accumulator)
            } else {
                // Filter server data that arrived tagged, or that lands below the root of a
                // cache that is a window already (an update at the root may unfilter it).
                let filterServerNode = source.tagged || (old.serverCache.filtered && !path.isRoot)
                new = applyServerOverwrite(old, path, node, writes, completeCache, filterServerNode, accumulator)
            }
        case let .merge(source, path, children):
            if source.fromUser {
                new = applyUserMerge(old, path, children, writes, completeCache, accumulator)
            } else {
                let filterServerNode = source.tagged || old.serverCache.filtered
                new = applyServerMerge(old, path, children, writes, completeCache, filterServerNode, accumulator)
            }
        case let .ackUserWrite(path, affected, revert):
            if revert {
                new = revertUserWrite(old, path, writes, completeCache, accumulator)
            } else {
                new = ackUserWrite(old, path, affected, writes, completeCache, accumulator)
            }
        case .listenComplete(_, let path):
            new = listenComplete(old, path, writes, accumulator)
        }
        var changes = accumulator.netChanges
        if let value = valueChange(old: old, new: new, changes: changes) { changes.append(value) }
        return Result(viewCache: new, changes: changes)
    }

    /// A `value` change when the event cache is complete and something visible changed: a
    /// child, its completeness, a leaf's or the root priority's value.
    private func valueChange(old: ViewCache, new: ViewCache, changes: [Change]) -> Change? {
        let eventSnap = new.eventCache
        guard eventSnap.fullyInitialized else { return nil }
        let node = eventSnap.node
        let isLeafOrEmpty = node.isLeaf || node.isEmpty
        let oldComplete = old.completeEventNode
        let changed =
            !changes.isEmpty
            || !old.eventCache.fullyInitialized
            || (isLeafOrEmpty && node != (oldComplete ?? .empty))
            || node.priority != oldComplete?.priority
        return changed ? .value(node) : nil
    }

    // MARK: - Server data

    private func generateEventCacheAfterServerEvent(
        _ viewCache: ViewCache, _ changePath: Path, _ writes: WriteTreeRef,
        _ source: any CompleteChildSource, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        let oldEventSnap = viewCache.eventCache
        if writes.shadowingWrite(changePath) != nil {
            // A pending write shadows the change: the listeners keep seeing the write.
            return viewCache
        }
        let newEventCache: IndexedNode
        // A change below a location the listeners see as a leaf cannot be applied child by
        // child: removing a child of a leaf keeps the leaf (Firebase's LeafNode.updateChild), so
        // an event cache of `5` over a server cache that became `{}` through `{b: …}` would stay
        // `5` for good. Recompute it whole, as for a change at the location itself. (Firebase's
        // ViewProcessor has this divergence; found by the sync simulator, seed 3026.)
        let belowLeaf = !changePath.isRoot && oldEventSnap.node.isLeaf && viewCache.completeServerNode != nil
        if let childKey = changePath.front, !belowLeaf {
            if childKey.string == ".priority" {
                let oldEventNode = oldEventSnap.indexed
                if let updatedPriority = writes.calcEventCacheAfterServerOverwrite(
                    changePath, existingServerSnap: viewCache.serverCache.node)
                {
                    newEventCache = filter.updatePriority(oldEventNode, updatedPriority)
                } else {
                    newEventCache = oldEventNode
                }
            } else {
                let childChangePath = changePath.popFront
                let newEventChild: Node?
                if oldEventSnap.isCompleteForChild(childKey) {
                    let old = oldEventSnap.node.child(childKey)
                    if Self.leafAbove(childChangePath, in: old),
                        let complete = writes.calcCompleteChild(childKey, serverCache: viewCache.serverCache)
                    {
                        // The same trap one level down: the listeners see a leaf above the
                        // changed location (writes under a leaf, then a null there, layered by
                        // the overlay), and updating the leaf's child keeps the leaf. The child
                        // is recomputed whole from the server data and the writes. (Found by the
                        // sync simulator, seed 2092: `d = 2`, `d/x = 5`, `d/x = null`, acked
                        // between the server's pushes, left `d: 2` in the view for good.)
                        newEventChild = complete
                    } else if let update = writes.calcEventCacheAfterServerOverwrite(
                        changePath, existingServerSnap: viewCache.serverCache.node)
                    {
                        newEventChild = old.updating(childChangePath, with: update)
                    } else {
                        newEventChild = old
                    }
                } else {
                    newEventChild = writes.calcCompleteChild(childKey, serverCache: viewCache.serverCache)
                }
                if let newEventChild {
                    newEventCache = filter.updateChild(
                        oldEventSnap.indexed, childKey, newEventChild, affectedPath: childChangePath,
                        source: source, accumulator: accumulator)
                } else {
                    newEventCache = oldEventSnap.indexed
                }
            }
        } else {
            // The whole location changed: the server cache is complete now.
            let completeServer = viewCache.completeServerNode ?? .empty
            let newNode: Node
            if viewCache.serverCache.filtered {
                // Only complete children may take writes: deep writes into a window's
                // children cannot be known complete.
                let completeChildren = completeServer.isLeaf ? Node.empty : completeServer
                newNode = writes.calcCompleteEventChildren(completeChildren)
            } else {
                newNode = writes.calcCompleteEventCache(completeServer) ?? .empty
            }
            newEventCache = filter.updateFullNode(oldEventSnap.indexed, newNode, accumulator: accumulator)
        }
        return viewCache.updatingEventCache(
            newEventCache, complete: oldEventSnap.fullyInitialized || changePath.isRoot, filtered: filter.filtersNodes)
    }

    /// Whether `node` is a leaf (not empty) at a location strictly above `path` (`node` itself
    /// included when `path` is not the root); a priority change on a leaf does not count.
    static func leafAbove(_ path: Path, in node: Node) -> Bool {
        guard let last = path.keys.last, last.string != ".priority" else { return false }
        var n = node
        for key in path.keys.dropLast() {
            if n.isLeaf && !n.isEmpty { return true }
            n = n.child(key)
        }
        return n.isLeaf && !n.isEmpty
    }

    private func applyServerOverwrite(
        _ old: ViewCache, _ changePath: Path, _ changedSnap: Node, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ filterServerNode: Bool, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        let oldServerSnap = old.serverCache
        let serverFilter: any NodeFilter = filterServerNode ? filter : filter.indexedFilter
        let newServerCache: IndexedNode
        if changePath.isRoot {
            newServerCache = serverFilter.updateFullNode(oldServerSnap.indexed, changedSnap, accumulator: nil)
        } else if serverFilter.filtersNodes && !oldServerSnap.filtered {
            // Filtering a cache that was not filtered yet: simulate a full update.
            let newServerNode = oldServerSnap.node.updating(changePath, with: changedSnap)
            newServerCache = serverFilter.updateFullNode(oldServerSnap.indexed, newServerNode, accumulator: nil)
        } else {
            guard let childKey = changePath.front else { return old }
            if !oldServerSnap.isCompleteForPath(changePath) && changePath.depth > 1 {
                // Don't update incomplete nodes with updates intended for other listeners.
                return old
            }
            let childChangePath = changePath.popFront
            let newChildNode = oldServerSnap.node.child(childKey).updating(childChangePath, with: changedSnap)
            if childKey.string == ".priority" {
                newServerCache = serverFilter.updatePriority(oldServerSnap.indexed, newChildNode)
            } else {
                newServerCache = serverFilter.updateChild(
                    oldServerSnap.indexed, childKey, newChildNode, affectedPath: childChangePath,
                    source: NoCompleteChildSource(), accumulator: nil)
            }
        }
        let newViewCache = old.updatingServerCache(
            newServerCache, complete: oldServerSnap.fullyInitialized || changePath.isRoot,
            filtered: serverFilter.filtersNodes)
        let source = WriteTreeCompleteChildSource(
            writes: writes, viewCache: newViewCache, completeServerCache: completeCache)
        return generateEventCacheAfterServerEvent(newViewCache, changePath, writes, source, accumulator)
    }

    private func applyServerMerge(
        _ viewCache: ViewCache, _ path: Path, _ changedChildren: PathTrie<Node>, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ filterServerNode: Bool, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        // Without a cache yet the merge was meant for an earlier listen at this location:
        // wait for the complete data that follows.
        if viewCache.serverCache.node.isEmpty && !viewCache.serverCache.fullyInitialized {
            return viewCache
        }
        var current = viewCache
        let mergeTree = path.isRoot ? changedChildren : PathTrie<Node>().settingTree(path, changedChildren)
        let serverNode = viewCache.serverCache.node
        let children = mergeTree.sortedChildren
        // Children the cache holds first: in a limit window they may make room for others.
        for (key, childTree) in children where serverNode.hasChild(key) {
            let newChild = Self.applyMerge(childTree, to: serverNode.child(key))
            current = applyServerOverwrite(
                current, Path(keys: [key]), newChild, writes, completeCache, filterServerNode, accumulator)
        }
        for (key, childTree) in children where !serverNode.hasChild(key) {
            let isUnknownDeepMerge = !viewCache.serverCache.isCompleteForChild(key) && childTree.value == nil
            if isUnknownDeepMerge { continue }
            let newChild = Self.applyMerge(childTree, to: serverNode.child(key))
            current = applyServerOverwrite(
                current, Path(keys: [key]), newChild, writes, completeCache, filterServerNode, accumulator)
        }
        return current
    }

    private static func applyMerge(_ merge: PathTrie<Node>, to node: Node) -> Node {
        var node = node
        merge.forEach { path, value in node = node.updating(path, with: value) }
        return node
    }

    private func listenComplete(
        _ viewCache: ViewCache, _ path: Path, _ writes: WriteTreeRef, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        let oldServer = viewCache.serverCache
        let newViewCache = viewCache.updatingServerCache(
            oldServer.indexed, complete: oldServer.fullyInitialized || path.isRoot, filtered: oldServer.filtered)
        return generateEventCacheAfterServerEvent(newViewCache, path, writes, NoCompleteChildSource(), accumulator)
    }

    // MARK: - User writes

    private func applyUserOverwrite(
        _ old: ViewCache, _ changePath: Path, _ changedSnap: Node, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        let oldEventSnap = old.eventCache
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: old, completeServerCache: completeCache)
        guard let childKey = changePath.front else {
            let newEventCache = filter.updateFullNode(oldEventSnap.indexed, changedSnap, accumulator: accumulator)
            return old.updatingEventCache(newEventCache, complete: true, filtered: filter.filtersNodes)
        }
        if childKey.string == ".priority" {
            let newEventCache = filter.updatePriority(oldEventSnap.indexed, changedSnap)
            return old.updatingEventCache(
                newEventCache, complete: oldEventSnap.fullyInitialized, filtered: oldEventSnap.filtered)
        }
        let childChangePath = changePath.popFront
        let oldChild = oldEventSnap.node.child(childKey)
        let newChild: Node
        if childChangePath.isRoot {
            newChild = changedSnap
        } else if let childNode = source.completeChild(childKey) {
            if childChangePath.isPriority, let parent = childChangePath.parent, childNode.child(at: parent).isEmpty {
                // A priority update on an empty node: if the node exists on the server, the
                // server sends the priority with it; ignore it for now.
                newChild = childNode
            } else {
                newChild = childNode.updating(childChangePath, with: changedSnap)
            }
        } else {
            // No complete child known.
            newChild = .empty
        }
        if oldChild == newChild { return old }
        let newEventSnap = filter.updateChild(
            oldEventSnap.indexed, childKey, newChild, affectedPath: childChangePath, source: source,
            accumulator: accumulator)
        return old.updatingEventCache(
            newEventSnap, complete: oldEventSnap.fullyInitialized, filtered: filter.filtersNodes)
    }

    private func applyUserMerge(
        _ viewCache: ViewCache, _ path: Path, _ changedChildren: PathTrie<Node>, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        // Children the view holds first: in a limit window they may make room for others.
        var writesInOrder: [(Path, Node)] = []
        changedChildren.forEach { writesInOrder.append((path.appending($0), $1)) }
        var current = viewCache
        for (writePath, node) in writesInOrder {
            guard let front = writePath.front, viewCache.eventCache.isCompleteForChild(front) else { continue }
            current = applyUserOverwrite(current, writePath, node, writes, completeCache, accumulator)
        }
        for (writePath, node) in writesInOrder {
            if let front = writePath.front, viewCache.eventCache.isCompleteForChild(front) { continue }
            current = applyUserOverwrite(current, writePath, node, writes, completeCache, accumulator)
        }
        return current
    }

    // MARK: - Acks and reverts

    private func ackUserWrite(
        _ viewCache: ViewCache, _ ackPath: Path, _ affected: PathTrie<Bool>, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        if writes.shadowingWrite(ackPath) != nil { return viewCache }
        // Re-apply the server cache for the written paths as a server update, now that the
        // write no longer shadows it. Filter only if the server cache is a window already.
        let filterServerNode = viewCache.serverCache.filtered
        let serverCache = viewCache.serverCache
        if affected.value != nil {
            // A set.
            if (ackPath.isRoot && serverCache.fullyInitialized) || serverCache.isCompleteForPath(ackPath) {
                return applyServerOverwrite(
                    viewCache, ackPath, serverCache.node.child(at: ackPath), writes, completeCache, filterServerNode,
                    accumulator)
            }
            if ackPath.isRoot {
                // Acking at this location without full data: re-apply what is cached as a merge.
                var changed = PathTrie<Node>()
                for (key, child) in serverCache.node.children { changed.set(Path(keys: [key]), child) }
                return applyServerMerge(
                    viewCache, ackPath, changed, writes, completeCache, filterServerNode, accumulator)
            }
            return viewCache
        }
        // An update.
        var changed = PathTrie<Node>()
        affected.forEach { mergePath, _ in
            let serverCachePath = ackPath.appending(mergePath)
            if serverCache.isCompleteForPath(serverCachePath) {
                changed.set(mergePath, serverCache.node.child(at: serverCachePath))
            }
        }
        return applyServerMerge(viewCache, ackPath, changed, writes, completeCache, filterServerNode, accumulator)
    }

    private func revertUserWrite(
        _ viewCache: ViewCache, _ path: Path, _ writes: WriteTreeRef, _ completeServerCache: Node?,
        _ accumulator: ChildChangeAccumulator
    ) -> ViewCache {
        if writes.shadowingWrite(path) != nil { return viewCache }
        let source = WriteTreeCompleteChildSource(
            writes: writes, viewCache: viewCache, completeServerCache: completeServerCache)
        let oldEventCache = viewCache.eventCache.indexed
        var newEventCache: IndexedNode
        if path.isRoot || path.front?.string == ".priority" {
            let newNode: Node
            if let completeServer = viewCache.completeServerNode {
                newNode = writes.calcCompleteEventCache(completeServer) ?? .empty
            } else {
                // An incomplete server cache is never a leaf.
                newNode = writes.calcCompleteEventChildren(viewCache.serverCache.node)
            }
            newEventCache = filter.updateFullNode(oldEventCache, newNode, accumulator: accumulator)
        } else if let childKey = path.front {
            var newChild = writes.calcCompleteChild(childKey, serverCache: viewCache.serverCache)
            if newChild == nil && viewCache.serverCache.isCompleteForChild(childKey) {
                newChild = oldEventCache.child(childKey)
            }
            if let newChild {
                newEventCache = filter.updateChild(
                    oldEventCache, childKey, newChild, affectedPath: path.popFront, source: source,
                    accumulator: accumulator)
            } else if viewCache.eventCache.node.hasChild(childKey) {
                // No complete child available: delete the existing one.
                newEventCache = filter.updateChild(
                    oldEventCache, childKey, .empty, affectedPath: path.popFront, source: source,
                    accumulator: accumulator)
            } else {
                newEventCache = oldEventCache
            }
            if newEventCache.isEmpty, let completeServer = viewCache.completeServerNode {
                // Every child write may have been reverted: maybe the old event node was a leaf.
                if let complete = writes.calcCompleteEventCache(completeServer), complete.isLeaf {
                    newEventCache = filter.updateFullNode(newEventCache, complete, accumulator: accumulator)
                }
            }
        } else {
            newEventCache = oldEventCache
        }
        let complete = viewCache.serverCache.fullyInitialized || writes.shadowingWrite(.root) != nil
        return viewCache.updatingEventCache(newEventCache, complete: complete, filtered: filter.filtersNodes)
    }
}
