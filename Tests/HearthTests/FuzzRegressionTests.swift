// Replays the fuzzers' committed corpus (Fuzz/Corpus/<Target>/*) and every past finding
// (Fuzz/Regressions/<Target>/*) through the fuzzers' own checks, so regressions run in plain
// `swift test` without libFuzzer; plus one focused test per bug the fuzzers found.
//
// The checks are Fuzz/Sources/FuzzChecks/*.swift themselves: each file of FuzzChecks/ in this folder is
// a symbolic link to one of them (made by Fuzz/sync-checks.sh; the main package cannot depend on the
// Fuzz package), so the fuzzers and these tests run one and the same code; `checksAreTheFuzzersOwn`
// fails when a file is missing on either side or differs (say, a link checked out as a plain copy).
import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting

@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func inputs(_ target: String) -> [URL] {
        var out: [URL] = []
        for dir in ["Fuzz/Corpus", "Fuzz/Regressions"] {
            let d = root.appendingPathComponent(dir).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: d.path)) ?? []
            out += names.sorted().filter { !$0.hasPrefix(".") }.map { d.appendingPathComponent($0) }
        }
        return out
    }

    @Test(arguments: ["FuzzDecode", "FuzzRecovery", "FuzzState"])
    func corpusAndFindingsPass(target: String) throws {
        let files = Self.inputs(target)
        #expect(!files.isEmpty, "no corpus for \(target)")
        for f in files { FuzzChecks.run(target: target, Array(try Data(contentsOf: f))) }
    }

    /// Every file of each checks module is in the test target that compiles it, byte for byte,
    /// and nothing else is: FuzzChecks in this target, FuzzServerChecks (which needs HearthServer)
    /// in HearthServerTests, whose FuzzTokenRegressionTests replays FuzzToken's corpus and
    /// ServerFuzzRegressionTests FuzzWire's and FuzzREST's.
    @Test(arguments: [
        ("FuzzChecks", "HearthTests", 5), ("FuzzServerChecks", "HearthServerTests", 2),
    ])
    func checksAreTheFuzzersOwn(checks: String, testTarget: String, atLeast: Int) throws {
        let fuzzPath = "Fuzz/Sources/\(checks)", herePath = "Tests/\(testTarget)/FuzzChecks"
        let fuzz = Self.root.appendingPathComponent(fuzzPath)
        let here = Self.root.appendingPathComponent(herePath)
        func swiftFiles(_ dir: URL) throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") })
        }
        let names = try swiftFiles(fuzz)
        #expect(names.count >= atLeast, "the fuzz checks are missing: \(names)")
        #expect(
            try swiftFiles(here) == names,
            "\(herePath) differs from \(fuzzPath) in its files: run Fuzz/sync-checks.sh")
        for name in names.sorted() {
            let original = try Data(contentsOf: fuzz.appendingPathComponent(name))
            let copy = try? Data(contentsOf: here.appendingPathComponent(name))
            #expect(copy == original, "\(herePath)/\(name) is not \(fuzzPath)/\(name): run Fuzz/sync-checks.sh")
        }
    }

    // MARK: - Findings

    /// Finding 1 (FuzzDecode): a log tail holding a `cachePruned` after a checkpoint (a crash
    /// between a prune and its checkpoint) trapped `Store.open` with a lazily loaded cache.
    @Test func prunedTailAfterACheckpointOpensLazily() throws {
        let fs = SimulatedFileSystem(seed: 1)
        var o = options(fs)
        let s = try Store.open(directory: "/db", options: o)
        try s.applyServerOverwrite(json(#"{"a":{"b":1},"c":2}"#), at: "x")
        try s.compact()
        try s.commit {
            $0.append(.cachePruned(PruneResult(prunedPaths: ["x"], keptPaths: ["x/c"], removedQueryIDs: [])))
        }
        let expected = try s.state()
        try s.close()
        o.lazyCacheLoad = true
        let r = try Store.open(directory: "/db", options: o)
        #expect(try r.serverValue(at: "x") == json(#"{"c":2}"#))
        #expect(try r.state() == expected)
        try r.close()
    }

    /// Finding 2 (FuzzDecode): salvage of a MANIFEST naming a checkpoint file that is missing
    /// failed with ENOENT trying to move the missing file aside.
    @Test func salvageWithAMissingCheckpointRebuildsTheManifest() throws {
        let fs = SimulatedFileSystem(seed: 2)
        let s = try Store.open(directory: "/db", options: options(fs))
        try s.applyServerOverwrite(.number(1), at: "a")
        try s.compact()
        try s.applyServerOverwrite(.number(2), at: "b")
        try s.close()
        let checkpoint = try #require(fs.fileNames(in: "/db").first { $0.hasPrefix("ckpt-") })
        try fs.unlink("/db/" + checkpoint)
        #expect(throws: LogError.self) { try Log.open(directory: "/db", fileSystem: fs) }
        var lo = Log.Options()
        lo.salvage = true
        let log = try Log.open(directory: "/db", fileSystem: fs, options: lo)
        try log.close()
        #expect(try Log.verify(directory: "/db", fileSystem: fs).damage == nil)
    }

    /// Finding 3 (FuzzRecovery): closing a poisoned log (a sync or rename had failed, here
    /// inside a checkpoint install) returned success without syncing, so the caller took
    /// unsynced commits for durable; a power cut then lost them.
    @Test func closingAPoisonedLogReportsTheFailure() throws {
        let fs = SimulatedFileSystem(seed: 3)
        let log = try Log.open(directory: "/db", fileSystem: fs)
        _ = try log.append([1, 2, 3], type: 9, durability: .buffered)
        fs.injectFault(.sync, .ioError)
        #expect(throws: LogError.self) { try log.flush() }
        #expect(throws: LogError.self) { try log.close() }
    }
}
