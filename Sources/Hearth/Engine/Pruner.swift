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
///
/// A round changes nothing a later round's choice depends on except the candidates it
/// removes: the protected paths stay, and the remaining candidates keep their paths and
/// times. So the candidates of round k+1 are those of round k minus the ones it chose, in the
/// same order — which is what ``Pass`` exploits: it sorts the candidates and builds the set
/// of kept paths once, then each round takes the next slice of the sorted list and removes it
/// from the kept set. A pass of any number of rounds costs O(n log n) once plus O(slice) per
/// round, where recomputing each round from the state would cost O(n log n) per round.
enum Pruner {
    struct Candidate: Sendable {
        let path: Path
        let lastUse: Int64
        let queryID: Int64?
    }

    /// The paths that must never be pruned: active queries, pins, pending writes.
    static func protectedPaths(_ s: StoreState) -> [Path] {
        var paths = protectedPathsBesideLooseWrites(s)
        for w in s.writes.loose { paths += w.touchedPaths }
        return paths
    }

    /// ``protectedPaths(_:)`` but for the paths of the pending writes held decoded in the state,
    /// which ``PendingWriteList/loosePaths`` counts already.
    static func protectedPathsBesideLooseWrites(_ s: StoreState) -> [Path] {
        var paths: [Path] = []
        for q in s.trackedQueries.values where q.active { paths.append(q.path) }
        for pin in s.pins { paths.append(pin.path) }
        paths += s.writes.chunkTouchedPaths()
        return paths
    }

    /// A set of paths answering "is any member at or above this path" in O(depth).
    static func trie(_ paths: some Sequence<Path>) -> PathTrie<Bool> {
        var t = PathTrie<Bool>()
        for p in paths { t.set(p, true) }
        return t
    }

    /// The candidates, least recently used first.
    static func candidates(_ s: StoreState, protected: [Path]) -> [Candidate] {
        candidates(s, protectedTrie: trie(protected))
    }

