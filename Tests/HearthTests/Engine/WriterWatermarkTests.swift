import Foundation
import HearthLog
import Testing
@_spi(HearthInternals) @testable import Hearth

/// The store's side of exactly-once writes (FORMAT.md §11.7): a client store's writer id, a
/// server store's writer watermarks, committed with the data, kept through replay, checkpoints
/// and reopening; and write ids that never go back.
@Suite struct WriterWatermarkTests {
    /// Watermarks and the writer id survive a reopen from the log, a checkpoint, and a reopen
    /// from the checkpoint; a watermark never goes back; removal forgets.
    @Test func watermarksPersistThroughReplayCheckpointAndReopen() throws {
        let dir = TempDir(), clock = TestClock()
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(.number(1), at: "n")
            try b.recordWriterWatermark("alice", id: 7)
            try b.saveWrite(.set(.number(1)), at: "mine", writer: "self")
        }
        clock.advance(10)
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.recordWriterWatermark("bob", id: 3)
            try b.recordWriterWatermark("alice", id: 5)  // lower: the id stays 7, the time moves
            try b.recordWriterWatermark("carol", id: 1)
        }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.removeWriterWatermarks(["carol", "nobody"])
        }
        let expected = store.writerWatermarks()
        #expect(expected.mapValues(\.id) == ["alice": 7, "bob": 3])
        #expect(expected["alice"]!.at == expected["bob"]!.at, "a lower id still refreshes the time")
        try store.close()

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(store.writerWatermarks() == expected, "replayed from the log")
        #expect(store.writerID() == "self")
        _ = try store.compact()
        try store.close()

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(store.writerWatermarks() == expected, "restored from the checkpoint")
        #expect(store.writerID() == "self")
        #expect(try store.serverValue(at: "n") == .number(1))
        let state = try store.state()
        #expect(state.writerWatermarks == expected)
        try store.close()
    }

    /// The checkpoint directory holds the watermarks (since body format 3); a format 2
    /// directory holding one is refused (a format 2 reader would not know it).
    @Test func checkpointDirectoryHoldsTheWatermarks() throws {
        var state = StoreState()
        state.apply(.writerIdentity(writer: "me", firstWriteID: 1))
        state.apply(.writerWatermark(writer: "w1", id: 9, at: 100))
        state.apply(.writerWatermark(writer: "é", id: 2, at: 50))
        let encoder = CheckpointEncoder(compressionLevel: 6)
        let raw = encoder.encodeDirectory(state, priorities: [], chunks: [])
        let decoded = try CheckpointReader.decodeDirectory(raw, bodyEnd: 0, bodyVersion: CheckpointFormat.version)
        #expect(decoded.state.writerWatermarks == state.writerWatermarks)
        #expect(decoded.state.writerID == "me")
        var v2 = CheckpointEncoder(compressionLevel: 6)
        v2.bodyVersion = 2
        let rawV2 = v2.encodeDirectory(state, priorities: [], chunks: [])
        #expect(
            try CheckpointReader.decodeDirectory(rawV2, bodyEnd: 0, bodyVersion: 2).state.writerWatermarks.isEmpty,
            "format 2 has no place for them")
        // This build's directory bytes relabelled as format 2: the writer events are refused.
        var relabelled = raw
        relabelled[0] = 2
        #expect(throws: DecodeError.self) {
            try CheckpointReader.decodeDirectory(relabelled, bodyEnd: 0, bodyVersion: 2)
        }
    }

    /// A store whose checkpoint an earlier build wrote (body format 2) opens, and its next
    /// checkpoint holds the watermarks.
    @Test func format2CheckpointStillOpens() throws {
        let dir = TempDir(), clock = TestClock()
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        try store.applyServerOverwrite(.string("x"), at: "a")
        try store.saveWrite(.set(.number(2)), at: "b")
        try closeWithCheckpoint(store, directory: dir.path, bodyVersion: 2)

        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(try store.serverValue(at: "a") == .string("x"))
        #expect(store.pendingWrites().map(\.id) == [1])
        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.recordWriterWatermark("w", id: 4) }
        _ = try store.compact()
        try store.close()
        store = try Store.open(directory: dir.path, options: options(clock: clock))
        #expect(store.writerWatermarks()["w"]?.id == 4)
        try store.close()
    }

    /// Bad writer ids and negative write ids are refused with a typed error; nothing is written.
    @Test func invalidWritersAreRefused() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let long = String(repeating: "x", count: EventCodec.maxWriterLength + 1)
        for (writer, id) in [("", Int64(1)), (long, 1), ("ok", -1)] {
            #expect(throws: StoreError.self) {
                try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.recordWriterWatermark(writer, id: id)
                }
            }
        }
        for writer in ["", long] {
            #expect(throws: StoreError.self) {
                try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    try b.saveWrite(.set(.number(1)), at: "a", writer: writer)
                }
            }
        }
        #expect(store.writerWatermarks().isEmpty && store.writerID() == nil && store.pendingWrites().isEmpty)
        try store.close()
    }

    /// Write ids strictly increase for the store's life: after every write is acknowledged,
    /// after a checkpoint that holds no pending write, and after reopening from it, the next id
    /// is above every id handed out before (the server deduplicates by them).
    @Test func writeIDsNeverGoBack() throws {
        let dir = TempDir(), clock = TestClock()
        var store = try Store.open(directory: dir.path, options: options(clock: clock))
        var last: Int64 = 0
        for round in 0..<4 {
            let a = try store.saveWrite(.set(.number(Double(round))), at: "a")
            let b = try store.saveWrite(.set(.number(Double(round))), at: "b")
            #expect(a > last && b > a, "round \(round)")
            last = b
            try store.commit { (batch: inout StoreBatch) throws(StoreError) in
                try batch.applyAckedWrite(a)
                try batch.revertWrite(b)
            }
            #expect(store.pendingWrites().isEmpty)
            if round % 2 == 0 { _ = try store.compact() }
            try store.close()
            store = try Store.open(directory: dir.path, options: options(clock: clock))
        }
        let next = try store.saveWrite(.set(.number(9)), at: "c")
        #expect(next == last + 1)
        try store.close()
    }
}

/// Closes `store` and installs, at its last LSN, a checkpoint of its whole state in body format
/// `bodyVersion`, as an earlier build wrote one.
func closeWithCheckpoint(_ store: Store, directory: String, bodyVersion: UInt32) throws {
    let state = try store.state()
    let lsn = store.lastLSN
    try store.close()
    let log = try Log.open(directory: directory, fileSystem: POSIXFileSystem(), options: Log.Options())
    var encoder = CheckpointEncoder(compressionLevel: 6)
    encoder.bodyVersion = bodyVersion
    try log.installCheckpoint(lsn: lsn) { writer in _ = try encoder.encode(state) { try writer.write($0) } }
    try log.close()
}
