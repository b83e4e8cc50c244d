import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog

/// A client store's writer identities (FORMAT.md §11.7): each pending write keeps the writer id
/// it was created under through log replay, checkpoints (write chunks read lazily included) and
/// reopening; an incarnation records its writer once, with its first write; the form earlier
/// builds wrote (one writer id for the whole store, in the log or a format 3 checkpoint) reads
/// as that id for every write.
@Suite struct WriterIdentityTests {
    /// Saves `count` writes of ~450 bytes under `writer` (a few dozen fill several write chunks
    /// of a checkpoint), one commit each as a client makes them; returns their ids.
    func save(_ store: Store, _ count: Int, writer: String?) throws -> [Int64] {
        try (0..<count).map { i in
            let node = json(#"{"n":\#(i),"text":"\#(String(repeating: "pending write ", count: 30))"}"#)
            let path = Path(keys: ["outbox", ChildKey("\(writer ?? "plain")\(i)")])
            var id: Int64 = 0
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                if let writer {
                    id = try b.saveWrite(.set(node), at: path, writer: writer)
                } else {
                    id = try b.saveWrite(.set(node), at: path)
                }
            }
            return id
        }
    }

    /// Each pending write's writer id, as the store says.
    func writers(_ store: Store) -> [Int64: String] {
        let table = store.writerIdentities()
        var out: [Int64: String] = [:]
        for w in store.pendingWrites() { out[w.id] = table.writer(of: w.id) ?? "none" }
        return out
    }

    func runs(_ store: Store) -> [String] {
        store.writerIdentities().runs.map { "\($0.firstWriteID):\($0.writer)" }
    }

