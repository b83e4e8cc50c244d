import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog
import HearthTesting

/// Pending writes kept encoded in the checkpoint (body format 2) and given to the views region
/// by region after open: every read, query and listener still sees every pending
/// write, whatever was read, acknowledged or written before the rest was decoded, across
/// restarts, and a body of format 1 still opens.
@Suite struct LazyPendingWritesTests {
    /// Locations read before close and after reopen: inside one region, beside it, above
    /// several, the root, and nowhere.
    static let probes: [Path] = [
        "a/m00005", "a/m01234", "a", "b/x/17", "b/x", "b", "c", "c/k3", "c/k3/deep", "d/1/2", "", "zzz",
    ]

    /// A store whose checkpoint holds some 4,000 pending writes in many chunks: sets on
    /// siblings `a/mNNNNN`, sets under `b/x` with an overwrite of `b` among them (so that
    /// `b/x/…` written before it are shadowed and those after it land inside it), updates at
    /// `c`, a deep set, server data under all of them; plus a few writes in the log after it.
    static func build(_ dir: String, clock: TestClock) throws -> [Int64] {
        let store = try Store.open(directory: dir, options: options(clock: clock))
        try store.applyServerOverwrite(json(#"{"m00001":{"n":-1},"zz":"server"}"#), at: "a")
        try store.applyServerOverwrite(json(#"{"x":{"1":"s1","999":"s999"},"y":true}"#), at: "b")
        var ids: [Int64] = []
        for i in 0..<3000 {
            let key = ChildKey("m" + String(String(100_000 + i).dropFirst()))
            ids.append(
                try store.saveWrite(
                    .set(Node(children: [("n", .number(Double(i))), ("t", .string("hello \(i)"))])),
                    at: Path(keys: ["a", key])))
            if i % 3 == 0 {
                ids.append(
                    try store.saveWrite(
                        .set(.number(Double(i))), at: Path(keys: ["b", "x", ChildKey(String(i % 100))])))
            }
            if i == 1500 { ids.append(try store.saveWrite(.set(json(#"{"x":{"0":"over"},"z":1}"#)), at: "b")) }
            if i % 500 == 0 {
                ids.append(
                    try store.saveWrite(
                        .update([
                            ChildUpdate(path: Path(keys: [ChildKey("k\(i % 7)")]), node: .number(Double(i))),
                            ChildUpdate(path: "k3/deep", node: .string("d\(i)")),
                        ]), at: "c"))
            }
        }
        ids.append(try store.saveWrite(.set(.string("deep")), at: "d/1/2"))
        try store.compact()
        // A few more after the checkpoint: replayed from the log.
        ids.append(try store.saveWrite(.set(.string("tail")), at: "a/m00005"))
        ids.append(try store.saveWrite(.set(.number(7)), at: "b/x/17"))
        try store.close()
        return ids
    }

    /// The values at the probes, a query and the pending writes, as a store sees them.
    static func snapshot(_ store: Store) throws -> (values: [Node], query: [ChildKey], writes: [PendingWrite]) {
        let values = try probes.map { try store.value(at: $0) }
        let query = try store.query(try QuerySpec(orderBy: .key).limitToLast(3), at: "a").window.keys
        return (values, query, store.pendingWrites())
    }

    static func chunks(_ store: Store) -> [LazyWriteChunk] {
        store.core.withLock { $0.loading.state.writes.chunks }
    }

    @Test func everyPendingWriteIsVisibleAfterReopenWithoutDecodingThemAll() throws {
        let dir = TempDir(), clock = TestClock()
        _ = try LazyPendingWritesTests.build(dir.path, clock: clock)
        // The reference: every write decoded at open (the eager path) …
        var eager = options(clock: clock)
        eager.lazyCacheLoad = false
        let reference = try Store.open(directory: dir.path, options: eager)
        #expect(LazyPendingWritesTests.chunks(reference).count > 4)
        let expected = try LazyPendingWritesTests.snapshot(reference)
        let state = try reference.state()
        try reference.close()
        // … which is also the reference model's overlay (pending writes over the server cache).
        for (path, value) in zip(LazyPendingWritesTests.probes, expected.values) {
            #expect(state.localValue(at: path, now: clock()) == value, "model at \(path)")
        }
        #expect(expected.values[0] == .string("tail") && expected.values[3] == .number(7))

        // Lazy: open decodes no chunk; one read decodes only the chunks on its way.
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        let chunks = LazyPendingWritesTests.chunks(store)
        #expect(chunks.count == LazyPendingWritesTests.chunks(reference).count)
        #expect(chunks.allSatisfy { !$0.isDecoded })
        #expect(try store.value(at: "a/m00005") == .string("tail"))
        let decoded = chunks.filter(\.isDecoded).count
        #expect(decoded >= 1 && decoded < chunks.count / 2, "\(decoded) of \(chunks.count) chunks decoded by one read")
        // Every probe, the query and the list agree with the eager store, probe by probe.
        let got = try LazyPendingWritesTests.snapshot(store)
        for (i, path) in LazyPendingWritesTests.probes.enumerated() {
            #expect(got.values[i] == expected.values[i], "value at \(path)")
        }
        #expect(got.query == expected.query)
        #expect(got.writes == expected.writes)
        // A listener on a region not read yet sees its writes.
        let seen = Seen()
        let token = try store.addListener(at: "b/x") { event in
            if event.kind == .value { seen.set(event.node) }
        }
        store.waitForEventDelivery()
        #expect(seen.get() == expected.values[4])
        try store.removeListener(token)
        try store.close()
    }

    @Test func acksRevertsAndNewWritesBeforeTheRestIsDecodedAndAfterRestart() throws {
        let dir = TempDir(), clock = TestClock()
        let ids = try LazyPendingWritesTests.build(dir.path, clock: clock)
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        // One region read; then acks and reverts of writes in chunks never decoded, in
        // regions read and unread.
        _ = try store.value(at: "a/m00005")
        let acked = [ids[1], ids[2], ids[ids.count / 2], ids[ids.count - 3]]
        for id in acked { try store.ackWrite(id) }
        try store.revertWrite(ids[ids.count / 3])
        #expect(throws: StoreError.self) { try store.ackWrite(ids[1]) }
        // Checking an id decodes at most the one chunk whose id range holds it.
        #expect(LazyPendingWritesTests.chunks(store).contains { !$0.isDecoded })
        // A new write above a region whose old writes were never restored: they reach the
        // views first, under it.
        let overB = try store.saveWrite(.update([ChildUpdate(path: "x/5", node: .string("new"))]), at: "b")
        let gone = Set(acked + [ids[ids.count / 3]])
        var values = try LazyPendingWritesTests.probes.map { try store.value(at: $0) }
        #expect(try store.value(at: "b/x/5") == .string("new"))
        // The reference model (decodes every chunk).
        var expected = try LazyPendingWritesTests.modelValues(store, clock: clock)
        #expect(values == expected)
        #expect(!store.pendingWrites().contains { gone.contains($0.id) })
        #expect(store.pendingWrites().last?.id == overB)

        // Restart: the acks, reverts and the new write are in the log after the checkpoint.
        try store.close()
        store = try Store.open(directory: dir.path, options: options(clock: clock))
        values = try LazyPendingWritesTests.probes.map { try store.value(at: $0) }
        #expect(values == expected)
        #expect(!store.pendingWrites().contains { gone.contains($0.id) })
        // A checkpoint of the partly decoded state, and again after a restart.
        try store.ackWrite(ids[0])
        try store.compact()
        expected = try LazyPendingWritesTests.modelValues(store, clock: clock)
        try store.close()
        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(try LazyPendingWritesTests.probes.map { try store.value(at: $0) } == expected)
        #expect(try store.state().pendingWrites.count == ids.count - gone.count - 1 + 1)
        #expect(try store.state().checkInvariants() == nil)
        try store.close()
    }

    /// The reference model's values at the probes (the store's state, decoded whole).
    static func modelValues(_ store: Store, clock: TestClock) throws -> [Node] {
        let state = try store.state()
        return probes.map { state.localValue(at: $0, now: clock()) }
    }

    @Test func aCheckpointOfBodyFormat1StillOpens() throws {
        let dir = TempDir(), clock = TestClock()
        _ = try LazyPendingWritesTests.build(dir.path, clock: clock)
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        let expected = try LazyPendingWritesTests.snapshot(store)
        let state = try store.state()
        let lsn = store.lastLSN
        try store.close()
        // Rewrite the checkpoint as an earlier build did: pending writes in the directory.
        let log = try Log.open(directory: dir.path, fileSystem: POSIXFileSystem(), options: Log.Options())
        var v1 = CheckpointEncoder(compressionLevel: 6)
        v1.bodyVersion = 1
        try log.installCheckpoint(lsn: lsn) { writer in _ = try v1.encode(state) { try writer.write($0) } }
        let reader = try CheckpointReader(try #require(log.checkpoint))
        #expect(reader.directory.writeChunks.isEmpty && reader.directory.state.pendingWrites == state.pendingWrites)
        try log.close()

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        let got = try LazyPendingWritesTests.snapshot(store)
        #expect(got.values == expected.values && got.query == expected.query && got.writes == expected.writes)
        // The next checkpoint is format 2 again.
        try store.saveWrite(.set(.number(1)), at: "e")
        try store.compact()
        try store.close()
        let after = try Log.open(directory: dir.path, fileSystem: POSIXFileSystem(), options: Log.Options())
        #expect(try !CheckpointReader(try #require(after.checkpoint)).directory.writeChunks.isEmpty)
        try after.close()
    }

    @Test func aDamagedWriteChunkFailsTheReadsThatNeedItAndTheWholeState() throws {
        let dir = TempDir(), clock = TestClock()
        _ = try LazyPendingWritesTests.build(dir.path, clock: clock)
        let log = try Log.open(directory: dir.path, fileSystem: POSIXFileSystem(), options: Log.Options())
        let checkpoint = try #require(log.checkpoint)
        let chunk = try #require(try CheckpointReader(checkpoint).directory.writeChunks.first)
        let file = dir.path + "/" + checkpoint.fileName
        try log.close()
        // Flip a byte inside the first write chunk (writes a/m00000…): its CRC no longer holds.
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        try handle.seek(toOffset: 64 + chunk.offset + 3)
        let byte = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: 64 + chunk.offset + 3)
        try handle.write(contentsOf: [byte ^ 0x40])
        try handle.close()

        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        // Far from that chunk: fine.
        #expect(try store.value(at: "d/1/2") == .string("deep"))
        let failure: StoreError?
        do {
            _ = try store.value(at: "a/m00001")
            failure = nil
        } catch {
            failure = error
        }
        let text = failure.map { "\($0)" } ?? "no error"
        #expect(
            text.contains(checkpoint.fileName) && text.contains("pending-write chunk 0") && text.contains("checksum"),
            "\(text)")
        // A batch asking for a write of that chunk (as a sync client does before an ack) sees
        // none, and the commit fails with the damage instead of going on with that answer.
        var sawWrite: Bool?
        do {
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                sawWrite = b.pendingWrite(1) != nil
                if sawWrite == true { try b.revertWrite(1) }
            }
            Issue.record("a commit that read a write of the damaged chunk succeeded")
        } catch {
            #expect("\(error)".contains("pending-write chunk 0"), "\(error)")
        }
        #expect(sawWrite == false)
        #expect(throws: StoreError.self) { try store.state() }
        #expect(throws: StoreError.self) { try store.saveWrite(.set(.number(1)), at: "a/m00001") }
        try? store.close()
    }
}

/// The last value a listener saw.
private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var node: Node?
    func set(_ n: Node) { lock.withLock { node = n } }
    func get() -> Node? { lock.withLock { node } }
}
