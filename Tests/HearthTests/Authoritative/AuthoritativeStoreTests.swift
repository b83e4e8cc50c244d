import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// The server's store: what it commits and checkpoints opens again as the same tree and
/// watermarks, a crash anywhere in a checkpoint's install keeps the committed state, a failed
/// write refuses commits until the store is reopened, and a directory either store type wrote
/// opens in the other.
@Suite struct AuthoritativeStoreTests {
    func options(_ fs: SimulatedFileSystem) -> AuthoritativeStore.Options {
        var o = AuthoritativeStore.Options()
        o.fileSystem = fs
        o.backgroundCheckpoints = false
        o.checkpointMinimumBytes = 8 << 10
        o.segmentSize = 32 << 10
        o.clock = { 1_700_000_000_000 }
        return o
    }

    /// Commits `count` writes (overwrites, merges, watermarks) to `store`, each with the tree
    /// after it, as the server does; returns that tree.
    @discardableResult
    func fill(_ store: AuthoritativeStore, from data: Node, count: Int, offset: Int = 0) throws -> Node {
        var data = data
        for i in offset..<(offset + count) {
            let room = Path(keys: ["rooms", ChildKey("r\(i % 7)")])
            if i % 3 == 0 {
                let kids = (0..<4).map { k in
                    ChildUpdate(
                        path: Path(keys: [ChildKey("m\(i)-\(k)")]), node: .string("merged \(i) \(k) lorem ipsum"))
                }
                data = data.merging(kids.map { ($0.path, $0.node) }, at: room)
                try store.commit(data: data) { (b: inout AuthoritativeBatch) throws(StoreError) in
                    try b.merge(kids, at: room)
                    try b.recordWriterWatermark("writer\(i % 5)", id: Int64(i))
                }
            } else {
                let path = room.appending(Path(keys: [ChildKey("m\(i)")]))
                let node = Node.string("message \(i) " + String(repeating: "x", count: i % 40))
                data = data.updating(path, with: node)
                try store.commit(data: data) { (b: inout AuthoritativeBatch) throws(StoreError) in
                    try b.overwrite(node, at: path)
                }
            }
        }
        return data
    }

    @Test("what is committed opens again — from checkpoints and the log after them, closed or cut")
    func openReplayRoundTrip() throws {
        for crash in [false, true] {
            let fs = SimulatedFileSystem(seed: 11)
            let opened = try AuthoritativeStore.open(directory: "/db", options: options(fs))
            #expect(opened.data == .empty)
            let data = try fill(opened.store, from: opened.data, count: 400)
            #expect(opened.store.checkpointsWritten > 0, "the log grew past the threshold")
            #expect(opened.store.checkpointLSN > 0)
            let marks = opened.store.writerWatermarks()
            #expect(marks["writer3"] == WriterWatermark(id: 393, at: 1_700_000_000_000))
            if crash {
                fs.powerCut(mode: .dropAllUnsynced)
            } else {
                try opened.store.close()
            }
            let again = try AuthoritativeStore.open(directory: "/db", options: options(fs))
            #expect(again.data == data, "crash: \(crash)")
            #expect(again.store.writerWatermarks() == marks)
            // The next commits go on from there.
            let more = try fill(again.store, from: again.data, count: 30, offset: 400)
            try again.store.close()
            let last = try AuthoritativeStore.open(directory: "/db", options: options(fs))
            #expect(last.data == more)
            try last.store.close()
        }
    }

