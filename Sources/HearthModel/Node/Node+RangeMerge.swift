// Node+RangeMerge: the server's answer to a compound hash (firebase-ios-sdk `FRangeMerge.m`,
// firebase-android-sdk `snapshot/RangeMerge.java`), pushed as `rm`.

/// A range merge: every leaf of a node in the range after ``start`` (exclusive) up to
/// ``end`` (inclusive), in path order (see ``CompoundHash``), is replaced by the leaves of
/// ``update`` in that range. An absent bound leaves that side unbounded.
///
/// The bounds follow the SDKs exactly: a leaf at `start` itself stays, but the children of
/// a node at `start` are in the range; a leaf at `end` is replaced, but the children of a
/// node at `end` are not in the range. A priority counts as the leaf `.priority` under its
/// node.
public struct RangeMerge: Sendable, Hashable {
    /// The exclusive lower bound (`nil`: from the start).
    public var start: Path?
    /// The inclusive upper bound (`nil`: to the end).
    public var end: Path?
    /// The new data of the range, rooted where the merge applies.
    public var update: Node

    /// A merge replacing the range (`start`, `end`] with `update`'s data in it.
    public init(start: Path?, end: Path?, update: Node) {
        self.start = start
        self.end = end
        self.update = update
    }

    /// `node` with the range replaced.
    public func applied(to node: Node) -> Node { apply(at: .root, node, update) }

    private static func compare(_ a: Path, _ b: Path) -> Int { a < b ? -1 : (b < a ? 1 : 0) }

    private func apply(at path: Path, _ node: Node, _ update: Node) -> Node {
        let afterStart = start.map { RangeMerge.compare(path, $0) > 0 } ?? true
        let endOrder = end.map { RangeMerge.compare(path, $0) } ?? -1
        let holdsStart = start.map { path.contains($0) } ?? false
        let holdsEnd = end.map { path.contains($0) } ?? false
        if afterStart && endOrder < 0 && !holdsEnd {
            return update  // wholly inside the range
        }
        if afterStart && holdsEnd && update.isLeaf {
            return update
        }
        if afterStart && endOrder == 0 {
            // A leaf at the end is replaced (by nothing: the update here is no leaf); a
            // node's children at the end lie after the range.
            return node.isLeaf ? .empty : node
        }
        guard holdsStart || holdsEnd else { return node }  // wholly outside
        var keys = Set<ChildKey>()
        for (key, _) in node.children { keys.insert(key) }
        for (key, _) in update.children { keys.insert(key) }
        var result = node
        for key in keys {
            result = result.updatingChild(key, apply(at: path.child(key), node.child(key), update.child(key)))
        }
        // The priority last, so that the node is not empty when it is set.
        if node.priority != nil || update.priority != nil {
            let key = ChildKey(".priority")
            result = result.updatingChild(key, apply(at: path.child(key), node.child(key), update.child(key)))
        }
        return result
    }
}

extension Node {
    /// The part of this node in the range (`start`, `end`] of path order (see ``RangeMerge``):
    /// what a range merge sends for it — with every leaf whose priority (its `.priority`
    /// child, to a merge) lies in the range. `nil` when the part cannot be written as a node — a
    /// priority in the range on a node with no other leaf in it (an empty node carries no
    /// priority) — so that the range must be sent another way.
    public func range(after start: Path?, through end: Path?) -> Node? {
        range(at: .root, after: start, through: end)
    }

    private func range(at path: Path, after start: Path?, through end: Path?) -> Node? {
        func inRange(_ p: Path) -> Bool { (start.map { $0 < p } ?? true) && (end.map { !($0 < p) } ?? true) }
        // Every descendant lies after `start` when the path does and does not hold it; before
        // `end` (or at it) when the path is before it and does not hold it.
        let allAfterStart = start.map { $0 < path && !path.contains($0) } ?? true
        let allBeforeEnd = end.map { path < $0 && !path.contains($0) } ?? true
        if allAfterStart && allBeforeEnd { return self }
        switch storage {
        case .empty:
            return .empty
        case .leaf(_, let priority):
            // A leaf's priority is its child `.priority` to a merge, which lies after the
            // leaf: a range holding only that child must carry the leaf (its value is not
            // taken, its priority is), or the merge would clear the priority.
            let priorityInRange = priority != nil && inRange(path.child(ChildKey(".priority")))
            return inRange(path) || priorityInRange ? self : .empty
        case let .children(map, priority):
            // Wholly before the start or after the end: nothing.
            if let end, end < path, !path.contains(end) { return .empty }
            if let start, path < start, !path.contains(start) { return .empty }
            var pairs: [(key: ChildKey, value: Node)] = []
            for (key, child) in map {
                guard let part = child.range(at: path.child(key), after: start, through: end) else { return nil }
                if !part.isEmpty { pairs.append((key, part)) }
            }
            let keepPriority = priority != nil && inRange(path.child(ChildKey(".priority")))
            if keepPriority && pairs.isEmpty { return nil }
            return Node(children: pairs, priority: keepPriority ? priority : nil)
        }
    }
}
