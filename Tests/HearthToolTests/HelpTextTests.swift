import Foundation
import Testing

/// `hearth <cmd> --help` is the whole reference a reader of the terminal (or of `hearth.1`, which
/// `swift package generate-manual` builds from the same texts) gets: it must not send them to the
/// README, and every operation the DocC articles document for `apply` (Hearth's *The hearth
/// tool*) and `connect` (HearthDatabase's *hearth connect*) must be listed.
@Suite(.enabled(if: Tool.binary != nil, Tool.missingMessage))
struct HelpTextTests {
    static let subcommands = [
        "dump", "verify", "salvage", "stats", "state", "get", "apply", "compact", "demo", "serve", "connect",
    ]

    static func document(_ path: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The `"op"` names in the section of `document` that `heading` begins (up to the next
    /// heading of any level).
    static func documentedOps(in document: String, after heading: String) throws -> Set<String> {
        let text = try Self.document(document)
        guard let start = text.range(of: heading) else { return [] }
        let section = text[start.upperBound...]
        let end = section.range(of: "\n#")?.lowerBound ?? section.endIndex
        let body = section[..<end]
        var ops: Set<String> = []
        var rest = body[...]
        while let r = rest.range(of: #"{"op":""#) {
            let name = rest[r.upperBound...].prefix { $0 != "\"" }
            ops.insert(String(name))
            rest = rest[r.upperBound...]
        }
        return ops
    }

    @Test func everySubcommandHasAStandaloneHelp() throws {
        let top = try Tool.run(["--help"])
        #expect(top.status == 0, "\(top)")
        for sub in Self.subcommands {
            #expect(top.stdout.contains("  \(sub) "), "hearth --help lists \(sub)")
            let help = try Tool.run([sub, "--help"])
            #expect(help.status == 0, "\(help)")
            #expect(help.stdout.hasPrefix("OVERVIEW: "), "\(sub) has an abstract")
            #expect(!help.stdout.contains("README"), "\(sub) --help sends the reader to the README")
            // The abstract plus a discussion: more than the generated usage and options.
            let overview = help.stdout.components(separatedBy: "\nUSAGE:").first ?? ""
            #expect(overview.split(separator: "\n").count >= 3, "\(sub) --help has a discussion")
            for line in help.stdout.split(separator: "\n") where !line.hasPrefix("USAGE:") {
                #expect(line.count <= 80, "\(sub) --help line over 80 columns: \(line)")
            }
        }
    }

    @Test func applyHelpListsEveryDocumentedOperation() throws {
        let ops = try Self.documentedOps(
            in: "Sources/Hearth/Hearth.docc/CommandLineTool.md", after: "### `hearth apply STORE")
        #expect(ops.count >= 14, "the article's apply table: \(ops.sorted())")
        let help = try Tool.run(["apply", "--help"]).stdout
        for op in ops.sorted() {
            #expect(help.contains(#"{"op":"\#(op)""#), "hearth apply --help misses \(op)")
        }
    }

    @Test func connectHelpListsEveryDocumentedCommand() throws {
        let ops = try Self.documentedOps(
            in: "Sources/HearthDatabase/HearthDatabase.docc/CommandLineClient.md", after: "## Commands")
        #expect(ops.count >= 15, "the article's connect table: \(ops.sorted())")
        let help = try Tool.run(["connect", "--help"]).stdout
        for op in ops.sorted() {
            #expect(help.contains(#"{"op":"\#(op)""#), "hearth connect --help misses \(op)")
        }
    }
}
