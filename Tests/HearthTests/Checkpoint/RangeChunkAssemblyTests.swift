import Foundation
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth
@testable import HearthModel

/// A node whose children a checkpoint splits into runs (kind-1 chunks, FORMAT.md §7.1) reads
/// back as the node written — with children that have chunks of their own, its priority, and in
/// partial reads — and is put back together by joining the decoded runs' trees
/// (`ChildMap.concatenating`), so that it shares them instead of copying every child.
@Suite struct RangeChunkAssemblyTests {
    /// 1,500 messages under one room (several runs), two of them large enough for chunks of
    /// their own, the room with a priority; a second, small room beside it.
    static func cache() -> Node {
        var pairs: [(key: ChildKey, value: Node)] = []
        for m in 0..<1500 {
            let repeats = m == 1200 || m == 1499 ? 12_000 : 12
            let text = "message \(m) " + String(repeating: "lorem ", count: repeats)
            pairs.append((ChildKey("m\(10_000 + m)"), json(#"{"from":"u\#(m % 17)","text":"\#(text)"}"#)))
        }
        let room = Node(children: pairs, priority: .number(7))
        return Node(children: [
            (ChildKey("rooms"), Node(children: [(ChildKey("big"), room), (ChildKey("small"), json(#"{"a":1}"#))]))
        ])
    }

    @Test func runsReadBackAsTheNodeWrittenSharingTheDecodedRuns() throws {
        let dir = TempDir()
        let expected = Self.cache()
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(expected, at: .root)
            try store.compact()
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        defer { try? store.close() }
        let reader = try CheckpointReader(try #require(store.log.checkpoint), decodedBudget: 64 << 20)
        let runs = reader.directory.chunks.indices.filter {
            if case .range = reader.directory.chunks[$0].kind { return true }
            return false
        }
        #expect(runs.count >= 4, "the room is split into runs")
        #expect(reader.directory.chunks.contains { $0.path == "rooms/big/m11200" }, "a child with a chunk of its own")
        let whole = try reader.fullCache()
        #expect(whole == expected)
        let room = whole.child(at: "rooms/big")
        #expect(room.priority == .number(7))
        #expect(room.children.checkInvariants() == nil)
        // Shared: all but O(log n) per run of the room's tree nodes are the decoded runs' own
        // (a copy would make one per child, 1,500).
        var runNodes = Set<ObjectIdentifier>()
        for i in runs { runNodes.formUnion(try reader.chunk(i).children.treeNodeIdentities()) }
        let fresh = room.children.treeNodeIdentities().subtracting(runNodes)
        #expect(fresh.count <= runs.count * 60, "\(fresh.count) tree nodes not the runs'")
        // Partial reads (a view's, a read's) place the same chunks.
        for path: Path in ["rooms/big", "rooms/big/m11200", "rooms/big/m10007/text", "rooms/small", "rooms"] {
            #expect(try store.serverValue(at: path) == expected.child(at: path), "\(path)")
        }
        #expect(try store.state().serverCache == expected)
    }
}
