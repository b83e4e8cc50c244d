import Dispatch
import HearthModel
import Testing
@testable import HearthDatabase

/// Snapshots' and references' Firebase properties.
@Suite("Firebase's reference and snapshot properties")
struct ReferenceSurfaceTests {
    func database(_ url: String) throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.surface.refs")
        return try Database(url: url, options: o)
    }

    /// A snapshot's key is a `String`, empty at the root, as Firebase's.
    @Test func aSnapshotsKeyIsAString() throws {
        let db = try database("ws://127.0.0.1:9?ns=keys")
        let root: String = DataSnapshot(ref: db.reference(), node: .empty).key
        #expect(root == "")
        #expect(DataSnapshot(ref: db.reference(withPath: "a/b"), node: .empty).key == "b")
        try db.close()
    }

    /// A reference reads as a query does: `ref` is itself, `url` where it is.
    @Test func aReferenceHasRefAndURL() throws {
        let db = try database("ws://127.0.0.1:9000?ns=demo")
        let ref = db.reference(withPath: "users/a b")
        #expect(ref.ref == ref)
        #expect(ref.queryLimited(toFirst: 1).ref == ref.ref)
        #expect(ref.url == "http://127.0.0.1:9000/users/a%20b?ns=demo")
        #expect(db.reference().url == "http://127.0.0.1:9000/?ns=demo")
        try db.close()
        let named = try database("wss://demo.firebaseio.com")
        #expect(named.reference(withPath: "x").url == "https://demo.firebaseio.com/x")
        try named.close()
    }
}
