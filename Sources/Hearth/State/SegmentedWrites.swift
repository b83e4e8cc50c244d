import HearthModel

/// Pending writes in strictly increasing id order, held in segments of a few hundred.
///
/// Why segments. A ``StoreState`` is a value, and the store keeps more than one copy alive (the
/// committed state, a maintenance snapshot, a batch's base), so the first change after a copy
/// copies what it touches. In one flat array that is every pending write: a client draining N
/// offline writes removes the oldest one per acknowledgement and paid O(N) per commit (a
/// `memmove` and a retain per write), O(N²) per drain. Here a change copies the segment index
/// (N / ``segmentCapacity`` references) and the one segment it touches (at most
/// 2 · ``segmentCapacity`` writes): removing the oldest write, appending a newer one and finding
/// one by id all cost O(N / capacity + capacity + log N).
///
/// Invariants: no segment is empty; ids increase strictly within and across segments; no
/// segment holds more than 2 · ``segmentCapacity`` writes.
struct SegmentedWrites: Sendable, Equatable, Sequence {
    /// Writes appended per segment before a new one starts.
    static let segmentCapacity = 256

    private var segments: [[PendingWrite]] = []
    /// The number of writes.
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// The write with the least id.
    var first: PendingWrite? { segments.first?.first }

    /// The write with the greatest id.
    var last: PendingWrite? { segments.last?.last }

    /// The first segment whose last id is at least `id` (`segments.count` when none).
    private func segmentIndex(_ id: Int64) -> Int {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            // Invariant: no segment is empty.
            if segments[mid][segments[mid].count - 1].id < id { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The position of `id` in `segment` (where it would go when absent).
    private static func index(of id: Int64, in segment: [PendingWrite]) -> (found: Bool, at: Int) {
        var lo = 0, hi = segment.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segment[mid].id < id { lo = mid + 1 } else { hi = mid }
        }
        return (lo < segment.count && segment[lo].id == id, lo)
    }

    /// The write with `id`, if held.
    func write(_ id: Int64) -> PendingWrite? {
        let s = segmentIndex(id)
        guard s < segments.count else { return nil }
        let (found, at) = Self.index(of: id, in: segments[s])
        return found ? segments[s][at] : nil
    }

    /// Adds `write`, replacing the one with its id. O(1) amortized (plus one segment's copy
    /// when shared) for a write newer than every held one.
    mutating func insert(_ write: PendingWrite) {
        if last.map({ $0.id < write.id }) ?? true {
            if let l = segments.indices.last, segments[l].count < Self.segmentCapacity {
                segments[l].append(write)
            } else {
                segments.append([write])
            }
            count += 1
            return
        }
        // Older than the newest: only a crafted log holds one (the store assigns ids in order).
        let s = segmentIndex(write.id)
        assert(s < segments.count, "a write older than the newest has a segment")
        let (found, at) = Self.index(of: write.id, in: segments[s])
        if found {
            segments[s][at] = write
            return
        }
        segments[s].insert(write, at: at)
        assert(
            (at == 0 || segments[s][at - 1].id < write.id)
                && (at + 1 == segments[s].count || segments[s][at + 1].id > write.id),
            "a segment stays sorted by strictly increasing id")
        count += 1
        if segments[s].count > 2 * Self.segmentCapacity {
            let upper = Array(segments[s][Self.segmentCapacity...])
            segments[s].removeSubrange(Self.segmentCapacity...)
            segments.insert(upper, at: s + 1)
        }
    }

    /// Removes the write with `id`; returns whether it was held.
    @discardableResult
    mutating func remove(_ id: Int64) -> Bool {
        let s = segmentIndex(id)
        guard s < segments.count else { return false }
        let (found, at) = Self.index(of: id, in: segments[s])
        guard found else { return false }
        if segments[s].count == 1 {
            segments.remove(at: s)
        } else {
            segments[s].remove(at: at)
        }
        count -= 1
        assert(count >= segments.count, "no segment is empty")
        return true
    }

    /// The writes with ids above `id`, in id order.
    func writes(above id: Int64) -> [PendingWrite] {
        guard id < .max else { return [] }
        var out: [PendingWrite] = []
        let s = segmentIndex(id + 1)
        guard s < segments.count else { return out }
        let start = Self.index(of: id + 1, in: segments[s]).at
        out.append(contentsOf: segments[s][start...])
        for segment in segments[(s + 1)...] { out.append(contentsOf: segment) }
        return out
    }

    /// Every write, in id order.
    var all: [PendingWrite] {
        var out: [PendingWrite] = []
        out.reserveCapacity(count)
        for segment in segments { out.append(contentsOf: segment) }
        return out
    }

    func makeIterator() -> FlattenSequence<[[PendingWrite]]>.Iterator {
        segments.joined().makeIterator()
    }

    static func == (a: SegmentedWrites, b: SegmentedWrites) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }
}
