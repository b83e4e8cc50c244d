// Building a `ChildMap` from pairs produced one at a time in key order, without an array of them
// first: what a decoder does with a children node whose count it has read.

extension ChildMap {
    /// Builds a balanced map of `count` pairs taken from `next` in order, in O(n): the pairs
    /// must come strictly ascending by key and hold no empty node (`next` checks, and throws to
    /// stop the build; nothing built is kept).
    ///
    /// The tree has the shape ``init(sortedPairs:)`` gives: a subtree of n pairs holds n/2
    /// (rounded down) on its left. Its in-order walk is the order of the calls, so each tree
    /// node is made from the pair as it is produced — no intermediate array to fill, copy from
    /// and destroy. Decoding a node (NodeCodec) with that array once per children node spends
    /// about a fifth of decoding the pending writes replayed at open on its copies.
    ///
    /// Recursion is as deep as the tree is high: log2(count) + 1.
    ///
    /// - Precondition: `count >= 0`.
    @inlinable
    package init<E: Error>(count: Int, sortedPairsFrom next: () throws(E) -> (key: ChildKey, value: Node)) throws(E) {
        precondition(count >= 0, "negative pair count")
        func build(_ n: Int) throws(E) -> Tree? {
            guard n > 0 else { return nil }
            let leftCount = n / 2
            let left = try build(leftCount)
            let (key, value) = try next()
            let right = try build(n - leftCount - 1)
            // Moved into the tree node, not copied (a copy is a retain and a release per pair).
            return Tree(consume key, consume value, left, right)
        }
        self.init(root: try build(count))
    }
}
