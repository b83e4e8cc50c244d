import Synchronization
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog
import HearthTesting

/// `Store.saveWrite` encodes the write's path and data before the store's lock and adds only
/// the id under it (`EventCodec.writeBody`, `Store.queueWrite`): the record, the state and the
/// views must be exactly those of a `StoreBatch.saveWrite` commit.
@Suite struct SaveWriteFastPathTests {
    @Test func aBodyWithItsIdIsTheBatchOfTheOneEvent() throws {
        for seed: UInt64 in 1...300 {
            var rng = SeededRandom(seed: seed)
            guard case .writeSaved(let random) = Gen.event(&rng, kind: 2) else {
                Issue.record("kind 2 is writeSaved")
                return
            }
            // Ids whose varints take 1, 2 and 10 bytes, and the generator's.
            for id in [random.id, 0, 1, 127, 128, 300, Int64.max] {
                let write = PendingWrite(id: id, path: random.path, operation: random.operation)
                let fast = EventCodec.writeSavedBatch(id: id, EventCodec.writeBody(write.operation, at: write.path))
                #expect(fast == EventCodec.encode([.writeSaved(write)]), "seed \(seed), id \(id)")
                #expect(try EventCodec.decode(fast) == [.writeSaved(write)], "seed \(seed), id \(id)")
            }
        }
    }

