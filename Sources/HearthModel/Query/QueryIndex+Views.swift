// Small additions to the query model used by the view engine (`Hearth/Views`).

extension QueryIndex {
    /// Whether a child's position in this index's order may have changed between `old` and
    /// `new` (Firebase's `indexedValueChanged`): the priority for ``priority``, the whole
    /// value for ``value``, the value at the path for ``child(_:)``, never for ``key``.
    ///
    /// The event generator raises `child_moved` for a `child_changed` exactly when this holds.
    public func indexedValueChanged(from old: Node, to new: Node) -> Bool {
        switch self {
        case .key: false
        case .priority: old.priority != new.priority
        case .value: old != new
        case .child(let path): old.child(at: path) != new.child(at: path)
        }
    }
}

extension QueryWindow {
    /// Creates a window from entries already in query order and the query's value node.
    ///
    /// - Precondition: `entries` are exactly the children of `node` in the query's order (for
    ///   a query that loads all data, `node` may be a leaf and `entries` empty).
    public init(orderedEntries entries: [(key: ChildKey, value: Node)], node: Node) {
        self.init(entries: entries, node: node)
    }
}
