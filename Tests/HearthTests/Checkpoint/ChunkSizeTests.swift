import Foundation
import HearthTesting
import Testing

@_spi(HearthInternals) @testable import Hearth

/// The disk bound's estimate measures the cache from the last checkpoint's chunks where they
/// are unchanged (``ChunkOrigins/encodedSize(of:at:)``): the size must be exactly the one a
/// walk of the whole cache gives, whatever changed since — a smaller one would let a
/// checkpoint pass the planned peak on disk.
@Suite struct ChunkSizeTests {
    /// Rooms of nested messages, a node of 3,000 children (range chunks) and a leaf longer than
    /// a chunk (a whole chunk), with a priority somewhere, checkpointed; the cache as a load
    /// reads it, with its chunks' origins.
    func loaded() throws -> (cache: Node, origins: ChunkOrigins, dir: TempDir) {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        for room in 0..<12 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        let kids = (0..<3_000).map {
            (Path(keys: [ChildKey(String(format: "k%05d", $0))]), Node.string(String(repeating: "x", count: 90)))
        }
        try store.applyServerOverwrite(Node.empty.merging(kids).withPriority(.number(3)), at: "big")
        try store.applyServerOverwrite(.string(String(repeating: "long ", count: 30_000)), at: "leaf")
        try store.compact()
        let reader = try CheckpointReader(try #require(store.log.checkpoint))
        let (cache, origins) = try reader.fullCacheWithOrigins()
        try store.close()
        #expect(origins.chunks.contains { if case .whole = $0.kind { true } else { false } }, "no whole chunk")
        #expect(origins.chunks.filter { if case .range = $0.kind { true } else { false } }.count >= 10)
        return (cache, origins, dir)
    }

    @Test(arguments: [
        "unchanged", "a child inside a range", "a child removed from a range", "a child added between",
        "the long leaf", "a priority", "a room removed", "a room added", "everything replaced",
    ])
    func theSizeIsTheWalksExactly(change: String) throws {
        let (cache, origins, _) = try loaded()
        var changed = cache
        switch change {
        case "unchanged": break
        case "a child inside a range": changed = changed.updating("big/k01500", with: .string("y"))
        case "a child removed from a range": changed = changed.updating("big/k00010", with: .empty)
        case "a child added between": changed = changed.updating("big/k01500a", with: .number(1))
        case "the long leaf": changed = changed.updating("leaf", with: .string(String(repeating: "z", count: 70_000)))
        case "a priority": changed = changed.updating("big", with: changed.child(at: "big").withPriority(.string("p")))
        case "a room removed": changed = changed.updating("rooms/r3", with: .empty)
        case "a room added": changed = changed.updating("rooms/r99", with: Gen.chatRoom(99))
        default: changed = Node.empty.updating("other", with: .bool(true))
        }
        #expect(origins.encodedSize(of: changed) == NodeCodec.encodedSize(changed), "\(change)")
    }
}
