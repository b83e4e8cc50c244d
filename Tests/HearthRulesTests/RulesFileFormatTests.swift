// The rules file is read as Firebase's server reads it: comments, expressions spanning lines,
// trailing commas; a key given twice is refused, and every position is the file's.
import Foundation
import HearthModel
import HearthRules
import Testing

/// The line breaks a rules file may be written with.
enum LineBreak: String, CaseIterable, Sendable {
    case lf = "\n"
    case crlf = "\r\n"
    case cr = "\r"
}

@Suite struct RulesFileFormatTests {
    /// `lines` joined by `lineBreak`: a file as an editor on that platform writes it.
    static func file(_ lines: [String], _ lineBreak: LineBreak) -> String {
        lines.joined(separator: lineBreak.rawValue)
    }

    @Test(arguments: LineBreak.allCases)
    func anExpressionMaySpanLinesAndItsLineBreaksAreWhitespace(_ lineBreak: LineBreak) throws {
        let rules = try RulesSet.parse(
            source: Self.file(
                [
                    #"{"rules": {"#,
                    #"  "users": {"#,
                    #"    ".read": "auth != null"#,
                    "\t\t&& auth.uid == 'alice'\",",
                    #"  },"#,
                    #"}}"#,
                ], lineBreak))
        let path: Path = "users"
        #expect(rules.canRead(path: path, auth: alice, root: .empty, now: 0).isAllowed)
        #expect(!rules.canRead(path: path, auth: bob, root: .empty, now: 0).isAllowed)
        #expect(!rules.canRead(path: path, auth: nil, root: .empty, now: 0).isAllowed)
    }

    @Test(arguments: LineBreak.allCases)
    func anErrorInsideAMultiLineExpressionNamesTheFilesLineAndColumn(_ lineBreak: LineBreak) throws {
        let source = Self.file(
            [
                #"{"rules": {"#,
                #"  "a": {".write": "newData.exists()"#,
                #"      && nobody === 1"}"#,
                #"}}"#,
            ], lineBreak)
        let error = try #require(parseError(source))
        guard case let .expression(rulePath, message, line, column) = error else {
            Issue.record("expected an expression error, got \(error)")
            return
        }
        #expect(rulePath == "/a/.write")
        #expect(message.contains("unknown variable 'nobody'"), "\(message)")
        #expect(line == 3 && column == 10, "\(error)")
    }

    @Test func aTabBeforeTheErrorIsOneColumn() throws {
        let source = "{\"rules\": {\".read\": \"true\n\t&& nobody\"}}"
        let error = try #require(parseError(source))
        #expect(error.line == 2 && error.column == 5, "\(error)")
    }

    @Test(arguments: LineBreak.allCases)
    func positionsAfterAMultiLineStringCountItsLines(_ lineBreak: LineBreak) throws {
        let source = Self.file(
            [
                #"{"rules": {"#,
                #"  ".read": "true"#,
                #"    && true","#,
                #"  ".wrte": true"#,
                #"}}"#,
            ], lineBreak)
        let error = try #require(parseError(source))
        #expect(error.rulePath == "/" && error.line == 4 && error.column == 3, "\(error)")
    }

