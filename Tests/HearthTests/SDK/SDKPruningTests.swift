// Ports of the storage engines' pruning tests — firebase-ios-sdk
// `FirebaseDatabase/Tests/Unit/FPruningTest.m` (at eed63a35; it runs each case on
// `FLevelDBStorageEngine` and on a mock engine) and firebase-android-sdk
// `firebase-database/src/androidTest/.../core/persistence/PruningTest.java` (at a089298e, on
// `SqlPersistenceStorageEngine`; the same cases plus two) — run against Hearth's store.
//
// The SDK calls `pruneCache(pruneForest, atPath: P)`: below `P`, prune the forest's prune paths
// except its keep paths. Hearth's pruner commits the same thing as one event,
// `.cachePruned(PruneResult(prunedPaths:keptPaths:removedQueryIDs:))` with absolute paths
// (FORMAT.md §11.5: "for each pruned path, the cached data there is replaced by only the data
// at the kept paths strictly below it"), so each test commits that event for the SDK's forest
// and checks the cache live, after a reopen and from a checkpoint (`Engine.expectPersisted`).
//
// | SDK test (iOS = Android unless noted)  | Hearth test | notes |
// |----------------------------------------|-------------|-------|
// | test010 … test170, test190 … test220   | test010 … test170, test190 … test220 | |
// | test180                                | test180 | iOS keeps `a/aa`, Android keeps `a` (its comment's case): both asserted |
// | testPruningBelowDocuments1 (Android)   | pruningBelowDocuments1 | diverges on purpose: SQLite stores data in rows ("documents") and ignores a row above the prune location, so the SDK keeps ABC whole; Hearth's cache is one tree, so pruning `a` removes the data at `a` whoever wrote it (`{b,c}` remains). Hearth's pruner never prunes below cached data it does not own either way (pruned paths are tracked-query or untracked-entry paths) |
// | testPruningBelowDocuments2 (Android)   | pruningBelowDocuments2 | as above: DEF (written at `a`) is pruned, and so is ABC's `a` |
// | the iOS mock-engine runs               | n/a | Hearth has one engine |
import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth

@Suite struct SDKPruningTests {
    typealias Engine = SDKLevelDBStorageEngineTests.Engine

