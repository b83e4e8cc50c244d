// Whether two versions of a map hold the same pairs within a key range, in time proportional to
// what differs between them, not to the range's size.
//
// Two maps that share history (one was updated into the other) share every subtree the updates
// did not touch: path copying rebuilds only the O(log n) nodes on the way to each change, plus
// the ones a rotation moves. So the two in-order sequences are compared as streams of *frames* —
// a whole subtree not yet expanded, or one node — and where both streams are about to read the
// same subtree object, both skip it whole: the same object holds the same pairs. Otherwise the
// larger subtree at the front is expanded (left subtree, node, right subtree), until nodes face
// each other and are compared. Both streams always stand at the same position of their
// sequences (a skip advances both by the same count), so the comparison is exact: it answers
// what comparing the pairs one by one would, and costs O(changes · log n) when the maps share
// structure — O(n) only when they share none.

extension ChildMap {
    /// The identities of this map's tree nodes, O(n): which subtrees two maps share (tests of
    /// structural sharing).
    package func treeNodeIdentities() -> Set<ObjectIdentifier> {
        var out = Set<ObjectIdentifier>()
        func visit(_ t: Tree?) {
            guard let t else { return }
            out.insert(ObjectIdentifier(t))
            visit(t.left)
            visit(t.right)
        }
        visit(root)
        return out
    }

    /// Whether `self` and `other` hold the same keys within `first`...`last` (inclusive), with
    /// values `same` says are the same, in order. Shared subtrees are skipped whole, so two
    /// versions of one map compare in O(changes · log n).
    package func hasSamePairs(
        as other: ChildMap, from first: ChildKey, through last: ChildKey, same: (Node, Node) -> Bool
    ) -> Bool {
        var a = RangeCursor(root, from: first)
        var b = RangeCursor(other.root, from: first)
        // Bounded: every turn pops or expands a frame, and each tree node is expanded at most
        // once per side, so turns ≤ 2 · (count + other.count) + 2.
        var turns = 0
        let bound = 2 * (count + other.count) + 2
        while turns <= bound {
            turns += 1
            switch (a.front, b.front) {
            case (nil, nil):
                return true
            case (.subtree(let x)?, .subtree(let y)?) where x === y:
                a.pop()
                b.pop()
            case (.subtree(let x)?, .subtree(let y)?):
                if x.count >= y.count { a.expand() } else { b.expand() }
            case (.subtree?, _):
                a.expand()
            case (_, .subtree?):
                b.expand()
            case (.node(let x)?, .node(let y)?):
                let xIn = ChildKey.compare(x.key, last) <= 0
                let yIn = ChildKey.compare(y.key, last) <= 0
                if !xIn && !yIn { return true }
                guard xIn && yIn, x.key == y.key, same(x.value, y.value) else { return false }
                a.pop()
                b.pop()
            case (.node(let x)?, nil):
                return ChildKey.compare(x.key, last) > 0
            case (nil, .node(let y)?):
                return ChildKey.compare(y.key, last) > 0
            }
        }
        assertionFailure("the range comparison ends within its bound")
        return false
    }
}

/// An in-order stream over a tree from a key on, as a stack of frames (top = next).
private struct RangeCursor {
    enum Frame {
        /// A subtree not yet expanded: all of its pairs come next, in order.
        case subtree(ChildMap.Tree)
        /// One pair.
        case node(ChildMap.Tree)
    }

    private var stack: [Frame] = []

    /// The pairs of `root` with keys ≥ `first`.
    init(_ root: ChildMap.Tree?, from first: ChildKey) {
        var t = root
        // Down towards `first`: a node ≥ it comes after the part of its left subtree ≥ it and
        // before its right subtree, so both are stacked under what the left side adds on top.
        while let n = t {
            if ChildKey.compare(n.key, first) >= 0 {
                if let r = n.right { stack.append(.subtree(r)) }
                stack.append(.node(n))
                t = n.left
            } else {
                t = n.right
            }
        }
    }

    var front: Frame? { stack.last }

    mutating func pop() { stack.removeLast() }

    /// Replaces the subtree at the front by its left subtree, its node and its right subtree.
    mutating func expand() {
        guard case .subtree(let t)? = stack.popLast() else {
            assertionFailure("only a subtree frame expands")
            return
        }
        if let r = t.right { stack.append(.subtree(r)) }
        stack.append(.node(t))
        if let l = t.left { stack.append(.subtree(l)) }
    }
}