    @Test("a crash at any file-system call of a checkpoint's install keeps the committed state", arguments: 0..<16)
    func crashDuringCheckpoint(point: Int) throws {
        func prepare(_ fs: SimulatedFileSystem) throws -> (AuthoritativeStore, Node) {
            var o = options(fs)
            o.checkpointMinimumBytes = 1 << 30  // only compact() checkpoints
            let opened = try AuthoritativeStore.open(directory: "/db", options: o)
            var data = try fill(opened.store, from: opened.data, count: 150)
            try opened.store.compact()
            data = try fill(opened.store, from: data, count: 150, offset: 150)
            return (opened.store, data)
        }
        let dry = SimulatedFileSystem(seed: 3)
        let (dryStore, _) = try prepare(dry)
        let before = dry.callCount
        try dryStore.compact()
        let calls = dry.callCount - before
        try dryStore.close()

        let fs = SimulatedFileSystem(seed: 3)
        let (store, expected) = try prepare(fs)
        let marks = store.writerWatermarks()
        fs.crash(afterCalls: 1 + point * max(1, calls / 16))
        _ = try? store.compact()
        let mode = SimulatedFileSystem.PowerCutMode.all[point % SimulatedFileSystem.PowerCutMode.all.count]
        fs.powerCut(mode: mode)
        let recovered = try AuthoritativeStore.open(directory: "/db", options: options(fs))
        #expect(recovered.data == expected, "point \(point) of \(calls), \(mode)")
        #expect(recovered.store.writerWatermarks() == marks)
        // The next checkpoint, from whichever survived, is whole too.
        let next = try fill(recovered.store, from: recovered.data, count: 10, offset: 300)
        try recovered.store.compact()
        try recovered.store.close()
        #expect(try AuthoritativeStore.open(directory: "/db", options: options(fs)).data == next)
    }

    @Test("a failed sync refuses every commit after it until the store is reopened, which keeps what was durable")
    func failedSyncPoisons() throws {
        let fs = SimulatedFileSystem(seed: 5)
        let opened = try AuthoritativeStore.open(directory: "/db", options: options(fs))
        let durable = try fill(opened.store, from: opened.data, count: 20)
        fs.injectFault(.sync, .ioError, sticky: true)
        #expect(throws: StoreError.self) { try fill(opened.store, from: durable, count: 1, offset: 20) }
        fs.clearFaults()
        do {
            try fill(opened.store, from: durable, count: 1, offset: 21)
            Issue.record("a commit after a failed one was accepted")
        } catch let error as StoreError {
            guard case .poisoned = error else { throw error }
        }
        try? opened.store.close()
        let reopened = try AuthoritativeStore.open(directory: "/db", options: options(fs))
        // The failed commit's record may or may not have reached the disk; nothing else changed.
        let failed = durable.updating("rooms/r6/m20", with: .string("message 20 " + String(repeating: "x", count: 20)))
        #expect(reopened.data == durable || reopened.data == failed)
        let after = try fill(reopened.store, from: reopened.data, count: 5, offset: 30)
        try reopened.store.close()
        #expect(try AuthoritativeStore.open(directory: "/db", options: options(fs)).data == after)
    }

    @Test("a directory a Store wrote (server data, watermarks, checkpoint and log) opens as the server's, and back")
    func interchangeableWithStore() throws {
        let fs = SimulatedFileSystem(seed: 9)
        var storeOptions = Store.Options()
        storeOptions.fileSystem = fs
        storeOptions.backgroundMaintenance = false
        let store = try Store.open(directory: "/db", options: storeOptions)
        for i in 0..<50 {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(.string("v\(i)"), at: Path(keys: ["a", ChildKey("k\(i)")]))
                try b.applyServerMerge([ChildUpdate(path: "n", node: .number(Double(i)))], at: "b")
                try b.recordWriterWatermark("w\(i % 3)", id: Int64(i))
            }
            if i == 25 { try store.compact() }
        }
        let written = try store.serverValue(at: .root)
        let marks = store.writerWatermarks()
        try store.close()

        let opened = try AuthoritativeStore.open(directory: "/db", options: options(fs))
        #expect(opened.data == written)
        #expect(opened.store.writerWatermarks() == marks)
        let data = try fill(opened.store, from: opened.data, count: 200)
        #expect(opened.store.checkpointsWritten > 0)
        let serverMarks = opened.store.writerWatermarks()
        try opened.store.close()

        let back = try Store.open(directory: "/db", options: storeOptions)
        #expect(try back.serverValue(at: .root) == data)
        #expect(back.writerWatermarks() == serverMarks)
        try back.close()
    }
}
