import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A crash at any file-system call of a checkpoint that copies chunks of the previous one
/// (ChunkOrigins, WriteChunkMemo), followed by any kind of power cut, recovers exactly the
/// state committed before it: the old checkpoint and its log, or the new checkpoint.
@Suite struct ChunkReuseCrashTests {
    /// Builds a store on `fs`: 24 rooms of 120 messages and 1,000 pending writes, checkpointed
    /// (the write chunks are remembered, the cache dropped); then changes one room,
    /// acknowledges a write and adds some (durably), loads the whole cache again (the origins)
    /// and returns the store and its state.
    func prepare(_ fs: SimulatedFileSystem) throws -> (Store, StoreState) {
        let store = try Store.open(directory: "/db", options: options(fs))
        for room in 0..<24 {
            var pairs: [(key: ChildKey, value: Node)] = []
            for m in 0..<120 {
                pairs.append(
                    (
                        ChildKey("m\(1000 + m)"),
                        json(#"{"text":"message \#(m) in room \#(room) \#(String(repeating: "lorem ", count: 15))"}"#)
                    ))
            }
            try store.applyServerOverwrite(Node(children: pairs), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        var ids: [Int64] = []
        for i in 0..<1000 {
            ids.append(
                try store.saveWrite(
                    .set(.string("pending \(i) " + String(repeating: "w", count: 80))),
                    at: Path(keys: ["outbox", ChildKey("w\(i)")])))
        }
        try store.compact()  // drops the resident cache at its end
        let reopened = store
        try reopened.applyServerOverwrite(.string("changed"), at: "rooms/r7/m1010/text")
        try reopened.ackWrite(ids[150])
        for i in 1000..<1010 {
            try reopened.saveWrite(.set(.string("late \(i)")), at: Path(keys: ["outbox", ChildKey("w\(i)")]))
        }
        return (reopened, try reopened.state())
    }

    @Test(arguments: 0..<20)
    func aCrashDuringAReusingCheckpointRecoversTheCommittedState(point: Int) throws {
        // The number of file-system calls the reusing checkpoint makes, from a run without a crash.
        let dry = SimulatedFileSystem(seed: 5)
        let (dryStore, _) = try prepare(dry)
        let before = dry.callCount
        try dryStore.compact()
        let calls = dry.callCount - before
        let counters = dryStore.resident.counters.withLock { $0 }
        #expect(counters.copiedChunks >= 3, "\(counters)")
        #expect(counters.copiedWriteChunks >= 3, "\(counters)")
        try dryStore.close()

        let fs = SimulatedFileSystem(seed: 5)
        let (store, expected) = try prepare(fs)
        fs.crash(afterCalls: 1 + point * max(1, calls / 20))
        _ = try? store.compact()
        let mode = SimulatedFileSystem.PowerCutMode.all[point % SimulatedFileSystem.PowerCutMode.all.count]
        fs.powerCut(mode: mode)
        let recovered = try Store.open(directory: "/db", options: options(fs))
        let state = try recovered.state()
        #expect(state.serverCache == expected.serverCache, "point \(point) of \(calls), \(mode)")
        #expect(state.pendingWrites == expected.pendingWrites, "point \(point) of \(calls), \(mode)")
        // And the next checkpoint, from whichever checkpoint survived, is whole too.
        try recovered.applyServerOverwrite(.string("again"), at: "rooms/r3/m1001/text")
        _ = try recovered.state()
        try recovered.compact()
        try recovered.close()
        let last = try Store.open(directory: "/db", options: options(fs))
        #expect(try last.serverValue(at: "rooms/r3/m1001/text") == .string("again"))
        #expect(try last.state().pendingWrites == expected.pendingWrites)
        try last.close()
    }
}