    @Test func fastAndBatchedWritesShareOneIdSequenceAndSurviveReopen() throws {
        let dir = TempDir()
        let clock = TestClock()
        var ids: [Int64] = []
        let live: StoreState
        let liveValue: Node
        do {
            let store = try Store.open(directory: dir.path, options: options(clock: clock))
            for i in 0..<20 {
                let path = Path(keys: ["rooms", ChildKey("r\(i % 3)"), ChildKey("m\(i)")])
                if i % 4 == 3 {
                    var id: Int64 = 0
                    try store.commit { (b: inout StoreBatch) throws(StoreError) in
                        id = try b.saveWrite(.set(.string("batched \(i)")), at: path)
                    }
                    ids.append(id)
                } else if i % 4 == 2 {
                    ids.append(
                        try store.saveWrite(.update([ChildUpdate(path: "n", node: .number(Double(i)))]), at: path))
                } else {
                    ids.append(
                        try store.saveWrite(.set(json(#"{"text":"m\#(i)","ts":{".sv":"timestamp"}}"#)), at: path))
                }
            }
            #expect(ids == Array(ids[0]..<(ids[0] + 20)), "every id one above the last, whichever path saved it")
            #expect(store.pendingWrites().map(\.id) == ids)
            live = try store.state()
            liveValue = try store.value(at: "rooms")
            #expect(liveValue.child(at: "r0/m0/ts") == .number(Double(clock())))
            #expect(liveValue.child(at: "r2/m2/n") == .number(2))
            #expect(liveValue.child(at: "r0/m3") == .string("batched 3"))
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(store.pendingWrites().map(\.id) == ids)
        #expect(try store.state().writes == live.writes)
        #expect(try store.value(at: "rooms") == liveValue)
        // The next id follows the recovered ones.
        #expect(try store.saveWrite(.set(.bool(true)), at: "after") == ids[19] + 1)
        try store.close()
    }

    @Test func listenersAtAboveAndBelowTheWriteSeeIt() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let seen = Mutex<[Path: [ViewEvent]]>([:])
        let paths: [Path] = ["chat", "chat/room", "chat/room/m1", "chat/room/m1/text", "elsewhere"]
        for path in paths {
            try store.addListener(at: path) { event in seen.withLock { $0[path, default: []].append(event) } }
        }
        try store.saveWrite(.set(json(#"{"text":"hi","n":1}"#)), at: "chat/room/m1")
        store.waitForEventDelivery()
        seen.withLock { seen in
            // Its parent's view: the child it adds (no value event: the view is incomplete; the
            // view at `chat` sees only part of `room`, and Firebase raises nothing for that).
            let room = seen["chat/room"]?.first { $0.kind == .childAdded }
            #expect(room?.childKey == "m1" && room?.node == json(#"{"text":"hi","n":1}"#))
            // At and below it: the value.
            #expect(seen["chat/room/m1"]?.last { $0.kind == .value }?.node == json(#"{"text":"hi","n":1}"#))
            #expect(seen["chat/room/m1/text"]?.last { $0.kind == .value }?.node == .string("hi"))
            #expect(seen["elsewhere"] == nil, "a write elsewhere raises nothing there")
        }
        // A listener added after the write, and a read, see it too.
        let later = Mutex<[ViewEvent]>([])
        try store.addListener(at: "chat/room") { event in later.withLock { $0.append(event) } }
        store.waitForEventDelivery()
        let added = later.withLock { $0 }.first { $0.kind == .childAdded }
        #expect(added?.childKey == "m1" && added?.node.child("text") == .string("hi"))
        #expect(try store.value(at: "chat/room/m1/text") == .string("hi"))
        #expect(try store.value(at: "chat").child(at: "room/m1/n") == .number(1))
        try store.close()
    }

    /// The record: a write under 64 KiB stored raw (`Store.rawRecordLimit`), a large one's
    /// compressed with the id's bytes in a stored block ahead of the body deflated before the
    /// lock (`SplitPayload`) — both the payload of the one `.writeSaved` event.
    @Test func smallWritesAreLoggedRawAndLargeOnesDeflatedAroundTheirId() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        // ~1.8 KB: compressed before the limit was 64 KiB, raw since.
        let small = Node.string(String(repeating: "a long and repetitive message ", count: 60))
        let large = Node.string(String(repeating: "a long and repetitive message ", count: 2500))
        let update = [ChildUpdate(path: "a", node: large), ChildUpdate(path: "b/c", node: .number(3))]
        let ids = [
            try store.saveWrite(.set(small), at: "chat/m1"),
            try store.saveWrite(.set(large), at: "chat/m2"),
            try store.saveWrite(.update(update), at: "chat/m3"),
        ]
        let writes = [
            PendingWrite(id: ids[0], path: "chat/m1", operation: .set(small)),
            PendingWrite(id: ids[1], path: "chat/m2", operation: .set(large)),
            PendingWrite(id: ids[2], path: "chat/m3", operation: .update(update)),
        ]
        let reader = store.log.reader(after: 0)
        var records: [LogRecord] = []
        while let r = try reader.next() { records.append(r) }
        let saved = records.filter { (try? EventCodec.decode($0.payload))?.count == 1 }.suffix(3)
        #expect(saved.map(\.payload) == writes.map { EventCodec.encode([.writeSaved($0)]) })
        #expect(saved.map { $0.storedSize < $0.rawSize } == [false, true, true])
        #expect(EventCodec.writeBody(.set(small), at: "chat/m1").bytes.count < Store.rawRecordLimit)
        #expect(EventCodec.writeBody(.set(large), at: "chat/m2").bytes.count >= Store.rawRecordLimit)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(reopened.pendingWrites() == writes)
        try reopened.close()
    }

    /// A write holding a server value reaches the views resolved, whether it is a set or an
    /// update (the fast path looks for server values before the lock; a plain write skips the
    /// look under it).
    @Test func serverValuesInFastPathWritesReachTheViewsResolved() throws {
        let dir = TempDir()
        let clock = TestClock()
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        let seen = Mutex<[Path: Node]>([:])
        let paths: [Path] = ["chat/m1/ts", "chat/m2/ts", "chat/m3/t"]
        for path in paths {
            try store.addListener(at: path) { event in
                if event.kind == .value { seen.withLock { $0[path] = event.node } }
            }
        }
        try store.saveWrite(.set(json(#"{"ts":{".sv":"timestamp"},"t":"x"}"#)), at: "chat/m1")
        try store.saveWrite(.update([ChildUpdate(path: "m2/ts", node: json(#"{".sv":"timestamp"}"#))]), at: "chat")
        try store.saveWrite(.set(json(#"{"t":"plain"}"#)), at: "chat/m3")
        store.waitForEventDelivery()
        seen.withLock { seen in
            #expect(seen["chat/m1/ts"] == .number(Double(clock())))
            #expect(seen["chat/m2/ts"] == .number(Double(clock())))
            #expect(seen["chat/m3/t"] == .string("plain"))
        }
        try store.close()
    }

    @Test func aClosedStoreRefusesTheWrite() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.close()
        #expect(throws: StoreError.self) { try store.saveWrite(.set(.bool(true)), at: "a") }
    }
}