    /// The candidates, least recently used first, given a trie whose entries are exactly the
    /// protected paths (any value type: only presence counts).
    static func candidates<T>(_ s: StoreState, protectedTrie: PathTrie<T>) -> [Candidate] {
        var out: [Candidate] = []
        for q in s.trackedQueries.values where !q.active && !s.pins.contains(q.location) {
            out.append(Candidate(path: q.path, lastUse: q.lastUse, queryID: q.id))
        }
        s.untracked.forEachEntry { keys, time in
            let path = Path(keys: keys)
            // An untracked entry under protected data could never be pruned; leaving it out
            // keeps every round productive.
            if protectedTrie.nearestAtOrAbove(path) == nil {
                out.append(Candidate(path: path, lastUse: time, queryID: nil))
            }
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
        var pass = Pass(s, fraction: fraction, maxInactiveQueries: maxInactiveQueries)
        return pass.nextRound()?.result
    }

    /// What one round of a ``Pass`` did.
    struct Round: Sendable {
        /// The event to commit.
        let result: PruneResult
        /// The candidates the round chose (in LRU order).
        let chosen: [Candidate]
        /// For each pruned path, the untracked entry at or above it before the round (the
        /// entry a later server write there would create or refresh).
        let untrackedAbove: [(path: Path, entry: (path: Path, value: Int64)?)]
        /// Encoded bytes of the server cache the round removed: the pruned subtrees minus
        /// the kept subtrees below them.
        let freedCacheBytes: Int
        /// Bytes of other checkpointed state removed (tracked queries, untracked entries),
        /// as ``Store/estimatedCheckpointBytes(_:ratio:)`` counts them.
        let freedMetaBytes: Int
    }

    /// Successive rounds over one state, each applied to the pass's copy of the state before
    /// the next is computed: the same rounds, in the same order, as computing each round from
    /// the state the previous one left.
    struct Pass: Sendable {
        /// The state with the pass's rounds applied.
        var state: StoreState {
            var s = applied
            if let unapplied { s.applyPrune(unapplied) }
            return s
        }
        /// The state with every round but the last applied: a round is applied when the next
        /// one begins, so that a pass of one round — a client's usual pass, pruning the queries
        /// its acknowledged writes left — does not apply it to its copy of the state for
        /// nothing (the copy's first change duplicates the tracked-query tables).
        private var applied: StoreState
        private var unapplied: PruneResult?
        private let candidates: [Candidate]
        /// The index of the first candidate no round has chosen yet.
        private var next = 0
        /// How many protected paths and remaining candidates sit at each path.
        private var keep = PathTrie<Int>()
        /// The remaining candidates that are tracked queries.
        private(set) var inactiveQueries: Int
        let fraction: Double
        let maxInactiveQueries: Int
        /// The last checkpoint's chunks, when known: what a round frees is measured from those
        /// still unchanged instead of walked (``ChunkOrigins/encodedSize(of:at:)``, the same size).
        let origins: ChunkOrigins?

        init(_ state: StoreState, fraction: Double = 0.2, maxInactiveQueries: Int, origins: ChunkOrigins? = nil) {
            self.applied = state
            self.fraction = fraction
            self.maxInactiveQueries = maxInactiveQueries
            self.origins = origins
            // One trie of the protected paths serves both the candidates' filter and, with the
            // candidates added, the counts. It starts as the state's count of the paths its
            // decoded pending writes touch, kept with every commit: a copy, O(1), where adding
            // each write's paths cost O(pending writes) per pass.
            keep = state.writes.loosePaths
            for p in Pruner.protectedPathsBesideLooseWrites(state) { Pass.add(&keep, p, 1) }
            candidates = Pruner.candidates(state, protectedTrie: keep)
            inactiveQueries = candidates.count { $0.queryID != nil }
            for c in candidates { Pass.add(&keep, c.path, 1) }
        }

        /// The candidates no round has chosen yet.
        var remainingCandidates: Int { candidates.count - next }

        private static func add(_ trie: inout PathTrie<Int>, _ path: Path, _ delta: Int) {
            PendingWriteList.count(path, by: delta, in: &trie)
        }

        /// Computes the next round and applies it to ``state``; `nil` when no candidate is left.
        mutating func nextRound() -> Round? {
            let remaining = remainingCandidates
            guard remaining > 0 else { return nil }
            if let previous = unapplied {
                applied.applyPrune(previous)
                unapplied = nil
            }
            let state = applied
            var n = max(1, Int((Double(remaining) * fraction).rounded(.up)))
            if inactiveQueries > maxInactiveQueries { n = max(n, inactiveQueries - maxInactiveQueries) }
            n = min(n, remaining)
            let chosen = Array(candidates[next..<(next + n)])
            next += n
            // What is kept now: the protected paths and the candidates after this slice.
            for c in chosen { Pass.add(&keep, c.path, -1) }

            // A kept path at or above a chosen path saves it entirely.
            var prunedTrie = PathTrie<Bool>()
            var pruned: [Path] = []
            for c in chosen where keep.nearestAtOrAbove(c.path) == nil && prunedTrie.value(at: c.path) == nil {
                prunedTrie.set(c.path, true)
                pruned.append(c.path)
            }
            // Kept paths strictly below a pruned path survive inside it. Listing the topmost
            // ones below the topmost pruned paths is enough: nothing kept lies between a
            // pruned path and the root (it would have saved it), and data kept at a path
            // includes the data below it.
            var kept: [Path] = []
            var freedCache = 0
            var untrackedAbove: [(path: Path, entry: (path: Path, value: Int64)?)] = []
            for p in pruned {
                untrackedAbove.append((p, state.untracked.nearestAtOrAbove(p)))
                if let parent = p.parent, prunedTrie.nearestAtOrAbove(parent) != nil { continue }
                freedCache += encodedSize(state.serverCache.child(at: p), at: p)
                for k in keep.entries(below: p, topmostOnly: true) {
                    kept.append(k)
                    freedCache -= encodedSize(state.serverCache.child(at: k), at: k)
                }
            }
            assert(
                pruned.allSatisfy { keep.nearestAtOrAbove($0) == nil },
                "pruning never touches a protected or still-kept path, nor one below it")
            assert(
                kept.allSatisfy { prunedTrie.nearestAtOrAbove($0) != nil }, "every kept path lies below a pruned one")
            var freedMeta = 0
            for p in pruned where state.untracked.value(at: p) != nil { freedMeta += 32 }
            var removed: [Int64] = []
            for c in chosen {
                guard let id = c.queryID else { continue }
                removed.append(id)
                inactiveQueries -= 1
                if let q = state.trackedQueries[id] { freedMeta += 64 + (q.keys?.count ?? 0) * 16 }
            }
            let result = PruneResult(prunedPaths: pruned, keptPaths: kept, removedQueryIDs: removed)
            unapplied = result
            return Round(
                result: result, chosen: chosen, untrackedAbove: untrackedAbove,
                freedCacheBytes: max(0, freedCache), freedMetaBytes: freedMeta)
        }

        private func encodedSize(_ node: Node, at path: Path) -> Int {
            origins?.encodedSize(of: node, at: path) ?? NodeCodec.encodedSize(node)
        }

        /// Paths found kept since the pass began (see ``adjust(_:to:snapshot:)``).
        private var lateKeeps = PathTrie<Bool>()
        private var lateKeepCount = 0
        private var seenWriteID: Int64?
        private var seenQueryID: Int64?

        private mutating func keepLate(_ path: Path) {
            if lateKeeps.value(at: path) == nil {
                lateKeeps.set(path, true)
                lateKeepCount += 1
            }
        }

        /// `round` (computed by this pass) adjusted to `current`, the store's state when the
        /// round is committed: the pass's state plus whatever other commits did meanwhile
        /// (`snapshot` is the state the pass started from). `nil` when nothing is left to do.
        ///
        /// What those commits made protected or more recently used is kept, as the policy
        /// would keep it had the round been computed on `current`: a pending write, tracked
        /// query or pin added since the snapshot; a chosen candidate that changed (used,
        /// activated, rewritten or removed: its record stays too); an untracked entry created
        /// or refreshed at or above a pruned path. A late-kept path at or above a pruned path
        /// saves it, one below survives inside it — in this round and every later one of the
        /// pass. O(round + what was added since the last round), under the commit's lock.
        mutating func adjust(_ round: Round, to current: StoreState, snapshot: StoreState) -> PruneResult? {
            for pin in current.pins where !snapshot.pins.contains(pin) { keepLate(pin.path) }
            let lastWriteID = seenWriteID ?? snapshot.lastWriteID
            if current.lastWriteID > lastWriteID {
                for w in current.writes.writes(above: lastWriteID) {
                    for p in w.touchedPaths { keepLate(p) }
                }
                seenWriteID = current.lastWriteID
            }
            let lastQueryID = seenQueryID ?? snapshot.lastQueryID
            if current.lastQueryID > lastQueryID {
                // Ids are assigned in increasing order: the new queries are those above the
                // last id seen.
                if current.lastQueryID - lastQueryID <= Int64(current.trackedQueries.count) {
                    for id in (lastQueryID + 1)...current.lastQueryID {
                        if let q = current.trackedQueries[id] { keepLate(q.path) }
                    }
                } else {
                    for q in current.trackedQueries.values where q.id > lastQueryID { keepLate(q.path) }
                }
                seenQueryID = current.lastQueryID
            }
            var changedQueries: Set<Int64> = []
            for c in round.chosen {
                if let id = c.queryID {
                    if let q = current.trackedQueries[id], !q.active, q.lastUse == c.lastUse, q.path == c.path,
                        !current.pins.contains(q.location)
                    {
                        continue
                    }
                    changedQueries.insert(id)
                    keepLate(c.path)
                } else if current.untracked.value(at: c.path) != c.lastUse {
                    keepLate(c.path)
                }
            }
            for (path, entry) in round.untrackedAbove {
                let now = current.untracked.nearestAtOrAbove(path)
                if let now, now.path != entry?.path || now.value != entry?.value { keepLate(now.path) }
            }
            if lateKeepCount == 0 { return round.result }

            let result = round.result
            var pruned: [Path] = []
            var prunedTrie = PathTrie<Bool>()
            for p in result.prunedPaths where lateKeeps.nearestAtOrAbove(p) == nil {
                pruned.append(p)
                prunedTrie.set(p, true)
            }
            var kept = result.keptPaths
            for p in pruned {
                if let parent = p.parent, prunedTrie.nearestAtOrAbove(parent) != nil { continue }
                kept += lateKeeps.entries(below: p, topmostOnly: true)
            }
            let removed = result.removedQueryIDs.filter { !changedQueries.contains($0) }
            if pruned.isEmpty && removed.isEmpty { return nil }
            return PruneResult(prunedPaths: pruned, keptPaths: kept, removedQueryIDs: removed)
        }
    }
}
