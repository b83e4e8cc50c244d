import Foundation
import Testing

/// Every ```swift block of README.md and of the DocC articles (`Sources/*/*.docc/**/*.md`) is
/// compiled: it stands, line for line, inside a test that `swift test` builds and runs.
///
/// A test marks the copy:
///
///     // doc-sample: README.md
///     // doc-sample-replace: ws://127.0.0.1:9000 => ws://127.0.0.1:\(port)
///     …the block's lines…
///     #expect(…)   // doc-sample: test
///     // doc-sample end
///
/// Inside the region, lines ending in `// doc-sample: test` are the test's own; the others, less
/// the begin marker's indentation and with the declared replacements applied (the region's text
/// `B` reads as the document's `A`), must equal the block exactly, blank lines included. So a
/// sample that stops compiling fails the build, and a document or test edited alone fails here.
@Suite struct DocSampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    struct Block: CustomStringConvertible {
        var file: String
        var line: Int
        var lines: [String]
        var description: String { "\(file):\(line)" }

        /// The block's leading `import` lines: the test file must have them at its top level.
        var imports: [String] { Array(lines.prefix { $0.hasPrefix("import ") }) }
        /// The rest (less the blank line after the imports): what a test function holds.
        var body: [String] {
            let rest = lines.drop { $0.hasPrefix("import ") }
            return Array(imports.isEmpty || rest.first != "" ? rest : rest.dropFirst())
        }
    }

    struct Region: CustomStringConvertible {
        var file: String
        var line: Int
        var document: String
        var lines: [String]
        /// The test file's imports, `import X` (also for `@testable import X`).
        var imports: Set<String> = []
        var description: String { "\(file):\(line) (\(document))" }
    }

    static let testOnly = "// doc-sample: test"

    /// The documents whose swift blocks must be compiled: README.md and every DocC article.
    static func documents() throws -> [String] {
        var docs = ["README.md"]
        let sources = root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            return docs
        }
        for case let url as URL in walker where url.pathExtension == "md" && url.path.contains(".docc/") {
            docs.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        return docs.sorted()
    }

    static func blocks(in document: String) throws -> [Block] {
        blocks(text: try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8), document: document)
    }

    static func blocks(text: String, document: String) -> [Block] {
        var blocks: [Block] = []
        var current: Block?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if var block = current {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    blocks.append(block)
                    current = nil
                } else {
                    block.lines.append(line)
                    current = block
                }
            } else if line == "```swift" {
                current = Block(file: document, line: index + 1, lines: [])
            }
        }
        return blocks
    }

    static func regions() throws -> [Region] {
        var regions: [Region] = []
        let tests = root.appendingPathComponent("Tests")
        guard let walker = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil) else {
            return regions
        }
        for case let url as URL in walker
        where url.pathExtension == "swift" && url.lastPathComponent != "DocSampleTests.swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            guard text.contains("// doc-sample: ") else { continue }
            regions += Self.regions(text: text, file: String(url.path.dropFirst(root.path.count + 1)))
        }
        return regions
    }

    static func regions(text: String, file: String) -> [Region] {
        var regions: [Region] = []
        let imports = Set(
            text.components(separatedBy: "\n").compactMap { line -> String? in
                let plain = line.hasPrefix("@testable ") ? String(line.dropFirst("@testable ".count)) : line
                return plain.hasPrefix("import ") ? plain : nil
            })
        var open: (region: Region, indent: Int, replacements: [(String, String)], body: Bool)?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var state = open {
                if trimmed == "// doc-sample end" {
                    var region = state.region
                    region.imports = imports
                    regions.append(region)
                    open = nil
                } else if !state.body, trimmed.hasPrefix("// doc-sample-replace: ") {
                    let rule = trimmed.dropFirst("// doc-sample-replace: ".count).components(separatedBy: " => ")
                    if rule.count == 2 { state.replacements.append((rule[0], rule[1])) }
                    open = state
                } else {
                    state.body = true
                    if !trimmed.hasSuffix(testOnly) {
                        let indented = line.prefix(while: { $0 == " " }).count >= state.indent
                        var own = indented ? String(line.dropFirst(state.indent)) : trimmed
                        for (document, test) in state.replacements {
                            own = own.replacingOccurrences(of: test, with: document)
                        }
                        state.region.lines.append(own)
                    }
                    open = state
                }
            } else if trimmed.hasPrefix("// doc-sample: "), !trimmed.hasSuffix(testOnly) {
                let document = String(trimmed.dropFirst("// doc-sample: ".count))
                let indent = line.prefix(while: { $0 == " " }).count
                open = (Region(file: file, line: index + 1, document: document, lines: []), indent, [], false)
            }
        }
        if let state = open { Issue.record("\(state.region): no `// doc-sample end`") }
        return regions
    }

    @Test func everySwiftBlockOfTheDocumentationIsCompiledInATest() throws {
        let documents = try Self.documents()
        #expect(documents.contains("README.md"))
        #expect(documents.contains { $0.hasSuffix("Hearth.docc/GettingStarted.md") }, "\(documents)")
        let regions = try Self.regions()
        var used = Set<String>()
        var checked = 0
        for document in documents {
            for block in try Self.blocks(in: document) {
                checked += 1
                let candidates = regions.filter { $0.document == document && $0.imports.isSuperset(of: block.imports) }
                if let match = candidates.first(where: { $0.lines == block.body }) {
                    used.insert(match.description)
                    continue
                }
                // Say where the closest copy first differs, to make a drift easy to fix.
                let hint =
                    candidates.map { region -> (Int, String) in
                        let same = zip(region.lines, block.body).prefix { $0 == $1 }.count
                        let doc = same < block.body.count ? block.body[same] : "(end of block)"
                        let test = same < region.lines.count ? region.lines[same] : "(end of region)"
                        return (
                            same, "\(region): line \(same + 1) of the block is\n  \(doc)\nbut the test has\n  \(test)"
                        )
                    }.max { $0.0 < $1.0 }?.1
                    ?? "no test file importing \(block.imports) has a `// doc-sample: \(document)` region"
                Issue.record("the swift block at \(block) is not compiled verbatim in any test — \(hint)")
            }
        }
        #expect(checked >= 6, "found \(checked) swift blocks")
        for region in regions where !used.contains(region.description) {
            Issue.record("\(region) copies no swift block of \(region.document) (a sample removed or changed?)")
        }
    }

    /// The checker itself: a faithful copy with test-only lines and a replacement reads as the
    /// block; a copy with one line changed does not.
    @Test func theMatcherTellsACopyFromADrift() {
        let document = """
            Text.

            ```swift
            import Foundation

            let db = open("ws://host:9000")

            print(db)
            ```
            """
        let test = """
            import Foundation
                func sample() {
                    // doc-sample: D.md
                    // doc-sample-replace: :9000 => :\\(port)
                    let db = open("ws://host:\\(port)")
                    #expect(db != nil)   \(Self.testOnly)

                    print(db)
                    // doc-sample end
                    // doc-sample: D.md
                    let db = open("ws://host:9001")

                    print(db)
                    // doc-sample end
                }
            """
        let blocks = Self.blocks(text: document, document: "D.md")
        let regions = Self.regions(text: test, file: "T.swift")
        #expect(blocks.map(\.body) == [[#"let db = open("ws://host:9000")"#, "", "print(db)"]])
        #expect(blocks.first?.imports == ["import Foundation"])
        #expect(regions.count == 2)
        #expect(regions.first?.imports == ["import Foundation"])
        #expect(regions.first?.lines == blocks.first?.body)
        #expect(regions.last?.lines != blocks.first?.body)
    }
}
