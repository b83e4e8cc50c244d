// The children of one level of a PathTrie: a map from child keys to values, kept in Firebase key
// order (`ChildKey.compare`) in blocks of at most `blockCapacity` entries.
//
// Why not a Dictionary: the state's untracked entries hold one level per written parent, and a
// cache filled with push ids — a chat room's messages — puts thousands of keys on one level,
// written in ascending order. Hashed, each write would hash and probe a key whose neighbours are
// cold, the table would rehash every key as it grows, the first write after a checkpoint's
// snapshot would copy the whole table, and every checkpoint would sort every level to list the
// entries in key order.
//
// Costs, for n entries in b ≥ ⌈n / blockCapacity⌉ blocks:
// - a key after the last one (push ids, time-ordered): one comparison, O(1) amortized append;
// - any other lookup or insert: a binary search over the blocks' last keys, then within one
//   block, O(log n) comparisons — most of them of two ranks (`ChildKey.Rank`: a key's kind and
//   first eight bytes, read once per search), held beside the keys, so that the search does
//   not reach into the keys' strings — plus O(blockCapacity) moves in the block and, when it
//   splits, O(b) in the list of blocks;
// - a copy shares the blocks: the first write after it copies the lists of blocks (b
//   references each) and the one block written, where a Dictionary copied all n entries;
// - iteration in key order costs nothing extra: the order is kept, not made.
//
// Invariants (`checkInvariants`, which the tests call after every operation): no block is
// empty, none holds more than `blockCapacity` entries, the key and value blocks have the same
// sizes, each key holds its own rank, the concatenation of the key blocks is strictly
// increasing in key order, and `count` is the total number of entries.
import HearthModel

/// A map from ``ChildKey``s to values kept in Firebase key order, stored in blocks that copies
/// share: O(1) appends of increasing keys, O(log n) lookups, and a copy whose first write copies
/// one block and the list of blocks.
struct KeyOrderedMap<Value> {
    /// The most entries a block holds.
    static var blockCapacity: Int { 64 }

    /// The keys, in key order, split into non-empty blocks of at most ``blockCapacity``, each
    /// with its rank; the values in blocks of the same sizes. Apart, so that the searches
    /// (`locate`) read keys only, in code that is not generic over the values.
    private var keyBlocks: [[RankedKey]] = []
    /// See ``keyBlocks``.
    private var valueBlocks: [[Value]] = []

    /// The number of entries.
    private(set) var count = 0

    /// An empty map.
    init() {}

    /// Whether the map holds no entry.
    var isEmpty: Bool { count == 0 }

    /// The number of blocks (for tests: a map filled in ascending order keeps them full).
    var blockCount: Int { keyBlocks.count }

    // MARK: Reading

