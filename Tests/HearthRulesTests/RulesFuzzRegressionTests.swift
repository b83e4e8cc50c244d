// Replays the rules fuzzer's committed corpus (Fuzz/Corpus/FuzzRules/*) and its past findings
// (Fuzz/Regressions/FuzzRules/*) through the fuzzer's own checks, so that they run in plain
// `swift test` without libFuzzer.
//
// The checks are Fuzz/Sources/FuzzRulesChecks/*.swift themselves: each file of FuzzChecks/ in this
// folder is a symbolic link to one of them (made by Fuzz/sync-checks.sh; the main package cannot
// depend on the Fuzz package), so the fuzzer and these tests run one and the same code;
// `checksAreTheFuzzersOwn` fails when a file is missing on either side or differs.
import Foundation
import HearthModel
import HearthRules
import Testing

@Suite struct RulesFuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func inputs() -> [URL] {
        var out: [URL] = []
        for dir in ["Fuzz/Corpus/FuzzRules", "Fuzz/Regressions/FuzzRules"] {
            let d = root.appendingPathComponent(dir)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: d.path)) ?? []
            out += names.sorted().filter { !$0.hasPrefix(".") }.map { d.appendingPathComponent($0) }
        }
        return out
    }

    /// On a thread with a main thread's stack, as libFuzzer runs them: the reference matcher
    /// recurses (up to its bound) where a test runner's thread may have less room.
    @Test func corpusAndFindingsPass() throws {
        let files = Self.inputs()
        #expect(files.count >= 10, "the rules fuzzer's corpus is missing")
        let contents = try files.map { Array(try Data(contentsOf: $0)) }
        try onSmallStack(kib: 16 << 10) {
            for bytes in contents { FuzzRulesChecks.run(bytes) }
        }
    }

    /// The real rules files of the corpus load, so that the fuzzer's mutations start from rules
    /// that reach evaluation.
    @Test func theSeedRulesFilesLoad() throws {
        for file in Self.inputs() where file.pathExtension == "json" {
            #expect(throws: Never.self, "\(file.lastPathComponent)") {
                try RulesSet.parse(source: try String(contentsOf: file, encoding: .utf8))
            }
        }
    }

    /// Every file of the fuzzer's checks is in this target, byte for byte, and nothing else is.
    @Test func checksAreTheFuzzersOwn() throws {
        let fuzz = Self.root.appendingPathComponent("Fuzz/Sources/FuzzRulesChecks")
        let here = Self.root.appendingPathComponent("Tests/HearthRulesTests/FuzzChecks")
        func swiftFiles(_ dir: URL) throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") })
        }
        let names = try swiftFiles(fuzz)
        #expect(names.count >= 4, "the rules fuzzer's checks are missing: \(names)")
        #expect(
            try swiftFiles(here) == names,
            "Tests/HearthRulesTests/FuzzChecks differs from Fuzz/Sources/FuzzRulesChecks: run Fuzz/sync-checks.sh")
        for name in names.sorted() {
            let original = try Data(contentsOf: fuzz.appendingPathComponent(name))
            let copy = try? Data(contentsOf: here.appendingPathComponent(name))
            #expect(
                copy == original,
                "Tests/HearthRulesTests/FuzzChecks/\(name) is not Fuzz/Sources/FuzzRulesChecks/\(name): run Fuzz/sync-checks.sh"
            )
        }
    }

    /// A finding of CI's FuzzRules run: one write whose validation fails under one named child,
    /// checked against two loadings of the same file, spent different steps — the named children
    /// were walked in each dictionary's own order, so the siblings validated before the failing
    /// one (and so which failure was reported) changed from one loading to the next. Validation
    /// walks named children in key order now: every loading decides alike, steps and all.
    @Test func validationOrderIsTheSameForEveryLoading() throws {
        let keys = (0..<24).map { "c\($0 < 10 ? "0" : "")\($0)" }
        let rules =
            #"{"rules": {".write": true, "#
            + keys.map { #""\#($0)": {".validate": "newData.isString()"}"# }.joined(separator: ", ") + "}}"
        let data = "{" + keys.map { #""\#($0)": 1"# }.joined(separator: ", ") + "}"
        let newRoot = try Node(jsonText: data)
        var decisions: [Decision] = []
        for _ in 0..<8 {
            let set = try RulesSet.parse(source: rules)
            decisions.append(set.canWrite(path: .root, newRoot: newRoot, oldRoot: .empty, auth: nil, now: 0))
        }
        let first = try #require(decisions.first)
        #expect(!first.isAllowed)
        #expect(first.rule?.location == "/c00", "the first failing child in key order decides: \(first)")
        for decision in decisions.dropFirst() {
            #expect(decision == first && decision.evaluationSteps == first.evaluationSteps, "\(decision)")
        }
    }
}
