import HearthModel

/// The filter of views with bounds and no limit: keeps the children between the start and end
/// positions (exclusive where the query says so) and drops the root's priority (Firebase's
/// `RangedFilter`).
struct RangedFilter: NodeFilter {
    let indexedFilter: IndexedFilter
    /// The start position (Firebase's `startPost`).
    let startPost: IndexPost
    /// The end position (`endPost`).
    let endPost: IndexPost
    let startInclusive: Bool
    let endInclusive: Bool

    init(_ query: QuerySpec) {
        let index = query.index
        indexedFilter = IndexedFilter(index: index)
        startPost = query.start.map { IndexPost(bound: $0, isStart: true, index: index) } ?? .min
        endPost = query.end.map { IndexPost(bound: $0, isStart: false, index: index) } ?? .max
        startInclusive = !(query.start?.exclusive ?? false)
        endInclusive = !(query.end?.exclusive ?? false)
    }

    var index: QueryIndex { indexedFilter.index }
    var filtersNodes: Bool { true }

    /// Whether the child lies at or after the start position.
    func withinStart(_ key: ChildKey, _ node: Node) -> Bool {
        let c = index.compare(startPost, child: key, node)
        return startInclusive ? c <= 0 : c < 0
    }

    /// Whether the child lies at or before the end position.
    func withinEnd(_ key: ChildKey, _ node: Node) -> Bool {
        let c = index.compare(endPost, child: key, node)
        return endInclusive ? c >= 0 : c > 0
    }

    /// Whether the child lies in the range.
    func matches(_ key: ChildKey, _ node: Node) -> Bool {
        withinStart(key, node) && withinEnd(key, node)
    }

    func updateChild(
        _ snap: IndexedNode, _ key: ChildKey, _ newChild: Node, affectedPath: Path,
        source: any CompleteChildSource, accumulator: ChildChangeAccumulator?
    ) -> IndexedNode {
        let child = matches(key, newChild) ? newChild : .empty
        return indexedFilter.updateChild(
            snap, key, child, affectedPath: affectedPath, source: source, accumulator: accumulator)
    }

    func updateFullNode(_ oldSnap: IndexedNode, _ newSnap: Node, accumulator: ChildChangeAccumulator?) -> IndexedNode {
        var kept: [(key: ChildKey, value: Node)] = []
        if !newSnap.isLeaf {
            for pair in newSnap.children where matches(pair.key, pair.value) { kept.append(pair) }
        }
        // No priority on a query's root; a leaf has no children to keep.
        let filtered = Node(children: ChildMap(sortedPairs: kept))
        return indexedFilter.updateFullNode(oldSnap, filtered, accumulator: accumulator)
    }

    func updatePriority(_ oldSnap: IndexedNode, _ newPriority: Node) -> IndexedNode { oldSnap }
}
