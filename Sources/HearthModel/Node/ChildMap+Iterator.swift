// Iterating a ChildMap: the pairs in key order, either way, from a key; the tree nodes held
// unretained below a root the iterator holds (see Iterator for why that is safe).

extension ChildMap: Sequence {
    /// Iterates pairs in ascending key order.
    ///
    /// The pending tree nodes are kept unretained (`Unmanaged`): the iterator holds the root,
    /// and every node below a held root stays as it is — an in-place update makes each node
    /// on its path unique first, top down (ChildMap+InPlace.swift), so with the root held
    /// elsewhere it copies the path and changes none of these nodes — and alive, since each
    /// is held by its parent. A retained stack costs a retain and a release per node pushed:
    /// a third of the reference counting in a checkpoint's walk over large children nodes.
    public struct Iterator: IteratorProtocol {
        /// Keeps every node on the stack alive and unchanged (see above).
        private let root: Tree?
        private var stack: [Unmanaged<Tree>] = []
        private let reversed: Bool

        init(root: Tree?, reversed: Bool, from start: ChildKey? = nil, exclusive: Bool = false) {
            self.root = root
            self.reversed = reversed
            // No allocation for an empty map: every leaf's children are iterated (node walks
            // recurse into them), and a reserved stack there cost a malloc and free per leaf.
            guard let root else { return }
            stack.reserveCapacity(48)
            if let start {
                // Descend towards `start`, keeping the nodes that are ≥ start (or ≤ start when
                // reversed): they are exactly the pending ancestors of an in-order walk from it.
                var t: Unmanaged<Tree>? = .passUnretained(root)
                while let u = t {
                    let n = u.takeUnretainedValue()
                    let c = ChildKey.compare(n.key, start)
                    if exclusive ? (reversed ? c < 0 : c > 0) : (reversed ? c <= 0 : c >= 0) {
                        stack.append(u)
                        t = Self.unretained(reversed ? n.right : n.left)
                    } else {
                        t = Self.unretained(reversed ? n.left : n.right)
                    }
                }
            } else {
                push(.passUnretained(root))
            }
        }

        @inline(__always)
        private static func unretained(_ t: Tree?) -> Unmanaged<Tree>? {
            t.map { .passUnretained($0) }
        }

        /// The child on the walk's near side (left, or right when reversed), unretained.
        @inline(__always)
        private func near(_ u: Unmanaged<Tree>) -> Unmanaged<Tree>? {
            u._withUnsafeGuaranteedRef { n in Self.unretained(reversed ? n.right : n.left) }
        }

        private mutating func push(_ t: Unmanaged<Tree>?) {
            var t = t
            while let u = t {
                stack.append(u)
                t = near(u)
            }
        }

        public mutating func next() -> (key: ChildKey, value: Node)? {
            guard let u = stack.popLast() else { return nil }
            // The root is held to here: a value is only kept alive up to its last use, and the
            // stack's nodes are not uses of it.
            return withExtendedLifetime(root) {
                u._withUnsafeGuaranteedRef { n in
                    push(Self.unretained(reversed ? n.left : n.right))
                    return (n.key, n.value)
                }
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(root: root, reversed: false) }

    /// Pairs in descending key order.
    public var reversedPairs: IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, reversed: true))
    }

    /// Pairs in ascending key order starting at the first key ≥ `key`.
    public func pairs(from key: ChildKey) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, reversed: false, from: key))
    }

    /// An iterator over the pairs in ascending key order starting at the first key > `key`.
    package func iterator(after key: ChildKey) -> Iterator {
        Iterator(root: root, reversed: false, from: key, exclusive: true)
    }

    /// Pairs in descending key order starting at the last key ≤ `key`.
    public func reversedPairs(from key: ChildKey) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, reversed: true, from: key))
    }

    public var underestimatedCount: Int { count }
}