    /// The value for `key`; setting `nil` removes the entry.
    subscript(key: ChildKey) -> Value? {
        get {
            let at = locate(key, rank: ChildKey.Rank(key), in: keyBlocks)
            return at.found ? valueBlocks[at.block][at.index] : nil
        }
        set {
            if let newValue {
                modify(key, default: newValue) { $0 = newValue }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    // MARK: Changing

    /// Applies `body` to the value for `key` in place — inserting `default()` first when there is
    /// none — and returns what it returns. The value is yielded where it is stored: when this
    /// map's block is not shared, neither is the value's own storage.
    @discardableResult
    mutating func modify<R>(_ key: ChildKey, default make: @autoclosure () -> Value, _ body: (inout Value) -> R) -> R {
        let rank = ChildKey.Rank(key)
        var at = locate(key, rank: rank, in: keyBlocks)
        if !at.found { at = insert(RankedKey(rank: rank, key: key), make(), at: at) }
        return body(&valueBlocks[at.block][at.index])
    }

    /// Inserts an entry where `locate` placed it and returns where it ended up: a
    /// full block splits in two, except that an entry after the last one starts a new block (so
    /// a map filled in ascending order keeps its blocks full).
    private mutating func insert(_ key: RankedKey, _ value: Value, at: BlockPosition) -> BlockPosition {
        count += 1
        if keyBlocks.isEmpty {
            keyBlocks.append([key])
            valueBlocks.append([value])
            return BlockPosition(block: 0, index: 0, found: true)
        }
        let capacity = Self.blockCapacity
        let b = at.block
        if keyBlocks[b].count < capacity {
            keyBlocks[b].insert(key, at: at.index)
            valueBlocks[b].insert(value, at: at.index)
            return BlockPosition(block: b, index: at.index, found: true)
        }
        if b == keyBlocks.count - 1, at.index == keyBlocks[b].count {
            var keys: [RankedKey] = []
            keys.reserveCapacity(capacity)
            keys.append(key)
            var values: [Value] = []
            values.reserveCapacity(capacity)
            values.append(value)
            keyBlocks.append(keys)
            valueBlocks.append(values)
            return BlockPosition(block: b + 1, index: 0, found: true)
        }
        let half = capacity / 2
        var upperKeys = Array(keyBlocks[b][half...])
        var upperValues = Array(valueBlocks[b][half...])
        keyBlocks[b].removeSubrange(half...)
        valueBlocks[b].removeSubrange(half...)
        if at.index <= half {
            keyBlocks[b].insert(key, at: at.index)
            valueBlocks[b].insert(value, at: at.index)
            keyBlocks.insert(upperKeys, at: b + 1)
            valueBlocks.insert(upperValues, at: b + 1)
            return BlockPosition(block: b, index: at.index, found: true)
        }
        upperKeys.insert(key, at: at.index - half)
        upperValues.insert(value, at: at.index - half)
        keyBlocks.insert(upperKeys, at: b + 1)
        valueBlocks.insert(upperValues, at: b + 1)
        return BlockPosition(block: b + 1, index: at.index - half, found: true)
    }

    /// Removes the entry for `key` and returns its value (nil when there was none). A block
    /// left empty goes; one left under a quarter full is joined to its predecessor, else to its
    /// successor, when the two fit in one block — so removals cannot leave a long run of
    /// nearly empty blocks for the searches to step through.
    @discardableResult
    mutating func removeValue(forKey key: ChildKey) -> Value? {
        let at = locate(key, rank: ChildKey.Rank(key), in: keyBlocks)
        guard at.found else { return nil }
        count -= 1
        let b = at.block
        keyBlocks[b].remove(at: at.index)
        let removed = valueBlocks[b].remove(at: at.index)
        let left = keyBlocks[b].count
        if left == 0 {
            keyBlocks.remove(at: b)
            valueBlocks.remove(at: b)
        } else if left < Self.blockCapacity / 4 {
            if b > 0, keyBlocks[b - 1].count + left <= Self.blockCapacity {
                joinBlock(b)
            } else if b + 1 < keyBlocks.count, left + keyBlocks[b + 1].count <= Self.blockCapacity {
                joinBlock(b + 1)
            }
        }
        return removed
    }

    /// Appends block `b` to block `b - 1` and removes it.
    private mutating func joinBlock(_ b: Int) {
        let keys = keyBlocks.remove(at: b)
        let values = valueBlocks.remove(at: b)
        keyBlocks[b - 1].append(contentsOf: keys)
        valueBlocks[b - 1].append(contentsOf: values)
    }

    /// Removes every entry.
    mutating func removeAll() {
        keyBlocks = []
        valueBlocks = []
        count = 0
    }

    // MARK: Reading in order

    /// Calls `body` with every entry in key order.
    func forEach(_ body: (ChildKey, Value) throws -> Void) rethrows {
        for b in keyBlocks.indices {
            let keys = keyBlocks[b]
            let values = valueBlocks[b]
            for i in keys.indices { try body(keys[i].key, values[i]) }
        }
    }

    /// The keys, in key order.
    var keys: [ChildKey] {
        var out: [ChildKey] = []
        out.reserveCapacity(count)
        for block in keyBlocks {
            for k in block { out.append(k.key) }
        }
        return out
    }

    /// The values, in key order.
    var values: [Value] {
        var out: [Value] = []
        out.reserveCapacity(count)
        for block in valueBlocks { out += block }
        return out
    }

    /// The entries, in key order.
    var entries: [(key: ChildKey, value: Value)] {
        var out: [(key: ChildKey, value: Value)] = []
        out.reserveCapacity(count)
        forEach { key, value in out.append((key, value)) }
        return out
    }

    /// Whether some key is integer-like (``ChildKey/integerValue``): without one, key order is
    /// the plain UTF-16 order of the key strings.
    var hasIntegerKeys: Bool {
        // Integer-like keys sort first: the first key tells.
        keyBlocks.first?.first?.key.integerValue != nil
    }

    /// Whether every value satisfies `predicate`.
    func allValues(_ predicate: (Value) -> Bool) -> Bool {
        for block in valueBlocks {
            for value in block where !predicate(value) { return false }
        }
        return true
    }

    /// Checks the invariants in the file's header; a description of the first broken one.
    func checkInvariants() -> String? {
        if keyBlocks.count != valueBlocks.count {
            return "\(keyBlocks.count) key blocks, \(valueBlocks.count) value blocks"
        }
        var total = 0
        var previous: ChildKey?
        for (i, block) in keyBlocks.enumerated() {
            if block.isEmpty { return "block \(i) is empty" }
            if block.count > Self.blockCapacity { return "block \(i) holds \(block.count) entries" }
            if valueBlocks[i].count != block.count {
                return "block \(i): \(block.count) keys, \(valueBlocks[i].count) values"
            }
            for entry in block {
                if entry.rank != ChildKey.Rank(entry.key) { return "\(entry.key) holds another key's rank" }
                if let previous, ChildKey.compare(previous, entry.key) >= 0 {
                    return "\(entry.key) follows \(previous) out of key order"
                }
                previous = entry.key
            }
            total += block.count
        }
        return total == count ? nil : "count \(count), entries \(total)"
    }
}

/// A key with its rank (``ChildKey/Rank``): most comparisons are of two ranks, held in the
/// block, without reaching into the key's string.
private struct RankedKey: Sendable {
    let rank: ChildKey.Rank
    let key: ChildKey
}

/// Where a key is in a ``KeyOrderedMap``, or would be inserted: its block, the index in that
/// block, and whether the entry is there.
private struct BlockPosition {
    let block: Int
    let index: Int
    let found: Bool
}

/// Where `key` (whose rank is `rank`) is in `blocks`, or would be inserted; with no blocks,
/// block 0, index 0, not found. Not generic, not a member of the generic map: it reads the keys
/// only, and a member was compiled once for all the maps' value types, copying each entry it
/// compared through the value's witnesses (three times the instructions of a hash lookup).
private func locate(_ key: ChildKey, rank: ChildKey.Rank, in blocks: [[RankedKey]]) -> BlockPosition {
    let last = blocks.count - 1
    guard last >= 0 else { return BlockPosition(block: 0, index: 0, found: false) }
    // Keys written in ascending order (push ids) land after the last: one comparison.
    let lastCount = blocks[last].count
    let afterLast = compareRanked(blocks[last][lastCount - 1], key, rank)
    if afterLast < 0 { return BlockPosition(block: last, index: lastCount, found: false) }
    if afterLast == 0 { return BlockPosition(block: last, index: lastCount - 1, found: true) }
    // The first block whose last key is at or after `key` (the last block's is).
    var lo = 0
    var hi = last
    while lo < hi {
        let mid = (lo + hi) / 2
        let block = blocks[mid]
        if compareRanked(block[block.count - 1], key, rank) < 0 { lo = mid + 1 } else { hi = mid }
    }
    // The first index in it whose key is at or after `key`.
    let block = blocks[lo]
    var l = 0
    var h = block.count - 1
    while l < h {
        let mid = (l + h) / 2
        if compareRanked(block[mid], key, rank) < 0 { l = mid + 1 } else { h = mid }
    }
    return BlockPosition(block: lo, index: l, found: compareRanked(block[l], key, rank) == 0)
}

/// `entry`'s key against `key` (whose rank is `rank`), as ``ChildKey/compare(_:_:)``: by rank,
/// and in full only when the ranks are equal.
@inline(__always)
private func compareRanked(_ entry: RankedKey, _ key: ChildKey, _ rank: ChildKey.Rank) -> Int {
    let r = entry.rank
    if r.kind != rank.kind { return r.kind < rank.kind ? -1 : 1 }
    if r.value != rank.value { return r.value < rank.value ? -1 : 1 }
    return ChildKey.compare(entry.key, key)
}

extension KeyOrderedMap: Sendable where Value: Sendable {}

extension KeyOrderedMap: Equatable where Value: Equatable {
    /// Equal entries in the same order, however they are split into blocks.
    static func == (lhs: KeyOrderedMap, rhs: KeyOrderedMap) -> Bool {
        lhs.count == rhs.count && lhs.keys == rhs.keys && lhs.values == rhs.values
    }
}

extension KeyOrderedMap: Hashable where Value: Hashable {
    /// The entries in order, however they are split into blocks.
    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        forEach { key, value in
            hasher.combine(key)
            hasher.combine(value)
        }
    }
}
