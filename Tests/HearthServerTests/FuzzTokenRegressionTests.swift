// Replays FuzzToken's committed corpus (Fuzz/Corpus/FuzzToken/*) and its findings
// (Fuzz/Regressions/FuzzToken/*) through the fuzzer's own check, so they run in plain `swift test`.
// The check is Fuzz/Sources/FuzzServerChecks/*.swift itself: each file of FuzzChecks/ in this folder is
// a symbolic link to one of them (Fuzz/sync-checks.sh); HearthTests' `checksAreTheFuzzersOwn` fails
// when a link is missing or a copy differs.
import Foundation
import Testing

@Suite struct FuzzTokenRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func corpusAndFindingsPass() throws {
        var files: [URL] = []
        for dir in ["Fuzz/Corpus/FuzzToken", "Fuzz/Regressions/FuzzToken"] {
            let d = Self.root.appendingPathComponent(dir)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: d.path)) ?? []
            files += names.sorted().filter { !$0.hasPrefix(".") }.map { d.appendingPathComponent($0) }
        }
        #expect(files.count >= 10, "no corpus for FuzzToken")
        for f in files { FuzzServerChecks.run(target: "FuzzToken", Array(try Data(contentsOf: f))) }
    }

    /// The committed corpus is what the seed writer writes: regenerate it with
    /// `HEARTH_FUZZ_WRITE_SEEDS=Fuzz/Corpus/FuzzToken Fuzz/.build/release/FuzzToken` after changing it.
    @Test func theCommittedSeedsAreTheSeedWritersOwn() throws {
        let dir = Self.root.appendingPathComponent("Fuzz/Corpus/FuzzToken")
        for (name, bytes) in FuzzServerChecks.tokenSeeds() {
            #expect((try? Data(contentsOf: dir.appendingPathComponent(name))) == Data(bytes), "\(name)")
        }
    }
}
