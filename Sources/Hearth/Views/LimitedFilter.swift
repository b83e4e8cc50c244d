import HearthModel

/// The filter of views with a limit: the ranged filter's range, and at most `limit` children
/// from the start (`limitToFirst`) or the end (`limitToLast`) of it (Firebase's
/// `LimitedFilter`). When a child leaves a full window, the next child in range is pulled in
/// from the ``CompleteChildSource``.
struct LimitedFilter: NodeFilter {
    let rangedFilter: RangedFilter
    let limit: Int
    /// Whether the window is anchored at the end (`limitToLast`).
    let reverse: Bool

    init(_ query: QuerySpec) {
        rangedFilter = RangedFilter(query)
        limit = query.limit?.count ?? Int.max
        if case .last = query.limit { reverse = true } else { reverse = false }
    }

    var index: QueryIndex { rangedFilter.index }
    var indexedFilter: IndexedFilter { rangedFilter.indexedFilter }
    var filtersNodes: Bool { true }

    private func withinDirectionalStart(_ key: ChildKey, _ node: Node) -> Bool {
        reverse ? rangedFilter.withinEnd(key, node) : rangedFilter.withinStart(key, node)
    }

    private func withinDirectionalEnd(_ key: ChildKey, _ node: Node) -> Bool {
        reverse ? rangedFilter.withinStart(key, node) : rangedFilter.withinEnd(key, node)
    }

    /// Index order, flipped for a window anchored at the end.
    private func compare(_ a: (key: ChildKey, value: Node), _ b: (key: ChildKey, value: Node)) -> Int {
        reverse ? index.compare(b, a) : index.compare(a, b)
    }

    func updateChild(
        _ snap: IndexedNode, _ key: ChildKey, _ newChild: Node, affectedPath: Path,
        source: any CompleteChildSource, accumulator: ChildChangeAccumulator?
    ) -> IndexedNode {
        let child = rangedFilter.matches(key, newChild) ? newChild : .empty
        if snap.child(key) == child { return snap }
        if snap.childCount < limit {
            return indexedFilter.updateChild(
                snap, key, child, affectedPath: affectedPath, source: source, accumulator: accumulator)
        }
        return fullLimitUpdateChild(snap, key, child, source: source, accumulator: accumulator)
    }

    func updateFullNode(_ oldSnap: IndexedNode, _ newSnap: Node, accumulator: ChildChangeAccumulator?) -> IndexedNode {
        var kept: [(key: ChildKey, value: Node)] = []
        if !newSnap.isLeaf && !newSnap.isEmpty {
            // Walk the new node in window order from the anchored end; keep up to `limit`
            // children in range. (Firebase has two equivalent walks; this is the one from the
            // anchor post.)
            let indexed = IndexedNode(newSnap, index: index)
            let anchor = reverse ? rangedFilter.endPost : rangedFilter.startPost
            let it = indexed.children(from: anchor, reverse: reverse)
            while kept.count < limit, let c = it.next() {
                guard withinDirectionalStart(c.key, c.value) else { continue }
                guard withinDirectionalEnd(c.key, c.value) else { break }
                kept.append(c)
            }
            // Walked from the end, the children come in descending order, which for an index
            // following the keys (a timestamp under push ids) is the insertion sort's worst
            // case: turned around first, the sort below is one pass.
            if reverse { kept.reverse() }
            kept.sort { ChildKey.compare($0.key, $1.key) < 0 }
        }
        let filtered = Node(children: ChildMap(sortedPairs: kept))
        return indexedFilter.updateFullNode(oldSnap, filtered, accumulator: accumulator)
    }

    func updatePriority(_ oldSnap: IndexedNode, _ newPriority: Node) -> IndexedNode { oldSnap }

    private func fullLimitUpdateChild(
        _ oldEventCache: IndexedNode, _ childKey: ChildKey, _ childSnap: Node,
        source: any CompleteChildSource, accumulator: ChildChangeAccumulator?
    ) -> IndexedNode {
        guard let windowBoundary = reverse ? oldEventCache.firstChild : oldEventCache.lastChild else {
            return oldEventCache
        }
        let newChild = (key: childKey, value: childSnap)
        let inRange = rangedFilter.matches(childKey, childSnap)
        if oldEventCache.hasChild(childKey) {
            let oldChildSnap = oldEventCache.child(childKey)
            var nextChild = source.childAfterChild(windowBoundary, index: index, reverse: reverse)
            while let next = nextChild, next.key == childKey || oldEventCache.hasChild(next.key) {
                // The source may already hold a change the window has not seen yet (a merge
                // being applied child by child): skip children the window holds.
                nextChild = source.childAfterChild(next, index: index, reverse: reverse)
            }
            let compareNext = nextChild.map { compare($0, newChild) } ?? 1
            let remainsInWindow = inRange && !childSnap.isEmpty && compareNext >= 0
            if remainsInWindow {
                accumulator?.track(.changed(childKey, new: childSnap, old: oldChildSnap))
                return oldEventCache.updatingChild(childKey, childSnap)
            }
            accumulator?.track(.removed(childKey, oldChildSnap))
            let newEventCache = oldEventCache.updatingChild(childKey, .empty)
            if let next = nextChild, rangedFilter.matches(next.key, next.value) {
                accumulator?.track(.added(next.key, next.value))
                return newEventCache.updatingChild(next.key, next.value)
            }
            return newEventCache
        }
        if childSnap.isEmpty {
            // A removal outside the window.
            return oldEventCache
        }
        if inRange && compare(windowBoundary, newChild) >= 0 {
            accumulator?.track(.removed(windowBoundary.key, windowBoundary.value))
            accumulator?.track(.added(childKey, childSnap))
            return oldEventCache.updatingChild(childKey, childSnap).updatingChild(windowBoundary.key, .empty)
        }
        return oldEventCache
    }
}
