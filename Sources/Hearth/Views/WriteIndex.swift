import HearthModel

/// How many visible pending writes touch each path (a set's own path, each merge child's), and
/// how many lie strictly below each path: what lets ``WriteTree`` remove a write that
/// overlaps no other in O(depth) instead of walking every pending write.
///
/// A trie with one level per key, so that indexing a path hashes each of its keys once. (Two
/// dictionaries keyed by whole paths would hash d + 1 paths of up to d keys each for a write at
/// depth d, and build an array for each ancestor — under the store's lock, for every write.)
///
/// Invariants: `below` at a level is the sum of `touching + below` over its children; no child
/// level has both counts zero (an emptied level is removed), so the trie holds exactly the
/// paths of the indexed writes and their ancestors. Counts never go negative: a path is
/// removed only after it was added.
struct WriteIndex: Equatable {
    /// Indexed paths exactly here.
    private var touching = 0
    /// Indexed paths strictly below here.
    private var below = 0
    private var children: [ChildKey: WriteIndex] = [:]

    private var isEmpty: Bool { touching == 0 && below == 0 }

    /// Counts one more indexed path at `path`.
    mutating func add(_ path: Path) { add(path.keys[...]) }

    /// Counts one indexed path at `path` fewer; `path` must have been added.
    mutating func remove(_ path: Path) { remove(path.keys[...]) }

    private mutating func add(_ keys: ArraySlice<ChildKey>) {
        guard let front = keys.first else {
            touching += 1
            return
        }
        below += 1
        // In place: the default subscript yields the child inside the dictionary.
        children[front, default: WriteIndex()].add(keys.dropFirst())
    }

    private mutating func remove(_ keys: ArraySlice<ChildKey>) {
        guard let front = keys.first else {
            precondition(touching > 0, "a path is removed from the write index only after it was added")
            touching -= 1
            return
        }
        precondition(below > 0, "a path is removed from the write index only after it was added")
        below -= 1
        WriteIndex.remove(keys.dropFirst(), from: &children[front])
    }

    /// Removes `keys` from a child level in place (one lookup), dropping the level once empty.
    private static func remove(_ keys: ArraySlice<ChildKey>, from child: inout WriteIndex?) {
        precondition(child != nil, "a path is removed from the write index only after it was added")
        child!.remove(keys)
        if child!.isEmpty { child = nil }
    }

    /// Whether some indexed path lies at, above or below `path`.
    func overlaps(_ path: Path) -> Bool {
        var level = self
        for key in path.keys {
            if level.touching > 0 { return true }
            guard let next = level.children[key] else { return false }
            level = next
        }
        return !level.isEmpty
    }
}