    static let abc = json(#"{"a":{"aa":1.1,"ab":1.2},"b":2,"c":3}"#)
    static let def = json(#"{"d":4,"e":5,"f":6}"#)
    static let aNode = json(#"{"a":{"aa":1.1,"ab":1.2}}"#)
    static let dNode = json(#"{"d":4}"#)
    static let bcNode = abc.updatingChild("a", .empty)
    static let large = SDKLevelDBStorageEngineTests.leafNodeOfSize(5 * 1024 * 1024)

    /// A prune forest: prune `path`, keeping `except` (relative to `path`).
    struct Forest {
        let path: Path
        let except: [Path]
    }

    static func prune(_ path: Path, except: [Path] = []) -> Forest { Forest(path: path, except: except) }

    /// `[engine pruneCache:forest atPath:location]`, as the event the pruner commits.
    func pruneCache(_ e: Engine, _ forest: Forest, at location: Path) throws {
        let pruned = location.appending(forest.path)
        let result = PruneResult(
            prunedPaths: [pruned], keptPaths: forest.except.map { pruned.appending($0) }, removedQueryIDs: [])
        try e.commit { b in b.events.append(.cachePruned(result)) }
        #expect(try e.store.state().checkInvariants() == nil)
    }

    func write(_ e: Engine, _ writes: [(Path, Node)]) throws {
        for (path, node) in writes { try e.overwrite(node, at: path) }
    }

    /// Writes, prunes, and expects `expected` at `read` (persisted).
    func run(_ writes: [(Path, Node)], prune forest: Forest, at location: Path, read: Path, expected: Node) throws {
        let e = try Engine()
        try write(e, writes)
        try pruneCache(e, forest, at: location)
        try e.expectPersisted { _ throws in
            let got = try e.serverCache(read)
            #expect(SDKLevelDBStorageEngineTests.same(got, expected), "\(got.childCount) children")
        }
    }

    // Write document at root, prune it.
    @Test func test010() throws {
        try run([(.root, Self.abc)], prune: Self.prune(.root), at: .root, read: .root, expected: .empty)
    }

    // Write document at /x, prune it via PruneForest for /x, at root.
    @Test func test020() throws {
        try run([("x", Self.abc)], prune: Self.prune("x"), at: .root, read: .root, expected: .empty)
    }

    // Write document at /x, prune it via PruneForest for root, at /x.
    @Test func test030() throws {
        try run([("x", Self.abc)], prune: Self.prune(.root), at: "x", read: "x", expected: .empty)
    }

    // Write document at /x, prune it via PruneForest for root, at root.
    @Test func test040() throws {
        try run([("x", Self.abc)], prune: Self.prune(.root), at: .root, read: "x", expected: .empty)
    }

    // Write document at /x/y, prune it via PruneForest for /y, at /x.
    @Test func test050() throws {
        try run([("x/y", Self.abc)], prune: Self.prune("y"), at: "x", read: "x/y", expected: .empty)
    }

    // Write abc at /x/y, prune /x/y except b,c via PruneForest for /x/y -b,c, at root.
    @Test func test060() throws {
        try run(
            [("x/y", Self.abc)], prune: Self.prune("x/y", except: ["b", "c"]), at: .root, read: "x/y",
            expected: Self.bcNode)
    }

    // Write abc at /x/y, prune /x/y except b,c via PruneForest for /y -b,c, at /x.
    @Test func test070() throws {
        try run(
            [("x/y", Self.abc)], prune: Self.prune("y", except: ["b", "c"]), at: "x", read: "x/y", expected: Self.bcNode
        )
    }

    // Write abc at /x/y, prune /x/y except not-there via PruneForest for /x/y -d, at root.
    @Test func test080() throws {
        try run(
            [("x/y", Self.abc)], prune: Self.prune("x/y", except: ["not-there"]), at: .root, read: "x/y",
            expected: .empty)
    }

    // Write abc at / and def at /a, prune all via PruneForest for / at root.
    @Test func test090() throws {
        try run(
            [(.root, Self.abc), ("a", Self.def)], prune: Self.prune(.root), at: .root, read: .root, expected: .empty)
    }

    // Write abc at / and def at /a, prune all except b,c via PruneForest for root -b,c, at root.
    @Test func test100() throws {
        try run(
            [(.root, Self.abc), ("a", Self.def)], prune: Self.prune(.root, except: ["b", "c"]), at: .root, read: .root,
            expected: Self.bcNode)
    }

    // Write abc at /x and def at /x/a, prune /x except b,c via PruneForest for /x -b,c, at root.
    @Test func test110() throws {
        try run(
            [("x", Self.abc), ("x/a", Self.def)], prune: Self.prune("x", except: ["b", "c"]), at: .root, read: "x",
            expected: Self.bcNode)
    }

    // Write abc at /x and def at /x/a, prune /x except b,c via PruneForest for root -b,c, at /x.
    @Test func test120() throws {
        try run(
            [("x", Self.abc), ("x/a", Self.def)], prune: Self.prune(.root, except: ["b", "c"]), at: "x", read: "x",
            expected: Self.bcNode)
    }

    // Write abc at /x and def at /x/a, prune /x except a via PruneForest for /x -a, at root.
    @Test func test130() throws {
        let e = try Engine()
        try write(e, [("x", Self.abc), ("x/a", Self.def)])
        #expect(try e.serverCache("x") == Self.abc.updatingChild("a", Self.def))
        try pruneCache(e, Self.prune("x", except: ["a"]), at: .root)
        try e.expectPersisted { _ throws in
            #expect(try e.serverCache("x") == Node.empty.updatingChild("a", Self.def))
        }
    }

    // Write abc at /x and def at /x/a, prune /x except a via PruneForest for root -a, at /x.
    @Test func test140() throws {
        try run(
            [("x", Self.abc), ("x/a", Self.def)], prune: Self.prune(.root, except: ["a"]), at: "x", read: "x",
            expected: Node.empty.updatingChild("a", Self.def))
    }

    // Write abc at /x and def at /x/a, prune /x except a/d via PruneForest for /x -a/d, at root.
    @Test func test150() throws {
        try run(
            [("x", Self.abc), ("x/a", Self.def)], prune: Self.prune("x", except: ["a/d"]), at: .root, read: "x",
            expected: Node.empty.updatingChild("a", Self.dNode))
    }

    // Write abc at /x and def at /x/a, prune /x except a/d via PruneForest for / -a/d, at /x.
    @Test func test160() throws {
        try run(
            [("x", Self.abc), ("x/a", Self.def)], prune: Self.prune(.root, except: ["a/d"]), at: "x", read: "x",
            expected: Node.empty.updatingChild("a", Self.dNode))
    }

    // Write abc at /x and def at /x/a/aa, prune /x except a via PruneForest for /x -a, at root.
    @Test func test170() throws {
        try run(
            [("x", Self.abc), ("x/a/aa", Self.def)], prune: Self.prune("x", except: ["a"]), at: .root, read: "x",
            expected: Self.aNode.updating("a/aa", with: Self.def))
    }

    // Write abc at /x and def at /x/a/aa, prune /x except a/aa (iOS) or a (Android) via
    // PruneForest for / -…, at /x.
    @Test func test180() throws {
        try run(
            [("x", Self.abc), ("x/a/aa", Self.def)], prune: Self.prune(.root, except: ["a/aa"]), at: "x", read: "x",
            expected: Node.empty.updating("a/aa", with: Self.def))
        try run(
            [("x", Self.abc), ("x/a/aa", Self.def)], prune: Self.prune(.root, except: ["a"]), at: "x", read: "x",
            expected: Self.aNode.updating("a/aa", with: Self.def))
    }

    // Write abc at /x and def at /x/a/aa, prune /x except a/aa via PruneForest for /x -a/aa, at root.
    @Test func test190() throws {
        try run(
            [("x", Self.abc), ("x/a/aa", Self.def)], prune: Self.prune("x", except: ["a/aa"]), at: .root, read: "x",
            expected: Node.empty.updating("a/aa", with: Self.def))
    }

    // Write abc at /x and def at /x/a/aa, prune /x except a/aa via PruneForest for / -a/aa, at /x.
    @Test func test200() throws {
        try run(
            [("x", Self.abc), ("x/a/aa", Self.def)], prune: Self.prune(.root, except: ["a/aa"]), at: "x", read: "x",
            expected: Node.empty.updating("a/aa", with: Self.def))
    }

    // Write large node at /x, prune x via PruneForest for x at root.
    @Test func test210() throws {
        try run([("x", Self.large)], prune: Self.prune("x"), at: .root, read: "x", expected: .empty)
    }

    // Write abc at x and large node at /x/a, prune x except a via PruneForest for / -a, at x.
    @Test func test220() throws {
        try run(
            [("x", Self.abc), ("x/a", Self.large)], prune: Self.prune(.root, except: ["a"]), at: "x", read: "x",
            expected: Node.empty.updatingChild("a", Self.large))
    }

    // Android: "This isn't an expected situation so we ignore documents above a prune
    // location." Write abc at /, prune /a via PruneForest for root, at /a. Hearth's cache is
    // one tree: the data at /a goes, the rest of the document stays.
    @Test func pruningBelowDocuments1() throws {
        try run([(.root, Self.abc)], prune: Self.prune(.root), at: "a", read: .root, expected: Self.bcNode)
    }

    // Android: write abc at / and def at /a, prune /a via PruneForest for root, at /a ("DEF gets
    // pruned, but not ABC"). Here /a holds DEF (it replaced ABC's a): pruning /a removes it.
    @Test func pruningBelowDocuments2() throws {
        try run(
            [(.root, Self.abc), ("a", Self.def)], prune: Self.prune(.root), at: "a", read: .root, expected: Self.bcNode)
    }
}
