@_spi(HearthInternals) import HearthLog
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// Regression tests for problems found while testing the engine core whose fix lay outside
/// `Hearth/NodeEncoding`, `Hearth/Events` and `Hearth/State`.
@Suite struct RegressionTests {
    /// `QuerySpec` builders accepted a bound value that carries a priority (e.g. a node taken
    /// from a snapshot), but `QuerySpec.json` writes it in export format
    /// (`{".value":1,".priority":2}`) and `QuerySpec(json:)` rejects that as an object bound.
    /// So `EventCodec` encodes a tracked query or pin that it then cannot decode: a log holding
    /// it would not replay. (The wire identifier's `sp` is an object too.) Fix belongs in
    /// HearthModel: bound values now drop their priority.
    @Test func boundValueWithPriorityDoesNotSurviveTheEventCodec() throws {
        let q = try QuerySpec(orderBy: .value).startAt(Node(.number(1), priority: .number(2)))
        let event = StoreEvent.pinChanged(QueryLocation(path: "a", query: q), on: true)
        let decoded = try EventCodec.decode(EventCodec.encode([event]))
        #expect(decoded == [event])
        #expect(q.identifier == #"{"i":".value","sp":1}"#)
    }

    /// Found by FuzzDecode (salvage right after a failed lazy open found the store locked):
    /// when open's own commit (marking last session's active queries inactive) failed — there,
    /// because the background load of a damaged checkpoint had already poisoned the store —
    /// open threw, leaving the background load and view rebuild, and the log with its lock,
    /// alive until the abandoned store was deallocated. Open now closes the store first.
    /// Made deterministic here by failing that commit's write.
    @Test func aFailedLazyOpenReleasesTheLockBeforeItThrows() throws {
        let fs = SimulatedFileSystem(seed: 7)
        let dir = "/db"
        var o = options(fs)
        o.lazyCacheLoad = true
        o.backgroundMaintenance = true
        do {
            let store = try Store.open(directory: dir, options: o)
            var pairs: [(key: ChildKey, value: Node)] = []
            for i in 0..<3000 { pairs.append((ChildKey("k\(i)"), .string(String(repeating: "v\(i % 10)", count: 30)))) }
            try store.applyServerOverwrite(Node(children: pairs), at: "data")
            try store.trackQuery(at: QueryLocation(path: "data", query: .default), complete: true, active: true)
            try store.compact()
            try store.close()
        }
        // Sticky: the commit's first write to its segment may be the zeros it preallocates
        // (whose failure fails nothing), its records' write comes next.
        fs.injectFault(.write, .ioError, sticky: true, pathContains: "seg-")
        do {
            let store = try Store.open(directory: dir, options: o)
            try? store.close()
            Issue.record("open should have failed: its commit's write fails")
        } catch {
            guard case .log = error else { Issue.record("unexpected error \(error)"); return }
        }
        // Open has thrown: nothing may hold the lock any more.
        fs.clearFaults()
        let log = try Log.open(directory: dir, fileSystem: fs)
        try log.close()
    }

    /// Found by FuzzDecode (arbitrary bytes as a checkpoint directory): the directory's
    /// untracked entries were set without a check, so a directory listing `a` and `a/b`
    /// loaded a state breaking the antichain invariant the reducer and pruning rely on. The
    /// reader now rejects an entry at, above or below another (FORMAT.md §7.1), with a
    /// typed error, and still reads a well-formed directory.
    @Test(arguments: [["a", "a/b"], ["a/b", "a"], ["x", "x"], ["/", "q"]] as [[Path]])
    func checkpointDirectoryRejectsNestedUntrackedEntries(_ paths: [Path]) throws {
        var nested = StoreState()
        for (i, p) in paths.enumerated() { nested.untracked.set(p, Int64(i + 1)) }
        let encoder = CheckpointEncoder(compressionLevel: 6)
        var bytes = encoder.encodeDirectory(nested, priorities: [], chunks: [])
        if paths[0] == paths[1] {
            // A PathTrie holds each path once: write the entry twice by hand. The directory
            // ends `count ‖ entries ‖ 0 priorities ‖ 0 chunks ‖ 0 order indexes` (one-byte
            // counts here).
            let none = encoder.encodeDirectory(StoreState(), priorities: [], chunks: [])
            var single = StoreState()
            single.untracked.set(paths[0], 1)
            let one = encoder.encodeDirectory(single, priorities: [], chunks: [])
            let head = Array(none[..<(none.count - 4)])
            let entry = Array(one[(head.count + 1)..<(one.count - 3)])
            #expect(one == head + [1] + entry + [0, 0, 0])
            bytes = head + [2] + entry + entry + [0, 0, 0]
        }
        #expect(throws: DecodeError.self) {
            _ = try CheckpointReader.decodeDirectory(bytes, bodyEnd: 0)
        }
        // An entry under a tracked query (tracked data is accounted to the query).
        var covered = StoreState()
        covered.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 1, location: QueryLocation(path: "t", query: .default),
                    complete: true, active: false, lastUse: 1, keys: nil)))
        covered.untracked.set("t/u", 1)
        #expect(covered.checkInvariants() != nil)
        #expect(throws: DecodeError.self) {
            _ = try CheckpointReader.decodeDirectory(
                encoder.encodeDirectory(covered, priorities: [], chunks: []), bodyEnd: 0)
        }
        var fine = StoreState()
        fine.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 1, location: QueryLocation(path: "b/c/d", query: .default),
                    complete: true, active: false, lastUse: 1, keys: nil)))
        fine.untracked.set("a", 1)
        fine.untracked.set("b/c", 2)
        let ok = try CheckpointReader.decodeDirectory(
            CheckpointEncoder(compressionLevel: 6).encodeDirectory(fine, priorities: [], chunks: []), bodyEnd: 0)
        #expect(ok.state.untrackedEntries.map(\.path) == ["a", "b/c"])
    }
}
