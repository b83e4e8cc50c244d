import HearthModel
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// ``SegmentedWrites`` against a sorted array: random inserts (mostly newest, some older,
/// some replacing), removes (mostly oldest, as acknowledgements do), lookups and "above"
/// queries, with copies taken along the way that must not change (value semantics across
/// shared segments).
@Suite struct SegmentedWritesTests {
    func write(_ id: Int64, _ tag: Int = 0) -> PendingWrite {
        PendingWrite(id: id, path: Path(keys: ["w", ChildKey("k\(id % 7)")]), operation: .set(.number(Double(tag))))
    }

    @Test(arguments: [1, 2, 3, 4])
    func matchesASortedArray(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var model: [PendingWrite] = []
        var subject = SegmentedWrites()
        var snapshots: [(SegmentedWrites, [PendingWrite])] = []
        var nextID: Int64 = 1
        for step in 0..<6_000 {
            let r = rng.next() % 100
            if r < 45 {
                // Newest.
                let w = write(nextID, step)
                nextID += Int64(1 + rng.next() % 3)
                model.append(w)
                subject.insert(w)
            } else if r < 50, nextID > 1 {
                // Older than the newest: a replacement or a gap filled.
                let id = Int64(1 + rng.next() % UInt64(nextID - 1))
                let w = write(id, step)
                if let i = model.firstIndex(where: { $0.id >= id }) {
                    if model[i].id == id { model[i] = w } else { model.insert(w, at: i) }
                } else {
                    model.append(w)
                }
                subject.insert(w)
            } else if r < 85, !model.isEmpty {
                // The oldest (an acknowledgement).
                let w = model.removeFirst()
                let removed = subject.remove(w.id)
                #expect(removed)
            } else if r < 92, !model.isEmpty {
                // Any.
                let i = Int(rng.next() % UInt64(model.count))
                let removed = subject.remove(model.remove(at: i).id)
                #expect(removed)
            } else if r < 94 {
                let removed = subject.remove(nextID + 5)
                #expect(!removed, "an id never inserted")
            } else if r < 97 {
                snapshots.append((subject, model))
            } else {
                let id = Int64(rng.next() % UInt64(nextID + 1))
                #expect(subject.writes(above: id) == model.filter { $0.id > id })
                #expect(subject.write(id) == model.first { $0.id == id })
            }
            #expect(subject.count == model.count)
            #expect(subject.last == model.last)
            if step % 500 == 0 { #expect(subject.all == model, "step \(step)") }
        }
        #expect(subject.all == model)
        #expect(Array(subject) == model)
        #expect(subject.writes(above: .max).isEmpty)
        for (copy, expected) in snapshots { #expect(copy.all == expected) }
    }

    @Test func segmentsSplitWhenOlderWritesFillOne() {
        var s = SegmentedWrites()
        // Even ids first, then the odd ones between them: inserts in the middle of full segments.
        for id in stride(from: Int64(2), through: 4_000, by: 2) { s.insert(write(id)) }
        for id in stride(from: Int64(1), through: 3_999, by: 2) { s.insert(write(id)) }
        #expect(s.count == 4_000)
        #expect(s.all.map(\.id) == Array(1...4_000))
        for id in Int64(1)...4_000 {
            let removed = s.remove(id)
            #expect(removed)
        }
        #expect(s.isEmpty && s.last == nil)
    }
}
