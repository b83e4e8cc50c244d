import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthModel

/// Server data reaches exactly the views at, above and below its path: ``SyncTree`` skips the
/// operation (and the tree a merge builds) only when no sync point sits there.
@Suite struct ServerDataReachTests {
    static func node(_ json: String) -> Node {
        do { return try Node(jsonText: json) } catch { fatalError("bad test JSON \(json): \(error)") }
    }

    static func child(_ key: String, _ node: Node) -> ChildUpdate {
        ChildUpdate(path: Path(keys: [ChildKey(key)]), node: node)
    }

    @Test func mergesAndOverwritesReachViewsAboveAndBelowTheirPathOnly() {
        let tree = SyncTree()
        tree.addListener(at: "up", query: .default, registration: RegistrationID(1))
        tree.addListener(at: "down/x/y", query: .default, registration: RegistrationID(2))
        tree.addListener(at: "side/a", query: .default, registration: RegistrationID(3))
        // Below the view at `up` (complete once it has its data): reaches it.
        _ = tree.applyServerOverwrite(Self.node(#"{"m":{"k":0}}"#), at: "up")
        let above = tree.applyServerMerge([Self.child("k", .number(1))], at: "up/m")
        #expect(above.contains { $0.path == "up" && $0.kind == .value })
        // Above the view at `down/x/y`: reaches it, through the merge's tree.
        let below = tree.applyServerMerge([Self.child("x", Self.node(#"{"y":{"v":2}}"#))], at: "down")
        #expect(below.contains { $0.path == "down/x/y" && $0.kind == .value })
        let overwrite = tree.applyServerOverwrite(Self.node(#"{"x":{"y":3}}"#), at: "down")
        #expect(overwrite.contains { $0.path == "down/x/y" && $0.kind == .value })
        // At the view's own path.
        let at = tree.applyServerOverwrite(.number(4), at: "side/a")
        #expect(at.contains { $0.path == "side/a" && $0.kind == .value })
        // Beside every view (a sibling of `side/a`, a path no view is on): nothing.
        #expect(tree.applyServerMerge([Self.child("k", .number(5))], at: "side/b").isEmpty)
        #expect(tree.applyServerOverwrite(.number(6), at: "elsewhere").isEmpty)
        #expect(tree.applyServerMerge([Self.child("k", .number(7))], at: "elsewhere/deep").isEmpty)
    }

    @Test func aTreeWithoutViewsRaisesNothing() {
        let tree = SyncTree()
        #expect(tree.applyServerMerge([Self.child("k", .number(1))], at: "a").isEmpty)
        #expect(tree.applyServerOverwrite(.number(1), at: .root).isEmpty)
    }
}
