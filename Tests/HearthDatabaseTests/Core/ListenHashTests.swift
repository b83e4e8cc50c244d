import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// The hash a listen is sent with describes what its view shows (Firebase hashes the view's
/// server cache), so that the server's silence when it matches leaves the view right.
@Suite struct ListenHashTests {
    func node(_ json: String) -> Node { try! Node(jsonText: json) }

    /// Found by the simulator (seed 117 of the v2 workload): a client's `limitToFirst` view
    /// at `/k` showed a child the server had deleted. The client had once listened at `/`
    /// (a complete default query, kept in the store after the unlisten, its view materialized
    /// and no longer fed); the child was deleted while only the filtered listen heard of it —
    /// its window moved on, the cached child stayed (a window says nothing of the children
    /// outside it). After a restart the filtered view took its server cache from the complete
    /// view above it (as Firebase's sync tree does), stale child included, while the listen's
    /// hash came from the persisted rules (the query's tracked keys: the server's window). The
    /// hash matched, the server sent nothing, and the view stayed wrong. The hash now comes
    /// from the view's server cache when there is a view (`Store.listenServerCache(for:)`).
    @Test func hashDescribesTheViewBuiltFromAStaleCompleteAncestor() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("listenhash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = Store.Options()
        options.backgroundMaintenance = false
        let root = QueryLocation(path: .root, query: .default)
        let window = QueryLocation(path: "k", query: try QuerySpec.default.limitToFirst(2))
        do {
            let store = try Store.open(directory: dir, options: options)
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                // A default listen at the root, answered.
                try b.setQueryActive(root)
                try b.applyServerOverwrite(node(#"{"k":{"a":1,"b":2,"c":3}}"#), at: .root)
                try b.applyListenComplete(root)
                // The filtered listen at /k, answered with its window.
                try b.setQueryActive(window)
                try b.applyTaggedServerOverwrite(node(#"{"a":1,"b":2}"#), at: "k", for: window)
                try b.applyListenComplete(window)
            }
            // The root listen stops; then `a` is deleted on the server, which only the
            // filtered listen hears about: its window is now b, c.
            try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.setQueryInactive(root) }
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyTaggedServerOverwrite(node(#"{"b":2,"c":3}"#), at: "k", for: window)
            }
            try store.close()
        }
        let store = try Store.open(directory: dir, options: options)
        defer { try? store.close() }
        _ = try store.addListener(at: window.path, query: window.query) { _ in }
        let shown = try store.query(window.query, at: window.path)
        // What the persisted rules give: the server's window.
        let persisted = try #require(try store.serverCache(for: window))
        #expect(persisted.node == node(#"{"b":2,"c":3}"#))
        // The hash is of what the view shows (whatever that is): were it of the persisted
        // window while the view shows the stale one, the server would stay silent.
        #expect(shown.complete)
        #expect(Database.cachedHash(store, window) == shown.window.node.hash)
        if shown.window.node != persisted.node {
            #expect(
                Database.cachedHash(store, window) != persisted.node.hash,
                "the stale view must not be reported as the server's window")
        }
    }
}
