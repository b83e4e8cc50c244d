import HearthModel
import Testing
@testable import HearthDatabase

@Suite struct ReferencePathsTests {
    let root = offlineDatabase().reference()

    @Test(arguments: [
        ("a", "/a"),
        ("a/b", "/a/b"),
        ("/a//b/", "/a/b"),
        ("a///b/b//", "/a/b/b"),  // js-sdk path.test.ts: '/a///b/b//' equals '/a/b/b'
        ("/", "/"),
        ("//", "/"),
        ("ünï/çødé ✔", "/ünï/çødé ✔"),
        ("-Nabc_DEF", "/-Nabc_DEF"),
        (".info", "/.info"),
        ("/.info/connected", "/.info/connected"),
        ("//.info", "/.info"),
    ])
    func validChildPaths(path: String, expected: String) {
        let ref = root.child(path)
        #expect(ref.invalid == nil)
        #expect(ref.pathString == expected)
    }

    @Test(arguments: [
        "", "a.b", "a#b", "a$b", "a[b", "a]b", ".priority", ".value", ".infox", ".info.", "a/.info",
        "a/b.c/d", "\u{1}", "a\u{1F}", "a\u{7F}", "\n",
    ])
    func invalidChildPaths(path: String) {
        let ref = root.child(path)
        guard case .invalidPath(let message)? = ref.invalid else {
            Issue.record("\(path) was accepted")
            return
        }
        #expect(!message.isEmpty)
    }

    @Test func infoIsOnlyAllowedFromTheRoot() {
        #expect(root.child(".info").isInfo)
        #expect(root.child(".info").child("connected").isInfo)
        #expect(root.child(".info/serverTimeOffset").invalid == nil)
        #expect(root.child("a").child(".info").invalid != nil)
        #expect(root.child("a").isInfo == false)
        #expect(root.child("info").isInfo == false)
    }

    @Test func keyLengthLimitIs768Bytes() {
        let ok = String(repeating: "a", count: 768)
        #expect(root.child(ok).invalid == nil)
        #expect(root.child(ok + "a").invalid != nil)
        // 256 three-byte characters are 768 bytes; one more is too long.
        let wide = String(repeating: "€", count: 256)
        #expect(root.child(wide).invalid == nil)
        #expect(root.child(wide + "€").invalid != nil)
    }

    @Test func invalidityPropagatesThroughChildAndParent() {
        let bad = root.child("a.b")
        #expect(bad.invalid != nil)
        #expect(bad.child("c").invalid == bad.invalid)
        #expect(bad.child("c").parent?.invalid == bad.invalid)
        #expect(bad.key == nil)
        #expect(bad.root.invalid == nil)
        // A later bad key does not replace the first error.
        #expect(bad.child("x$y").invalid == bad.invalid)
    }

    @Test func parentRootAndKey() {
        // js-sdk path.test.ts "parent() returns the parent".
        let c = root.child("/a/b/c")
        #expect(c.key == "c")
        #expect(c.parent?.pathString == "/a/b")
        #expect(c.parent?.parent?.pathString == "/a")
        #expect(c.parent?.parent?.parent?.pathString == "/")
        #expect(c.parent?.parent?.parent?.parent == nil)
        #expect(c.root == root)
        #expect(root.parent == nil)
        #expect(root.key == nil)
        #expect(c.parent?.key == "b")
    }

    @Test func childrenOfChildrenEqualMultiSegmentChildren() {
        #expect(root.child("a").child("b/c") == root.child("a/b/c"))
        #expect(root.child("a").child("b") != root.child("a/c"))
        #expect(root.child("a/b").path == Path(keys: ["a", "b"]))
    }

    @Test func urlPercentEncodesKeysAsEncodeURIComponent() {
        let ref = root.child("a b/ü/x!y~z*'()?&=%")
        #expect(
            ref.url(rootURL: "https://demo.firebaseio.com")
                == "https://demo.firebaseio.com/a%20b/%C3%BC/x!y~z*'()%3F%26%3D%25")
        #expect(root.url(rootURL: "https://demo.firebaseio.com/") == "https://demo.firebaseio.com")
        #expect(root.child("k").url(rootURL: "http://localhost:9000") == "http://localhost:9000/k")
    }
}
