import Foundation
import HearthModel
import HearthTesting
import Testing

@testable import Hearth

/// `Store.Options.logCompressionLevel` reaches the log's records (checkpoints keep
/// `compressionLevel`), any level reads back the same (0: stored uncompressed), and a level
/// outside 0…9 is refused.
@Suite struct LogCompressionLevelTests {
    /// A few KiB of chat-like JSON that deflates well, and differently at levels 1 and 9.
    static func message(_ i: Int, _ rng: inout SplitMix64) -> Node {
        let words = ["hey", "ok", "see", "you", "at", "the", "game", "tonight", "lol", "sure", "score", "level"]
        var fields: [String] = []
        for j in 0..<40 {
            let text = (0..<(4 + Int(rng.next() % 9))).map { _ in words[Int(rng.next() % UInt64(words.count))] }
            fields.append(
                #""m\#(j)":{"author":"user\#(rng.next() % 50)","text":"\#(text.joined(separator: " "))","ts":\#(1_700_000_000_000 + i * 1000 + j)}"#
            )
        }
        return try! Node(jsonText: "{" + fields.joined(separator: ",") + "}")
    }

    /// The store's footprint (its log's records) after `count` server writes at `level` (no checkpoint
    /// yet), and the store's value after a reopen.
    static func logBytes(level: Int32, count: Int) throws -> (bytes: Int, value: Node, expected: Node) {
        let dir = TempDir()
        var o = options()
        o.logCompressionLevel = level
        o.checkpointMinimumBytes = 64 << 20
        var rng = SplitMix64(seed: 7)
        var expected = Node.empty
        let store = try Store.open(directory: dir.path, options: o)
        for i in 0..<count {
            let node = message(i, &rng)
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
        // 30 records of ~3.5 KB of JSON each: stored raw, they take more than twice level 1's.
        #expect(raw.bytes > 2 * fast.bytes, "level 0: \(raw.bytes) bytes, level 1: \(fast.bytes)")
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
