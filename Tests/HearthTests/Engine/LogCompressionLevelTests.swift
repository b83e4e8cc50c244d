import Foundation
import HearthModel
import HearthTesting
import Testing

@_spi(HearthInternals) @testable import Hearth

/// `Store.Options.logCompressionLevel` reaches the log's records of 64 KiB or more
/// (checkpoints keep `compressionLevel`), shorter records are stored raw at every level
/// (`Store.rawRecordLimit`), any level reads back the same (0: stored uncompressed), and a level
/// outside 0…9 is refused.
@Suite struct LogCompressionLevelTests {
    /// `fields` chat-like messages of JSON (~90 bytes each) that deflate well, and differently at
    /// levels 1 and 9.
    static func message(_ i: Int, _ rng: inout SeededRandom, fields count: Int) -> Node {
        let words = ["hey", "ok", "see", "you", "at", "the", "game", "tonight", "lol", "sure", "score", "level"]
        var fields: [String] = []
        for j in 0..<count {
            let text = (0..<(4 + Int(rng.next() % 9))).map { _ in words[Int(rng.next() % UInt64(words.count))] }
            fields.append(
                #""m\#(j)":{"author":"user\#(rng.next() % 50)","text":"\#(text.joined(separator: " "))","ts":\#(1_700_000_000_000 + i * 1000 + j)}"#
            )
        }
        return try! Node(jsonText: "{" + fields.joined(separator: ",") + "}")
    }

    /// The store's footprint (its log's records) after `count` server writes of `fields` messages
    /// each at `level` (no checkpoint yet), and the store's value after a reopen. 1,000 fields make
    /// a ~77 KB record, above `Store.rawRecordLimit`.
    static func logBytes(
        level: Int32, count: Int, fields: Int = 1000
    ) throws -> (bytes: Int, value: Node, expected: Node) {
        let dir = TempDir()
        // A cap large enough that its log share (a fifth) does not make a checkpoint due either.
        var o = options(cap: 100 << 20)
        o.logCompressionLevel = level
        o.checkpointMinimumBytes = 64 << 20
        var rng = SeededRandom(seed: 7)
        var expected = Node.empty
        let store = try Store.open(directory: dir.path, options: o)
        for i in 0..<count {
            let node = message(i, &rng, fields: fields)
            let path = Path(keys: ["rooms", ChildKey("r\(i)")])
            try store.applyServerOverwrite(node, at: path)
            expected = expected.updating(path, with: node)
        }
        // The store's footprint counts the log's records, not the zeros a segment is preallocated
        // with (FORMAT.md §4.2), which file sizes would include in page-sized steps.
        let bytes = Int(try store.stats().footprintBytes)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: o)
        defer { try? reopened.close() }
        return (bytes, try reopened.serverValue(at: .root), expected)
    }

    @Test func theLevelReachesTheLogRecordsAndEveryLevelReadsBack() throws {
        let fast = try Self.logBytes(level: 1, count: 30)
        let small = try Self.logBytes(level: 9, count: 30)
        #expect(fast.value == fast.expected)
        #expect(small.value == small.expected)
        // Level 1 skips the lazy matching level 9 does: its records are larger.
        #expect(fast.bytes > small.bytes, "level 1: \(fast.bytes) bytes, level 9: \(small.bytes)")
    }

    @Test func level0StoresRecordsUncompressedAndReadsBack() throws {
        let raw = try Self.logBytes(level: 0, count: 30)
        let fast = try Self.logBytes(level: 1, count: 30)
        #expect(raw.value == raw.expected)
        // 30 records of ~77 KB of JSON each: stored raw, they take more than twice level 1's.
        #expect(raw.bytes > 2 * fast.bytes, "level 0: \(raw.bytes) bytes, level 1: \(fast.bytes)")
    }

    /// Records under `Store.rawRecordLimit` (here ~3.5 KB) are raw at every level; one field
    /// more than the limit needs is compressed.
    @Test func recordsUnderTheRawLimitAreStoredRawAtEveryLevel() throws {
        let raw = try Self.logBytes(level: 0, count: 30, fields: 40)
        let small = try Self.logBytes(level: 9, count: 30, fields: 40)
        #expect(small.value == small.expected)
        #expect(small.bytes == raw.bytes, "level 9: \(small.bytes) bytes, level 0: \(raw.bytes)")
        let limit = Store.rawRecordLimit
        var rng = SeededRandom(seed: 7)
        let below = EventCodec.encode([
            .serverOverwrite(path: "rooms/r0", node: Self.message(0, &rng, fields: 40), at: 0)
        ])
        #expect(below.count < limit)
        let above = try Self.logBytes(level: 9, count: 30, fields: 1000)
        let aboveRaw = try Self.logBytes(level: 0, count: 30, fields: 1000)
        #expect(2 * above.bytes < aboveRaw.bytes)
    }

    @Test func aLevelOutside0To9IsRefused() {
        for level: Int32 in [10, -1] {
            var o = options()
            o.logCompressionLevel = level
            let dir = TempDir()
            #expect(throws: StoreError.self) { try Store.open(directory: dir.path, options: o) }
        }
    }
}