    @Test func eachPendingWriteKeepsItsWriterThroughReplayAndCheckpoints() throws {
        let dir = TempDir(), clock = TestClock()
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        let a = try save(store, 40, writer: "A"), b = try save(store, 40, writer: "B")
        try store.commit { (batch: inout StoreBatch) throws(StoreError) in
            for id in a.prefix(10) { try batch.ackWrite(id) }
        }
        var expected: [Int64: String] = [:]
        for id in a.dropFirst(10) { expected[id] = "A" }
        for id in b { expected[id] = "B" }
        #expect(writers(store) == expected, "as written")
        try store.close()

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(writers(store) == expected, "replayed from the log")
        _ = try store.compact()
        try store.close()

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        let chunks = try CheckpointReader(try #require(store.log.checkpoint)).directory.writeChunks
        #expect(chunks.count >= 2, "the pending writes span several write chunks")
        #expect(runs(store) == ["1:A", "41:B"], "the runs come from the directory")
        #expect(writers(store) == expected, "restored from the checkpoint")

        // A third incarnation after the checkpoint: its run is in the log, the others in the
        // checkpoint.
        let c = try save(store, 3, writer: "C")
        for id in c { expected[id] = "C" }
        try store.close()
        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(writers(store) == expected, "checkpoint and log together")
        #expect(runs(store) == ["1:A", "41:B", "81:C"])

        // Once A's writes are all answered, A's run is forgotten when the next one begins.
        try store.commit { (batch: inout StoreBatch) throws(StoreError) in
            for id in a.dropFirst(10) { try batch.ackWrite(id) }
        }
        #expect(runs(store) == ["1:A", "41:B", "81:C"], "nothing is forgotten before a run begins")
        let d = try save(store, 1, writer: "D")
        #expect(runs(store) == ["41:B", "81:C", "84:D"])
        for id in a { expected[id] = nil }
        expected[d[0]] = "D"
        #expect(writers(store) == expected)
        _ = try store.compact()
        try store.close()
        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(runs(store) == ["41:B", "81:C", "84:D"], "the checkpoint holds the table as it is")
        #expect(writers(store) == expected)
        try store.close()
    }

    @Test func anIncarnationRecordsItsWriterOnceWithItsFirstWrite() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        func identities(_ r: Store.CommitResult) -> [StoreEvent] {
            r.events.filter { if case .writerIdentity = $0 { true } else { false } }
        }
        let first = try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.saveWrite(.set(.number(1)), at: "a", writer: "A")
            try b.saveWrite(.set(.number(2)), at: "b", writer: "A")
        }
        #expect(first.events.count == 3)
        #expect(first.events.first == .writerIdentity(writer: "A", firstWriteID: 1), "before the write, same batch")
        let again = try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.saveWrite(.set(.number(3)), at: "c", writer: "A")
        }
        #expect(identities(again).isEmpty, "the store's newest writes are A's already")

        // A batch that fails commits nothing, its identity event included: the next one records it.
        #expect(throws: StoreError.self) {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.saveWrite(.set(.number(4)), at: "d", writer: "B")
                try b.saveWrite(.set(.number(4)), at: ".info/connected", writer: "B")
            }
        }
        #expect(store.writerID() == "A")
        let next = try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.saveWrite(.set(.number(4)), at: "d", writer: "B")
        }
        #expect(identities(next) == [.writerIdentity(writer: "B", firstWriteID: 4)])
        #expect(store.writerIdentities().writer(of: 3) == "A" && store.writerIdentities().writer(of: 4) == "B")
        try store.close()
    }

    /// The form earlier builds wrote — `writerIdentity` without a first write id (tag 22), in the
    /// log and in a format 3 checkpoint — names the writer of every write of the store, before
    /// and after the event, as those builds stamped them; the next incarnation's writes get
    /// their own id.
    @Test func aStoreOfAnEarlierBuildKeepsItsWriterForEveryWrite() throws {
        let dir = TempDir(), clock = TestClock()
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        let before = try save(store, 2, writer: nil)
        let logged = try store.commit { (b: inout StoreBatch) throws(StoreError) in
            b.events.append(.writerIdentity(writer: "old", firstWriteID: nil))
        }
        #expect(EventCodec.encode(logged.events) == [1, 22, 3] + Array("old".utf8), "format 3's bytes")
        let after = try save(store, 1, writer: nil)
        let legacy = Dictionary(uniqueKeysWithValues: (before + after).map { ($0, "old") })
        #expect(writers(store) == legacy)
        try store.close()

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(writers(store) == legacy, "replayed from the log")
        try closeWithCheckpoint(store, directory: dir.path, bodyVersion: 3)  // as a format 3 build writes it

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(writers(store) == legacy, "read from a format 3 checkpoint")
        #expect(runs(store) == ["0:old"])
        let new = try save(store, 1, writer: "new")
        var expected = legacy
        expected[new[0]] = "new"
        #expect(writers(store) == expected)
        _ = try store.compact()
        try store.close()
        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(writers(store) == expected, "through a format 4 checkpoint")
        #expect(runs(store) == ["0:old", "4:new"])
        try store.close()
    }

    /// Each body format takes only its own form of the writer id in the directory: format 3
    /// the one id (tag 22), format 4 the runs (tag 23) in increasing order.
    @Test func theDirectoryTakesItsFormatsForm() throws {
        var state = StoreState()
        state.apply(.writerIdentity(writer: "A", firstWriteID: 1))
        state.apply(.writeSaved(PendingWrite(id: 1, path: "a", operation: .set(.number(1)))))
        state.apply(.writerIdentity(writer: "B", firstWriteID: 2))
        #expect(state.writerIdentities.runs.map(\.writer) == ["A", "B"])
        let v4 = CheckpointEncoder(compressionLevel: 6).encodeDirectory(state, priorities: [], chunks: [])
        #expect(try CheckpointReader.decodeDirectory(v4, bodyEnd: 0).state.writerIdentities == state.writerIdentities)
        var relabelled = v4
        relabelled[0] = 3
        #expect(throws: DecodeError.self) {
            try CheckpointReader.decodeDirectory(relabelled, bodyEnd: 0, bodyVersion: 3)
        }

        var encoder3 = CheckpointEncoder(compressionLevel: 6)
        encoder3.bodyVersion = 3
        let v3 = encoder3.encodeDirectory(state, priorities: [], chunks: [])
        let read3 = try CheckpointReader.decodeDirectory(v3, bodyEnd: 0, bodyVersion: 3).state.writerIdentities
        #expect(read3.runs.map(\.writer) == ["B"] && read3.writer(of: 1) == "B", "format 3 knew one id")
        relabelled = v3
        relabelled[0] = 4
        #expect(throws: DecodeError.self) {
            try CheckpointReader.decodeDirectory(relabelled, bodyEnd: 0, bodyVersion: 4)
        }

        // Runs out of order: a directory of format 4 whose batch holds B from 5, then A from 3.
        let batch = EventCodec.encode([
            .writerIdentity(writer: "B", firstWriteID: 5), .writerIdentity(writer: "A", firstWriteID: 3),
        ])
        let raw: [UInt8] = [4, 5, 0, 0, 0, UInt8(batch.count)] + batch + [0, 0, 0, 0]
        #expect(throws: DecodeError.self) { try CheckpointReader.decodeDirectory(raw, bodyEnd: 0, bodyVersion: 4) }
    }

    @Test func theEventsBytes() throws {
        let legacy = StoreEvent.writerIdentity(writer: "ab", firstWriteID: nil)
        let run = StoreEvent.writerIdentity(writer: "ab", firstWriteID: 300)
        #expect(EventCodec.encode([legacy]) == [1, 22, 2, 0x61, 0x62])
        #expect(EventCodec.encode([run]) == [1, 23, 2, 0x61, 0x62, 0xAC, 0x02])
        #expect(try EventCodec.decode([1, 22, 2, 0x61, 0x62]) == [legacy])
        #expect(try EventCodec.decode([1, 23, 2, 0x61, 0x62, 0xAC, 0x02]) == [run])
        #expect(throws: DecodeError.self) { try EventCodec.decode([1, 23, 0, 1]) }  // empty writer
        #expect(throws: DecodeError.self) { try EventCodec.decode([1, 23, 1, 0x61]) }  // no first id
    }

    /// The client's write path (`Store.saveWrite(_:at:writer:durability:)`, encoded before the
    /// lock) leaves what a batch of each write alone leaves: each writer recorded once, with its
    /// first write, the same ids, writers and runs, before and after reopening; and the LSN it
    /// returns is its record's, made durable by `waitUntilDurable`.
    @Test func theWritePathRecordsWritersAsABatchDoes() throws {
        let sequence = ["A", "A", "B", "B", "B", "A", "C"]
        func node(_ i: Int) -> Node { json(#"{"n":\#(i),"text":"\#(String(repeating: "w", count: 80))"}"#) }
        func path(_ i: Int) -> Path { Path(keys: ["outbox", ChildKey("w\(i)")]) }
        let batchDir = TempDir(), pathDir = TempDir(), clock = TestClock()
        var batched = try Store.open(directory: batchDir.path, options: options(clock: clock))
        var direct = try Store.open(directory: pathDir.path, options: options(clock: clock))
        var lastLSN: LSN = 0
        for (i, writer) in sequence.enumerated() {
            var id: Int64 = 0
            try batched.commit { (b: inout StoreBatch) throws(StoreError) in
                id = try b.saveWrite(.set(node(i)), at: path(i), writer: writer)
            }
            let saved = try direct.saveWrite(.set(node(i)), at: path(i), writer: writer, durability: .buffered)
            #expect(saved.id == id)
            #expect(saved.lsn > lastLSN, "each write's own record")
            lastLSN = saved.lsn
            try direct.waitUntilDurable(saved.lsn)
        }
        #expect(runs(direct) == ["1:A", "3:B", "6:A", "7:C"])
        #expect(runs(direct) == runs(batched))
        #expect(writers(direct) == writers(batched))
        #expect(direct.pendingWrites() == batched.pendingWrites())
        #expect(throws: StoreError.self) {
            try direct.saveWrite(.set(node(0)), at: path(0), writer: "", durability: nil)
        }
        try batched.close()
        try direct.close()
        batched = try Store.open(directory: batchDir.path, options: options(clock: clock))
        direct = try Store.open(directory: pathDir.path, options: options(clock: clock))
        #expect(runs(direct) == runs(batched))
        #expect(writers(direct) == writers(batched))
        try batched.close()
        try direct.close()
    }
}
