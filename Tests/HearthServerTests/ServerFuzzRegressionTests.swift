// Replays the committed corpus (Fuzz/Corpus/<Target>/*) and every past finding
// (Fuzz/Regressions/<Target>/*) of the server's fuzz targets through the fuzzers' own checks: the files
// of FuzzChecks/ in this folder are symbolic links to Fuzz/Sources/FuzzServerChecks/*.swift (made by
// Fuzz/sync-checks.sh; HearthTests' FuzzRegressionTests.checksAreTheFuzzersOwn fails when one is missing
// or differs).
import Foundation
import Testing

@Suite struct ServerFuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(arguments: ["FuzzWire", "FuzzREST", "FuzzFrames"])
    func corpusAndFindingsPass(target: String) throws {
        var files: [URL] = []
        for dir in ["Fuzz/Corpus", "Fuzz/Regressions"] {
            let d = Self.root.appendingPathComponent(dir).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: d.path)) ?? []
            files += names.sorted().filter { !$0.hasPrefix(".") }.map { d.appendingPathComponent($0) }
        }
        #expect(files.count >= 10, "no corpus for \(target)")
        for f in files { FuzzServerChecks.run(target: target, Array(try Data(contentsOf: f))) }
    }
}

extension ServerFuzzRegressionTests {
    /// The committed corpus is what the seed writer writes: regenerate it with
    /// `HEARTH_FUZZ_WRITE_SEEDS=Fuzz/Corpus/<Target> Fuzz/.build/release/<Target>` after changing it.
    @Test(arguments: ["FuzzWire", "FuzzREST", "FuzzFrames"])
    func theCommittedSeedsAreTheSeedWritersOwn(target: String) throws {
        let dir = Self.root.appendingPathComponent("Fuzz/Corpus/\(target)")
        let seeds =
            switch target {
            case "FuzzWire": FuzzServerChecks.wireSeeds()
            case "FuzzREST": FuzzServerChecks.restSeeds()
            default: FuzzServerChecks.framesSeeds()
            }
        for (name, bytes) in seeds {
            #expect((try? Data(contentsOf: dir.appendingPathComponent(name))) == Data(bytes), "\(name)")
        }
    }
}
