import HearthModel

/// Turns a node into a view's cache node (Firebase's `NodeFilter`): indexes it, restricts it to
/// the query's range and limit, and reports the child changes it makes.
///
/// Three filters exist: ``IndexedFilter`` (queries that load all data), ``RangedFilter``
/// (bounds, no limit) and ``LimitedFilter`` (a limit, with or without bounds).
protocol NodeFilter {
    /// `snap` with child `key` replaced by `newChild` (as far as the filter lets it in).
    /// `affectedPath` is where, below the child, the change happened. Child changes go to
    /// `accumulator` when given.
    func updateChild(
        _ snap: IndexedNode, _ key: ChildKey, _ newChild: Node, affectedPath: Path,
        source: any CompleteChildSource, accumulator: ChildChangeAccumulator?
    ) -> IndexedNode

    /// The filtered form of `newSnap`, replacing `oldSnap`; child changes go to `accumulator`.
    func updateFullNode(_ oldSnap: IndexedNode, _ newSnap: Node, accumulator: ChildChangeAccumulator?) -> IndexedNode

    /// `oldSnap` with a new root priority (filtered views keep no root priority).
    func updatePriority(_ oldSnap: IndexedNode, _ newPriority: Node) -> IndexedNode

    /// Whether the filter drops children (the cache it produces is a window).
    var filtersNodes: Bool { get }

    /// The index-only filter for the same index.
    var indexedFilter: IndexedFilter { get }

    /// The query's index.
    var index: QueryIndex { get }
}

extension QuerySpec {
    /// The filter a view for this query uses.
    var nodeFilter: any NodeFilter {
        if loadsAllData { return IndexedFilter(index: index) }
        if limit != nil { return LimitedFilter(self) }
        return RangedFilter(self)
    }
}

extension Node {
    /// The priority a node written at `.priority` denotes (a number or string leaf), else nil.
    var asPriority: Priority? {
        switch leafValue {
        case .number(let n)?: .number(n)
        case .string(let s)?: .string(s)
        default: nil
        }
    }
}