    @Test(arguments: LineBreak.allCases)
    func aLineCommentEndsAtAnyLineBreak(_ lineBreak: LineBreak) throws {
        let rules = try RulesSet.parse(
            source: Self.file([#"// first"#, #"{"rules": {".read": true}} // last"#], lineBreak))
        #expect(rules.ruleCount == 1)
    }

    @Test(arguments: LineBreak.allCases)
    func aRegularExpressionLiteralEndsOnItsLine(_ lineBreak: LineBreak) throws {
        let source = Self.file([#"{"rules": {".read": "auth.uid.matches(/^a"#, #"b$/)"}}"#], lineBreak)
        let error = try #require(parseError(source))
        #expect(error.description.contains("unterminated regular expression"), "\(error)")
        #expect(error.line == 1 && error.column == 39, "\(error)")
    }

    @Test func aKeyMayNotSpanLines() throws {
        let error = try #require(parseError("{\"rules\": {\"a\nb\": {}}}"))
        guard case let .syntax(message, line, column) = error else { Issue.record("\(error)"); return }
        #expect(message.contains("line break in a key"), "\(message)")
        #expect(line == 1 && column == 14, "\(error)")
    }

    @Test(arguments: ["\u{01}", "\u{0B}", "\u{0C}", "\u{1F}"])
    func otherControlCharactersInAStringAreStillRefused(_ control: String) throws {
        let source = "{\"rules\": {\".read\": \"true\(control)\"}}"
        let error = try #require(parseError(source))
        guard case let .syntax(message, line, column) = error else { Issue.record("\(error)"); return }
        #expect(message.contains("control character"), "\(message)")
        #expect(line == 1 && column == 26, "\(error)")
    }

    @Test func anUnterminatedStringPointsAtItsOpeningQuote() throws {
        let source = "{\"rules\": {\n  \".read\": \"auth != null\n}}\n"
        let error = try #require(parseError(source))
        #expect(error.description.contains("unterminated string"), "\(error)")
        #expect(error.line == 2 && error.column == 12, "\(error)")
    }

    @Test func trailingCommasAreAccepted() throws {
        let rules = try RulesSet.parse(
            source: """
                {
                  "rules": {
                    "scores": {
                      ".read": true,
                      ".write": true,
                      ".indexOn": ["points", "name",],
                      "$id": { ".validate": "newData.hasChildren(['points'])", },
                    },
                  },
                }
                """)
        #expect(rules.ruleCount == 3)
        let path: Path = "scores/x"
        let good = Node.empty.updating(path, with: try Node(jsonText: #"{"points": 3}"#))
        let bad = Node.empty.updating(path, with: try Node(jsonText: #"{"name": "n"}"#))
        #expect(rules.canWrite(path: path, newRoot: good, oldRoot: .empty, auth: nil, now: 0).isAllowed)
        #expect(!rules.canWrite(path: path, newRoot: bad, oldRoot: .empty, auth: nil, now: 0).isAllowed)
        for index in ["points", "name"] {
            let query = QuerySpec(orderBy: .child(try QuerySpec.parseChildPath(index)))
            let decision = rules.canQuery(path: "scores", query: query, auth: nil, root: .empty, now: 0)
            #expect(decision.isAllowed && !decision.isMissingIndex, "\(index): \(decision)")
        }
    }

    /// A comma where nothing precedes it, two in a row, or one after the document is still an
    /// error, at that comma.
    @Test(arguments: [
        (#"{"rules": {,}}"#, "expected a quoted key"),
        (#"{"rules": {".read": true,,}}"#, "expected a quoted key"),
        (#"{"rules": {".indexOn": [,]}}"#, "unexpected ','"),
        (#"{"rules": {".indexOn": ["a",,]}}"#, "unexpected ','"),
        (#"{"rules": {}},"#, "after the JSON document"),
    ])
    func aCommaWithNothingBeforeItIsRefused(_ source: String, _ message: String) throws {
        let error = try #require(parseError(source))
        guard case .syntax = error else { Issue.record("\(error)"); return }
        #expect(error.description.contains(message), "\(error)")
        let comma = try #require(
            source.unicodeScalars.lastIndex(of: ",").map {
                source.unicodeScalars.distance(from: source.unicodeScalars.startIndex, to: $0) + 1
            })
        #expect(error.column == comma, "\(error)")
    }

    @Test func aDuplicateKeyNamesItsRuleLocationAndBothPlaces() throws {
        let source = """
            {
              "rules": {
                "users": {
                  "$uid": {
                    ".read": "auth.uid === $uid",
                    ".read": true
                  }
                }
              }
            }
            """
        let error = try #require(parseError(source))
        guard case let .structure(rulePath, message, line, column) = error else {
            Issue.record("expected a structure error, got \(error)")
            return
        }
        #expect(rulePath == "/users/$uid")
        #expect(message.contains("duplicate key \".read\" (first at line 5, column 9)"), "\(message)")
        #expect(line == 6 && column == 9)
        #expect(error.description.contains("line 6, column 9, at /users/$uid"), "\(error)")
    }

    @Test(arguments: [
        (#"{"rules": {}, "rules": {".read": true}}"#, "/", "\"rules\""),
        (#"{"rules": {"a": {}, "b": {}, "a": {".read": true}}}"#, "/", "\"a\": {\".read"),
        (#"{"rules": {"$x": {}, "$x": {}}}"#, "/", "\"$x\": {}}"),
    ])
    func everyDuplicateKeyIsRefused(_ source: String, _ rulePath: String, _ second: String) throws {
        let error = try #require(parseError(source))
        guard case .structure = error else { Issue.record("expected a structure error, got \(error)"); return }
        #expect(error.rulePath == rulePath)
        #expect(error.description.contains("duplicate key"), "\(error)")
        let scalars = source.unicodeScalars
        let at = try #require(
            second == "\"rules\""
                ? scalars.ranges(of: second.unicodeScalars).last : scalars.firstRange(of: second.unicodeScalars))
        #expect(error.column == scalars.distance(from: scalars.startIndex, to: at.lowerBound) + 1, "\(error)")
    }

    /// A precomposed and a decomposed `é` are two keys to Firebase (and to ChildKey), so two
    /// locations, not a duplicate.
    @Test func canonicallyEquivalentKeysAreTwoKeys() throws {
        let rules = try RulesSet.parse(
            source: "{\"rules\": {\"caf\u{E9}\": {\".read\": true}, \"cafe\u{301}\": {\".read\": false}}}")
        #expect(rules.ruleCount == 2)
        #expect(rules.canRead(path: try Path(validating: "caf\u{E9}"), auth: nil, root: .empty, now: 0).isAllowed)
        #expect(!rules.canRead(path: try Path(validating: "cafe\u{301}"), auth: nil, root: .empty, now: 0).isAllowed)
    }

    /// The example in the HearthRules article loads as printed there.
    @Test func theArticlesExampleLoads() throws {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/HearthRules/HearthRules.docc/HearthRules.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let block = try #require(text.firstRange(of: "```json\n")).upperBound
        let end = try #require(text[block...].firstRange(of: "```")).lowerBound
        let rules = try RulesSet.parse(source: String(text[block..<end]))
        #expect(rules.ruleCount == 2)
        let path: Path = "widget"
        for (json, allowed) in [
            (#"{"title": "t", "color": "red"}"#, true),
            (#"{"title": 1, "color": "red"}"#, false),
            (#"{"title": "t"}"#, false),
        ] {
            let newRoot = Node.empty.updating(path, with: try Node(jsonText: json))
            #expect(
                rules.canWrite(path: path, newRoot: newRoot, oldRoot: .empty, auth: alice, now: 0).isAllowed
                    == allowed, "\(json)")
        }
    }
}
