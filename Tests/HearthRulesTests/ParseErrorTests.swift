// A bad rules file is refused at load with a typed error naming the rule, line and column.
import HearthModel
import HearthRules
import Testing

/// The 1-based line and column (in Unicode scalars) of the first occurrence of `marker`.
func position(of marker: String, in source: String) -> (line: Int, column: Int) {
    for (i, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        if let range = line.unicodeScalars.firstRange(of: marker.unicodeScalars) {
            return (i + 1, line.unicodeScalars.distance(from: line.unicodeScalars.startIndex, to: range.lowerBound) + 1)
        }
    }
    Issue.record("marker \(marker) not in source")
    return (0, 0)
}

func parseError(_ source: String) -> RulesError? {
    do {
        _ = try RulesSet.parse(source: source)
        return nil
    } catch {
        return error
    }
}

/// A file whose `/users/$uid/.read` rule is `expression`, on line 5.
func fileWithRead(_ expression: String) -> String {
    """
    // line 1
    {
      "rules": {
        "users": { "$uid": {
          ".read": "\(expression)"
        } }
      }
    }
    """
}

/// One bad expression: the message it must produce and the text its column points at.
struct BadExpression: Sendable, CustomTestStringConvertible {
    let expression: String
    let message: String
    let pointsAt: String
    var testDescription: String { expression }
}

let badExpressions: [BadExpression] = [
    BadExpression(expression: "auth.uid === $user", message: "unknown variable '$user'", pointsAt: "$user"),
    BadExpression(expression: "auth.uid === nobody", message: "unknown variable 'nobody'", pointsAt: "nobody"),
    BadExpression(expression: "newData.exists()", message: "newData is not available in .read", pointsAt: "newData"),
    BadExpression(expression: "'a' - 1 === 0", message: "needs a number", pointsAt: "'a'"),
    BadExpression(expression: "data.exists", message: "is a method", pointsAt: "exists"),
    BadExpression(expression: "1 + 2", message: "must evaluate to a boolean", pointsAt: "1 + 2"),
    BadExpression(
        expression: "auth.x === 'one' ? 7 : true", message: "must evaluate to a boolean", pointsAt: "auth.x"),
    BadExpression(expression: "root.val().notFound == false", message: "val() has no property", pointsAt: "notFound"),
    BadExpression(expression: "root['exits']()", message: "unknown method 'exits'", pointsAt: "'exits'"),
    BadExpression(expression: "data.frobnicate()", message: "unknown method 'frobnicate'", pointsAt: "frobnicate"),
    BadExpression(expression: "data.val().matches('x')", message: "regular expression literal", pointsAt: "'x'"),
    BadExpression(expression: "data.child(1).exists()", message: "argument 1 of child()", pointsAt: "1)"),
    BadExpression(expression: "data == null", message: "cannot compare a RuleDataSnapshot", pointsAt: "data"),
    BadExpression(expression: "'a' < 1", message: "compares a string with a number", pointsAt: "'a'"),
    BadExpression(expression: "!'a'", message: "'!' needs a boolean", pointsAt: "'a'"),
    BadExpression(expression: "auth.uid.contains()", message: "contains() takes 1 argument", pointsAt: "contains"),
    BadExpression(expression: "data.hasChildren('a')", message: "array literal", pointsAt: "'a'"),
    BadExpression(expression: "data.val().matches(/x/g)", message: "flag 'g'", pointsAt: "g)"),
    BadExpression(expression: "data.val().matches(/(/)", message: "unterminated group", pointsAt: "(/)"),
    BadExpression(expression: "query.orderBy === 'x'", message: "query has no property 'orderBy'", pointsAt: "orderBy"),
    BadExpression(expression: "auth.uid = $uid", message: "assignment", pointsAt: "= $uid"),
    BadExpression(expression: "auth.uid === 'x", message: "unterminated string", pointsAt: "'x"),
    BadExpression(expression: "true true", message: "after the expression", pointsAt: "true\""),
    BadExpression(expression: "", message: "empty expression", pointsAt: "\""),
    BadExpression(expression: "(true", message: "expected ')'", pointsAt: "\""),
    BadExpression(expression: "data.child('a').", message: "expected a name after '.'", pointsAt: "\""),
    BadExpression(expression: "$uid > 1", message: "compares a string with a number", pointsAt: "$uid"),
    BadExpression(expression: "data.hasChild('')", message: "non-empty child path", pointsAt: "''"),
    BadExpression(expression: "auth.uid === $uid @", message: "unexpected character '@'", pointsAt: "@"),
]

/// Checks that `bad`, as the `.read` rule of ``fileWithRead(_:)``, is refused with its message,
/// rule and the column of its marker.
func checkRefusal(_ bad: BadExpression) throws {
    let source = fileWithRead(bad.expression)
    let error = try #require(parseError(source))
    guard case let .expression(rulePath, message, line, column) = error else {
        Issue.record("expected an expression error, got \(error)")
        return
    }
    #expect(rulePath == "/users/$uid/.read")
    #expect(message.contains(bad.message), "\(message)")
    // Markers are searched from the rule's opening quote on line 5.
    let lineText = source.split(separator: "\n", omittingEmptySubsequences: false)[4]
    let quote =
        lineText.unicodeScalars.distance(
            from: lineText.unicodeScalars.startIndex,
            to: lineText.unicodeScalars.firstRange(of: ": \"".unicodeScalars)!.lowerBound) + 3
    let rest = String(lineText.unicodeScalars.dropFirst(quote))
    let marker = try #require(rest.unicodeScalars.firstRange(of: bad.pointsAt.unicodeScalars))
    let expected =
        quote + rest.unicodeScalars.distance(from: rest.unicodeScalars.startIndex, to: marker.lowerBound) + 1
    #expect(line == 5)
    #expect(column == expected, "\(error)")
    #expect(error.description.contains("line 5, column \(expected)"))
    #expect(error.description.contains("/users/$uid/.read"))
}

