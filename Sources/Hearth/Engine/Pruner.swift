import HearthModel

/// The LRU cache policy, as a pure function of the state: which cached data one pruning
/// round removes.
///
/// Candidates are the inactive tracked queries whose location is not pinned, and the
/// untracked entries (cached server data no tracked query covers, last used when written).
/// A round takes the least recently used 20% of the candidates (at least one; and when there
/// are more than the allowed number of inactive queries, at least the excess) and prunes
/// their paths — minus everything that a remaining candidate, an active query, a pin or a
/// pending write still needs, which is kept. A kept path at or above a pruned path saves it
/// entirely; kept paths below a pruned path survive inside it.
///
/// Every round removes at least one candidate (a tracked query record, or an untracked entry
/// together with its data), so repeated rounds terminate.
enum Pruner {
    struct Candidate {
        let path: Path
        let lastUse: Int64
        let queryID: Int64?
    }

    /// The paths that must never be pruned: active queries, pins, pending writes.
    static func protectedPaths(_ s: StoreState) -> [Path] {
        var paths: [Path] = []
        for q in s.trackedQueries.values where q.active { paths.append(q.path) }
        for pin in s.pins { paths.append(pin.path) }
        for w in s.pendingWrites { paths += w.touchedPaths }
        return paths
    }

    /// A set of paths answering "is any member at or above this path" in O(depth).
    static func trie(_ paths: some Sequence<Path>) -> PathTrie<Bool> {
        var t = PathTrie<Bool>()
        for p in paths { t.set(p, true) }
        return t
    }

    static func candidates(_ s: StoreState, protected: [Path]) -> [Candidate] {
        var out: [Candidate] = []
        for q in s.trackedQueries.values where !q.active && !s.pins.contains(q.location) {
            out.append(Candidate(path: q.path, lastUse: q.lastUse, queryID: q.id))
        }
        let protectedTrie = trie(protected)
        for (path, time) in s.untracked.entries where protectedTrie.nearestAtOrAbove(path) == nil {
            // An untracked entry under protected data could never be pruned; leaving it out
            // keeps every round productive.
            out.append(Candidate(path: path, lastUse: time, queryID: nil))
        }
        out.sort { a, b in
            if a.lastUse != b.lastUse { return a.lastUse < b.lastUse }
            if a.path != b.path { return a.path < b.path }
            return (a.queryID ?? -1) < (b.queryID ?? -1)
        }
        return out
    }

    /// The number of inactive tracked queries that count against the query limit.
    static func inactiveQueryCount(_ s: StoreState) -> Int {
        s.trackedQueries.values.count { !$0.active && !s.pins.contains($0.location) }
    }

    /// One round, or `nil` when nothing is prunable.
    static func round(_ s: StoreState, fraction: Double = 0.2, maxInactiveQueries: Int) -> PruneResult? {
        let protected = protectedPaths(s)
        let all = candidates(s, protected: protected)
        guard !all.isEmpty else { return nil }
        var n = max(1, Int((Double(all.count) * fraction).rounded(.up)))
        let inactive = all.count { $0.queryID != nil }
        if inactive > maxInactiveQueries { n = max(n, inactive - maxInactiveQueries) }
        n = min(n, all.count)
        let chosen = all[..<n]
        let keep = protected + all[n...].map(\.path)
        let keepTrie = trie(keep)

        // A kept path at or above a chosen path saves it entirely.
        var prunedTrie = PathTrie<Bool>()
        var pruned: [Path] = []
        for c in chosen where keepTrie.nearestAtOrAbove(c.path) == nil && prunedTrie.value(at: c.path) == nil {
            prunedTrie.set(c.path, true)
            pruned.append(c.path)
        }
        // Kept paths strictly below a pruned path survive inside it.
        var keptTrie = PathTrie<Bool>()
        var kept: [Path] = []
        for k in keep where keptTrie.value(at: k) == nil {
            guard let parent = k.parent, prunedTrie.nearestAtOrAbove(parent) != nil else { continue }
            keptTrie.set(k, true)
            kept.append(k)
        }
        return PruneResult(prunedPaths: pruned, keptPaths: kept, removedQueryIDs: chosen.compactMap(\.queryID))
    }
}
