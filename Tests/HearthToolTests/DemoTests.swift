import Foundation
import Testing
import Hearth

/// `hearth demo` — the README's first command — end to end: every behaviour it checks is shown,
/// the summary comes last, and the stores it made in a temporary directory are removed unless
/// `--keep` (a directory given on the command line is kept).
@Suite(.enabled(if: Tool.binary != nil, "the hearth binary was not found next to the tests"))
struct DemoTests {
    /// An empty directory the demo uses as its temporary directory (`TMPDIR`), so the test sees
    /// what it leaves there.
    static func scratch() throws -> TempStore {
        let tmp = TempStore()
        try FileManager.default.createDirectory(atPath: tmp.path, withIntermediateDirectories: true)
        return tmp
    }

    /// How many verdict lines the run printed: [✓, ✗].
    static func verdicts(_ r: ToolRun) -> [Int] {
        [r.lines.filter { $0.hasPrefix("✓ ") }.count, r.lines.filter { $0.hasPrefix("✗ ") }.count]
    }

    @Test func storeOnlyShowsEveryBehaviourAndRemovesItsStores() throws {
        let tmp = try Self.scratch()
        let r = try Tool.run(["demo", "--store-only"], environment: ["TMPDIR": tmp.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.lines.last == "7 of 7 behaviours shown", "\(r)")
        #expect(Self.verdicts(r) == [7, 0], "\(r)")
        #expect(try tmp.files() == [], "the demo's temporary stores are removed")
        let out = r.stdout
        #expect(out.contains("child_added  The pterodactyl dinosaur's score is 93 (after linhenykus)"))
        // Offline after the restart: last 2 and last 6 without value, last 4 complete again.
        let sections = out.components(separatedBy: "observe(…)")
        #expect(sections.count == 5, "\(out)")
        if sections.count == 5 {
            #expect(sections[2].contains("no value event") && sections[3].contains("no value event"))
            #expect(sections[4].contains("a value event fired"))
        }
        // The stats of the store, under the cap.
        #expect(out.contains("pins: 1") && out.contains("pending writes: 3"))
    }

    @Test func aDirectoryGivenIsKept() throws {
        let store = TempStore()
        let r = try Tool.run(["demo", "--store-only", store.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.lines.suffix(2) == ["7 of 7 behaviours shown", "the stores are kept in \(store.path)"], "\(r)")
        #expect(try Tool.run(["verify", store.path]).status == 0)
    }

    @Test func keepKeepsTheTemporaryStores() throws {
        let tmp = try Self.scratch()
        let r = try Tool.run(["demo", "--store-only", "--keep"], environment: ["TMPDIR": tmp.path])
        #expect(r.status == 0, "\(r)")
        let kept = try tmp.files()
        #expect(kept.count == 1 && kept.first?.hasPrefix("hearth-demo-") == true, "\(kept)")
        #expect(r.lines.last == "the stores are kept in \(tmp.path)/\(kept.first ?? "")", "\(r)")
    }

    /// The whole page with real clients over real sockets (`hearth demo`).
    @Test func thePageShowsEveryBehaviourAndRemovesItsStores() throws {
        let tmp = try Self.scratch()
        let r = try Tool.run(["demo"], environment: ["TMPDIR": tmp.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.lines.last == "10 of 10 behaviours shown", "\(r)")
        #expect(Self.verdicts(r) == [10, 0], "\(r)")
        #expect(try tmp.files() == [], "the demo's temporary stores are removed")
        let sections = r.stdout.components(separatedBy: "\n\n")
        func section(_ n: Int) -> String { sections.first { $0.hasPrefix("\(n). ") } ?? "" }
        // Back online, the queued work is answered in the order it was made.
        #expect(
            section(4).contains(
                "  write 1: acknowledged\n  transaction 1: committed\n  transaction 2: committed\n"),
            "\(section(4))")
        // Nothing printed depends on the port or the clock.
        #expect(!r.stdout.contains("127.0.0.1") && section(6).contains("lastOnline = a server timestamp"))
    }
}