@Suite struct ParseErrorTests {
    @Test(arguments: badExpressions)
    func badExpressionsNameTheRuleLineAndColumn(_ bad: BadExpression) throws {
        try checkRefusal(bad)
    }

    @Test func theColumnCountsTheFileNotTheDecodedString() throws {
        // \u0061 is six characters in the file and one in the expression.
        let source = #"{"rules": {"$uid": {".write": "\u0061uth.uid === $user"}}}"#
        let error = try #require(parseError(source))
        #expect(error.line == 1)
        #expect(error.column == position(of: "$user", in: source).column)
        #expect(error.rulePath == "/$uid/.write")
    }

    @Test func jsonSyntaxErrorsNameLineAndColumn() throws {
        let source = """
            {
              "rules": {
                ".read": true
                ".write": true
              }
            }
            """
        let error = try #require(parseError(source))
        guard case let .syntax(message, line, column) = error else { Issue.record("\(error)"); return }
        #expect(message.contains("expected ',' or '}'"))
        #expect(line == 4 && column == 5)
        #expect(error.rulePath == nil)
    }

    @Test func commentsAreAllowedWhereWhitespaceIs() throws {
        let rules = try RulesSet.parse(
            source: """
                // leading comment
                { /* before a key */ "rules" /* between key and colon */ : {
                    ".read": true, // trailing comment, then a URL in a string must survive:
                    "links": { ".write": "newData.val() === 'http://x/*y*/'" }
                    /* a block
                       over lines */
                  }
                }
                // trailing comment without newline
                """)
        #expect(rules.ruleCount == 2)
        let path: Path = "links"
        let url = Node.string("http://x/*y*/")
        #expect(
            rules.canWrite(
                path: path, newRoot: Node.empty.updating(path, with: url), oldRoot: .empty,
                auth: nil, now: 0
            ).isAllowed)
    }

    @Test func anUnterminatedBlockCommentPointsAtItsStart() throws {
        let source = "{\"rules\": {}}\n  /* never closed"
        let error = try #require(parseError(source))
        #expect(error.line == 2 && error.column == 3)
        #expect(error.description.contains("unterminated /* comment"))
    }

    struct BadStructure: Sendable, CustomTestStringConvertible {
        let source: String
        let rulePath: String
        let message: String
        let pointsAt: String
        var testDescription: String { message }
    }

    static let badStructures: [BadStructure] = [
        BadStructure(source: #"{"roles": {}}"#, rulePath: "/", message: "no top-level \"rules\"", pointsAt: "{"),
        BadStructure(
            source: #"{"rules": {}, "extra": 1}"#, rulePath: "/", message: "unknown top-level key \"extra\"",
            pointsAt: "\"extra\""),
        BadStructure(source: #"[1]"#, rulePath: "/", message: "must be an object", pointsAt: "["),
        BadStructure(
            source: #"{"rules": {"a": {".wrte": true}}}"#, rulePath: "/a", message: "unknown rule type \".wrte\"",
            pointsAt: "\".wrte\""),
        BadStructure(
            source: #"{"rules": {"a": {".read": 1}}}"#, rulePath: "/a/.read", message: "string expression or a boolean",
            pointsAt: "1}"),
        BadStructure(
            source: #"{"rules": {"a": {"$x": {}, "$y": {}}}}"#, rulePath: "/a", message: "two wildcards",
            pointsAt: "\"$y\""),
        BadStructure(
            source: #"{"rules": {"$x": {"$x": {}}}}"#, rulePath: "/$x", message: "already used", pointsAt: "\"$x\": {}"),
        BadStructure(
            source: #"{"rules": {"a": {".indexOn": 5}}}"#, rulePath: "/a", message: ".indexOn must be", pointsAt: "5"),
        BadStructure(
            source: #"{"rules": {"a": {".indexOn": ["x", 5]}}}"#, rulePath: "/a", message: "entries must be strings",
            pointsAt: "5"),
        BadStructure(
            source: #"{"rules": {"a#b": {}}}"#, rulePath: "/", message: "invalid child key \"a#b\"", pointsAt: "\"a#b\""
        ),
        BadStructure(
            source: #"{"rules": {"a": true}}"#, rulePath: "/a", message: "expected an object", pointsAt: "true"),
    ]

    @Test(arguments: badStructures)
    func structuralErrorsNameTheLocation(_ bad: BadStructure) throws {
        let error = try #require(parseError(bad.source))
        guard case let .structure(rulePath, message, line, column) = error else {
            Issue.record("expected a structure error, got \(error)")
            return
        }
        #expect(rulePath == bad.rulePath)
        #expect(message.contains(bad.message), "\(message)")
        #expect(line == 1)
        #expect(column == position(of: bad.pointsAt, in: bad.source).column, "\(error)")
    }

    @Test func duplicateKeysAreRefused() throws {
        let source = "{\"rules\": {\n  \"a\": {},\n  \"a\": {}\n}}"
        let error = try #require(parseError(source))
        #expect(error.line == 3 && error.column == 3)
        #expect(error.description.contains("duplicate key \"a\" (first at line 2, column 3)"))
        #expect(error.rulePath == "/")
    }
}
