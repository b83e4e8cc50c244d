/// The children a query selects at a location, in query order.
public struct QueryWindow: Sendable, Equatable {
    /// The selected children, in the query's order.
    public let entries: [(key: ChildKey, value: Node)]

    /// The query's value: for a query that loads all data, the whole node (priority
    /// included); otherwise a children node of the selected children, without priority
    /// (Firebase strips the priority of a filtered query's root).
    public let node: Node

    /// The selected keys, in the query's order.
    public var keys: [ChildKey] { entries.map(\.key) }

    public static func == (lhs: QueryWindow, rhs: QueryWindow) -> Bool {
        lhs.node == rhs.node && lhs.entries.map(\.key) == rhs.entries.map(\.key)
    }
}

extension QuerySpec {
    /// Whether the child `(key, value)` lies between this query's bounds (limit ignored).
    public func inRange(_ key: ChildKey, _ value: Node) -> Bool {
        if start == nil && end == nil { return true }
        return inRange(key, indexedValue: index.indexedValue(of: value))
    }

    /// Whether a child with `key` whose value this query's index orders by `indexedValue`
    /// (``QueryIndex/indexedValue(of:)``) lies between the bounds: for readers that hold the
    /// indexed values rather than the children (the checkpoint's order indexes).
    package func inRange(_ key: ChildKey, indexedValue: Node) -> Bool {
        if let start, !boundAllows(start, key: key, indexed: indexedValue, isStart: true) { return false }
        if let end, !boundAllows(end, key: key, indexed: indexedValue, isStart: false) { return false }
        return true
    }

    private func boundAllows(_ bound: QueryBound, key: ChildKey, indexed: Node, isStart: Bool) -> Bool {
        // c = compare(child, bound post)
        let c: Int
        if case .key = index {
            // Ordering by key: the bound's value is the bounding key.
            guard case .string(let s)? = bound.value.leafValue else { return true }
            c = ChildKey.compare(key, ChildKey(s))
        } else {
            let v = Node.compareForOrdering(indexed, bound.value)
            if v != 0 {
                c = v
            } else {
                let boundKey = bound.key ?? (isStart ? .min : .max)
                c = -boundKey.compare(to: key)
            }
        }
        if isStart { return bound.exclusive ? c > 0 : c >= 0 }
        return bound.exclusive ? c < 0 : c <= 0
    }

    /// Applies the query to the children of `node`: the ordered window it selects.
    ///
    /// A leaf or empty node has no children, so a filtered query selects nothing from it.
    /// Ordering by key walks the key-ordered tree from the start bound (O(log n + k));
    /// other orderings sort the children in range (O(n log n)).
    public func window(of node: Node) -> QueryWindow {
        if loadsAllData && node.isLeaf {
            return QueryWindow(entries: [], node: node)
        }
        let children = node.children
        var selected: [(key: ChildKey, value: Node)]
        if case .key = index {
            selected = keyOrderedWindow(children)
        } else {
            selected = children.filter { inRange($0.key, $0.value) }
            let index = self.index
            selected.sort { index.compare($0, $1) < 0 }
            switch limit {
            case .first(let n)? where selected.count > n: selected.removeLast(selected.count - n)
            case .last(let n)? where selected.count > n: selected.removeFirst(selected.count - n)
            default: break
            }
        }
        assert(selected.count <= (limit?.count ?? Int.max), "a window holds at most its limit's count of children")
        assert(
            selected.allSatisfy { inRange($0.key, $0.value) }, "a window holds only children within the query's bounds")
        let result: Node =
            loadsAllData
            ? node : Node(children: ChildMap(sortedPairs: selected.sorted { ChildKey.compare($0.key, $1.key) < 0 }))
        return QueryWindow(entries: selected, node: result)
    }

    private func keyOrderedWindow(_ children: ChildMap) -> [(key: ChildKey, value: Node)] {
        var out: [(key: ChildKey, value: Node)] = []
        let cap = limit?.count ?? Int.max
        assert(cap > 0, "a query's limit is positive (QuerySpec.settingLimit checks it)")
        if case .last = limit {
            let from = end.flatMap { b -> ChildKey? in
                if case .string(let s)? = b.value.leafValue { return ChildKey(s) }
                return nil
            }
            let seq = from.map { children.reversedPairs(from: $0) } ?? children.reversedPairs
            for pair in seq {
                guard inRange(pair.key, pair.value) else {
                    if let start, case .string(let s)? = start.value.leafValue,
                        ChildKey.compare(pair.key, ChildKey(s)) < 0
                    {
                        break
                    }
                    continue
                }
                out.append(pair)
                if out.count == cap { break }
            }
            out.reverse()
            assert(out.count <= cap, "a limitToLast window holds at most its limit")
        } else {
            let from = start.flatMap { b -> ChildKey? in
                if case .string(let s)? = b.value.leafValue { return ChildKey(s) }
                return nil
            }
            let seq = from.map { children.pairs(from: $0) } ?? IteratorSequence(children.makeIterator())
            for pair in seq {
                guard inRange(pair.key, pair.value) else {
                    if let end, case .string(let s)? = end.value.leafValue, ChildKey.compare(pair.key, ChildKey(s)) > 0
                    {
                        break
                    }
                    continue
                }
                out.append(pair)
                if out.count == cap { break }
            }
            assert(out.count <= cap, "a limitToFirst window holds at most its limit")
        }
        assert(
            zip(out, out.dropFirst()).allSatisfy { ChildKey.compare($0.key, $1.key) < 0 },
            "a key-ordered window is in strictly ascending key order")
        return out
    }
}
