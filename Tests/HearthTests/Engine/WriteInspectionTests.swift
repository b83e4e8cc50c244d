import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// `Store.saveWrite` walks a user write's data once before the lock, encoding it while it
/// checks the depth and notes server values (`EventCodec.inspectedWriteBody`): it must refuse
/// exactly what the depth check refuses (`Node.nestingExceeds`, which a batch's `saveWrite`
/// uses) and find exactly the server values the separate search finds.
@Suite struct WriteInspectionTests {
    func nested(_ levels: Int, _ leaf: Node) -> Node { Node.nested(levels, leaf) }

    /// A merge's children are checked one by one, and the one nesting too deep is named by its
    /// full path (built only for the error).
    @Test func aMergeNamesItsTooDeepChildByItsFullPath() throws {
        let ok = nested(NodeCodec.maxDepth - 1, .number(1))
        let deep = nested(NodeCodec.maxDepth + 1, .number(1))
        try StoreBatch.validate([ChildUpdate(path: "x", node: ok), ChildUpdate(path: "y/z", node: ok)], at: "rooms/r1")
        expectTooDeep("rooms/r1/y/z") { () throws(StoreError) in
            try StoreBatch.validate(
                [ChildUpdate(path: "x", node: ok), ChildUpdate(path: "y/z", node: deep)], at: "rooms/r1")
        }
    }

    /// That `body` throws ``StoreError/invalidData(_:)`` `.tooDeep`, naming `expected`.
    func expectTooDeep(
        _ expected: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(StoreError) -> Void
    ) {
        do {
            try body()
            Issue.record("a too-deep merge child was accepted", sourceLocation: sourceLocation)
        } catch {
            guard case .invalidData(.tooDeep(let path)) = error else {
                Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(path == expected, sourceLocation: sourceLocation)
        }
    }

    /// The one walk's body is the plain encoding's bytes and it finds a server value exactly
    /// where the separate search does, for sets and merges, with and without server values.
    @Test func theEncodingWalkFindsWhatTheInspectionFinds() throws {
        for seed: UInt64 in 1...500 {
            var rng = SeededRandom(seed: seed)
            let values = rng.next() % 2 == 0
            let operation: PendingWrite.Operation =
                rng.next() % 3 == 0
                ? .update(SmallWorld.children(&rng, serverValues: values))
                : .set(SmallWorld.node(&rng, serverValues: values))
            let (body, serverValue, tooDeep) = EventCodec.inspectedWriteBody(operation, at: "a/b")
            #expect(tooDeep == nil, "seed \(seed)")
            #expect(body.bytes == EventCodec.writeBody(operation, at: "a/b").bytes, "seed \(seed)")
            #expect(serverValue == operation.containsServerValue, "seed \(seed): \(operation)")
            try StoreBatch.validateWrite(operation, at: "a/b")
        }
    }

    /// At and around the depth limit the encoding walk refuses exactly what the depth check
    /// refuses, names a merge's child by its full path, and the store saves nothing refused.
    @Test func theEncodingWalkRefusesExactlyWhatTheDepthCheckRefuses() throws {
        let serverValue = Node(.serverValue(.timestamp))
        for levels in [0, 1, NodeCodec.maxDepth - 1, NodeCodec.maxDepth, NodeCodec.maxDepth + 1, 80] {
            for leaf in [Node.number(1), serverValue] {
                let node = nested(levels, leaf)
                let expected: Path? = node.nestingExceeds(NodeCodec.maxDepth) ? "a" : nil
                let set = EventCodec.inspectedWriteBody(.set(node), at: "a")
                #expect(set.tooDeep == expected, "\(levels) levels")
                // A batch's saveWrite checks the depth on its own walk: the same verdict.
                let refusedByBatch = (try? StoreBatch.validateWrite(.set(node), at: "a")) == nil
                #expect(refusedByBatch == (expected != nil), "\(levels) levels")
                if expected == nil {
                    #expect(set.serverValue == (leaf == serverValue), "\(levels) levels")
                    #expect(set.body.bytes == EventCodec.writeBody(.set(node), at: "a").bytes, "\(levels) levels")
                }
                let merge = EventCodec.inspectedWriteBody(
                    .update([ChildUpdate(path: "x", node: .number(1)), ChildUpdate(path: "y/z", node: node)]), at: "a")
                #expect(merge.tooDeep == expected.map { _ in "a/y/z" }, "\(levels) levels")
            }
        }
        // A server value beside a too-deep branch: still refused.
        let both = nested(NodeCodec.maxDepth + 2, .number(1)).updatingChild("sv", serverValue)
        #expect(EventCodec.inspectedWriteBody(.set(both), at: "a").tooDeep == "a")
        // A merge's children are each inspected; one server value makes the write non-plain.
        let update = PendingWrite.Operation.update([
            ChildUpdate(path: "x", node: .number(1)), ChildUpdate(path: "y/z", node: serverValue),
        ])
        #expect(EventCodec.inspectedWriteBody(update, at: "a").serverValue)
        #expect(!EventCodec.inspectedWriteBody(.set(.number(2)), at: "a").serverValue)

        let dir = TempDir()
        let store = try Store.open(directory: dir.path)
        defer { try? store.close() }
        let ok = try store.saveWrite(.set(nested(NodeCodec.maxDepth, .number(1))), at: "rooms/r1")
        expectTooDeep("rooms/r2/y") { () throws(StoreError) in
            _ = try store.saveWrite(
                .update([ChildUpdate(path: "x", node: .number(1)), ChildUpdate(path: "y", node: both)]), at: "rooms/r2")
        }
        #expect(try store.state().pendingWrites.map(\.id) == [ok])
    }
}

extension Node {
    /// `leaf` nested under `levels` single-child levels (the depth-limit tests' data).
    static func nested(_ levels: Int, _ leaf: Node) -> Node {
        var n = leaf
        for i in 0..<levels { n = Node.empty.updatingChild(ChildKey("k\(i % 3)"), n) }
        return n
    }
}
