// The rules cannot be turned against the server: a regular expression cannot backtrack, deep
// or long expressions load (or are refused) without deep recursion, and every request's
// evaluation stops at its step budget.
import Foundation
import HearthModel
import Synchronization
import Testing

@testable import HearthRules

/// Runs `body` on a thread with a stack of `kib` KiB and waits for it: a recursion as deep as
/// its input overflows it, where the test runner's own threads might have room. 512 KiB is a
/// secondary thread's default on Apple platforms (a server's worker threads may be as small).
/// Parsing gets 4 MiB: a debug build's parser takes about 25 KB per level of parentheses
/// (2.5 KB in a release build), so the 64 levels allowed fit and the 100,000 of an attack
/// (2.5 GB) cannot.
func onSmallStack<T: Sendable>(kib: Int = 512, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let r = Result { try body() }
        result.withLock { $0 = r }
        done.signal()
    }
    thread.stackSize = kib * 1024
    thread.start()
    done.wait()
    return try #require(result.withLock { $0 }).get()
}

/// Why `source` does not load within `limits`, or `nil` when it does.
func loadError(_ source: String, _ limits: RulesSet.Limits) -> RulesError? {
    do {
        _ = try RulesSet.parse(source: source, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// Limits that let files and expressions of several megabytes load, to test the other bounds.
func bigLimits() -> RulesSet.Limits {
    var limits = RulesSet.Limits()
    limits.maxSourceBytes = 8 << 20
    limits.maxExpressionLength = 4 << 20
    return limits
}

@Suite struct LimitsTests {
    // MARK: - Regular expressions cannot backtrack

    /// The issue's pattern took 16 s on 18 characters with a backtracking engine: here the
    /// work is a handful of steps per character, and it says so.
    @Test func aNestedQuantifierCostsStepsLinearInTheInput() throws {
        let rules = try RulesSet.parse(source: oneRule(".read", "data.val().matches(/^(a+)+$/)"))
        var steps: [Int] = []
        for n in [18, 1_800, 18_000] {
            let data = Node.empty.updating("t", with: .string(String(repeating: "a", count: n) + "!"))
            let decision = rules.canRead(path: "t", auth: nil, root: data, now: 0)
            #expect(!decision.isAllowed && !decision.exceededBudget, "\(decision)")
            steps.append(decision.evaluationSteps)
        }
        // The program has 5 states; a character costs the states reached and 2 for itself.
        #expect(steps[0] < 300, "\(steps)")
        #expect((steps[1] - steps[0]) == 10 * (1_800 - 18), "\(steps)")
        #expect((steps[2] - steps[1]) == 10 * (18_000 - 1_800), "\(steps)")
    }

    /// 100,000 characters, which a backtracking engine would never finish: one request.
    @Test func aHundredThousandCharactersMatchInOneRequest() throws {
        let rules = try RulesSet.parse(source: oneRule(".read", "data.val().matches(/^(a+)+b$/)"))
        let long = String(repeating: "a", count: 100_000)
        let yes = rules.canRead(path: "t", auth: nil, root: Node.empty.updating("t", with: .string(long + "b")), now: 0)
        let no = rules.canRead(path: "t", auth: nil, root: Node.empty.updating("t", with: .string(long + "!")), now: 0)
        #expect(yes.isAllowed, "\(yes)")
        #expect(!no.isAllowed && !no.exceededBudget, "\(no)")
        #expect(no.evaluationSteps < RulesSet.Limits().evaluationSteps)
    }

    /// A regular expression's work is charged as it goes: on a long enough string it runs
    /// out of steps and the request is denied.
    @Test func aRegularExpressionStopsAtTheBudget() throws {
        var limits = RulesSet.Limits()
        limits.evaluationSteps = 50_000
        let rules = try RulesSet.parse(source: oneRule(".read", "data.val().matches(/^(a|b|ab)*c$/)"), limits: limits)
        let data = Node.empty.updating("t", with: .string(String(repeating: "ab", count: 100_000)))
        let decision = rules.canRead(path: "t", auth: nil, root: data, now: 0)
        #expect(!decision.isAllowed && decision.exceededBudget, "\(decision)")
        #expect(decision.reason.contains("ran out of its 50000 evaluation steps"), "\(decision.reason)")
        #expect(decision.evaluationSteps == 50_000)
        #expect(ruleID(decision) == "/t/.read")
    }

    // MARK: - Long chains and deep nesting

    /// `&&` and `||` chains are one node each: 4,000 terms load with the default limits and
    /// evaluate on a small stack (the recursive evaluator overflowed it).
    @Test func aChainOf4000TermsLoadsAndEvaluates() throws {
        let chain = Array(repeating: "auth != null", count: 4_000).joined(separator: " && ")
        let rules = try RulesSet.parse(source: oneRule(".read", chain))
        let expression = try #require(rules.root.children[ChildKey("t")]?.read?.expression)
        #expect(expression.height == 3)  // the chain, `!=`, and its operands
        let (signedIn, anonymous) = try onSmallStack {
            (
                rules.canRead(path: "t", auth: alice, root: .empty, now: 0),
                rules.canRead(path: "t", auth: nil, root: .empty, now: 0)
            )
        }
        #expect(signedIn.isAllowed && signedIn.evaluationSteps > 4_000, "\(signedIn)")
        #expect(!anonymous.isAllowed && !anonymous.exceededBudget, "\(anonymous)")
    }

    @Test func chainsOf100000TermsLoadAndEvaluate() throws {
        let and = Array(repeating: "true", count: 100_000).joined(separator: " && ")
        let or = Array(repeating: "false", count: 99_999).joined(separator: " || ") + " || true"
        let rules = try RulesSet.parse(
            source: #"{"rules": {"a": {".read": "\#(and)"}, "o": {".read": "\#(or)"}}}"#, limits: bigLimits())
        let (a, o) = try onSmallStack {
            (
                rules.canRead(path: "a", auth: nil, root: .empty, now: 0),
                rules.canRead(path: "o", auth: nil, root: .empty, now: 0)
            )
        }
        #expect(a.isAllowed && o.isAllowed, "\(a) \(o)")
        #expect(a.evaluationSteps == 100_001 + Evaluator.ruleSteps)  // each term, the chain, the rule
    }

    /// 100,000 nested parentheses: refused at load, quickly, with the position where the
    /// nesting went past the limit, without recursing 100,000 deep (a small stack suffices).
    @Test func deepParenthesesAreRefusedAtTheLimit() throws {
        let depth = 100_000
        let expression = String(repeating: "(", count: depth) + "true" + String(repeating: ")", count: depth)
        let source = #"{"rules": {"t": {".read": "\#(expression)"}}}"#
        let error = try onSmallStack(kib: 4096) { loadError(source, bigLimits()) }
        guard case let .expression(rulePath, message, line, column) = error else {
            Issue.record("expected an expression error, got \(String(describing: error))")
            return
        }
        #expect(rulePath == "/t/.read")
        #expect(message.contains("nests deeper than 64 levels"), "\(message)")
        // The 64th '(' is the last one allowed: the error points at the 65th.
        let firstParen = position(of: "(", in: source).column
        #expect(line == 1 && column == firstParen + 64, "\(column)")
        // With the default limits the expression is refused for its length first.
        #expect(throws: RulesError.self) { try RulesSet.parse(source: source, limits: RulesSet.Limits()) }
    }

    /// Each way of nesting counts: unary operators, `?:`, member chains, operator chains, calls.
    @Test(arguments: [
        String(repeating: "!", count: 100_000) + "true",
        String(repeating: "-", count: 100) + "1 < 0",
        String(repeating: "true ? ", count: 100) + "true" + String(repeating: " : false", count: 100),
        "auth" + String(repeating: ".a", count: 100) + " == null",
        Array(repeating: "1", count: 100).joined(separator: " + ") + " > 0",
        "auth.uid" + String(repeating: ".toLowerCase()", count: 100) + " == ''",
        "auth[" + String(repeating: "auth[", count: 100) + "'x'" + String(repeating: "]", count: 101) + " == null",
    ])
    func everyKindOfNestingIsBounded(_ expression: String) throws {
        let source = #"{"rules": {"t": {".read": "\#(expression)"}}}"#
        let error = try onSmallStack(kib: 4096) { loadError(source, bigLimits()) }
        #expect(error?.description.contains("nests deeper than 64 levels") == true, "\(String(describing: error))")
    }

    /// The deepest expression the limit allows parses and evaluates on a small stack.
    @Test func theDeepestAllowedExpressionRunsOnASmallStack() throws {
        // 60 `!`, `>`, `.length`, `.uid`, `auth`: 64 levels.
        let expression = String(repeating: "!", count: 60) + "(auth.uid.length > 0)"
        let rules = try RulesSet.parse(source: oneRule(".read", expression))
        #expect(rules.root.children[ChildKey("t")]?.read?.expression.height == 64)
        let decision = try onSmallStack { rules.canRead(path: "t", auth: alice, root: .empty, now: 0) }
        #expect(decision.isAllowed, "\(decision)")
        #expect(throws: RulesError.self) { try RulesSet.parse(source: oneRule(".read", "!" + expression)) }
    }

    /// A JSON document nested 100,000 deep stops at the JSON parser's 64 levels.
    @Test func deepJSONIsRefused() throws {
        let source = String(repeating: "[", count: 100_000)
        let error = try onSmallStack(kib: 4096) { loadError(source, bigLimits()) }
        #expect(error?.description.contains("nested deeper than 64 levels") == true, "\(String(describing: error))")
    }

    @Test func theFileSizeIsBounded() throws {
        let padding = String(repeating: " ", count: 256 * 1024)
        let error = try #require(parseError(#"{"rules": {}}"# + padding))
        #expect(
            error.description
                == "rules file, line 1, column 1: the rules file is 262157 bytes, over the limit of 262144")
        var limits = RulesSet.Limits()
        limits.maxSourceBytes = 300_000
        _ = try RulesSet.parse(source: #"{"rules": {}}"# + padding, limits: limits)
    }

    @Test func theExpressionLengthIsBounded() throws {
        let long = "auth.uid == '" + String(repeating: "x", count: 65_536) + "'"
        let source = "{\"rules\": {\n  \"t\": {\".read\": \"\(long)\"}}}"
        let error = try #require(parseError(source))
        guard case let .expression(rulePath, message, line, column) = error else {
            Issue.record("expected an expression error, got \(error)")
            return
        }
        #expect(rulePath == "/t/.read")
        #expect(message == "the expression is 65550 characters long, over the limit of 65536")
        #expect(line == 2 && column == position(of: "auth.uid", in: source).column)
    }

    // MARK: - The step budget is per request

    /// A write's `.validate` rules at every node draw on one budget: 1,000 children fit the
    /// default, not a budget of 2,000 steps.
    @Test func validationsOfOneWriteShareTheBudget() throws {
        let source = #"{"rules": {".write": true, "$k": {".validate": "newData.val().length > 0"}}}"#
        var children: [String] = []
        for i in 0..<1_000 { children.append(#""c\#(i)": "v""#) }
        let value = try Node(jsonText: "{" + children.joined(separator: ",") + "}")
        let write = { (rules: RulesSet) in
            rules.canWrite(path: .root, newRoot: value, oldRoot: .empty, auth: nil, now: 0)
        }
        let roomy = write(try RulesSet.parse(source: source))
        #expect(roomy.isAllowed, "\(roomy)")
        #expect(roomy.evaluationSteps > 5_000, "\(roomy.evaluationSteps)")
        var limits = RulesSet.Limits()
        limits.evaluationSteps = 2_000
        let tight = write(try RulesSet.parse(source: source, limits: limits))
        #expect(!tight.isAllowed && tight.exceededBudget, "\(tight)")
        #expect(tight.evaluationSteps == 2_000)
    }

    /// Running out denies the request even where a deeper rule would grant: nothing more is
    /// evaluated for it.
    @Test func runningOutDeniesWhateverIsLeft() throws {
        var limits = RulesSet.Limits()
        limits.evaluationSteps = 1_000
        let rules = try RulesSet.parse(
            source: #"{"rules": {".read": "data.child('s').val().toLowerCase() == 'x'", "t": {".read": true}}}"#,
            limits: limits)
        let big = Node.empty.updating("s", with: .string(String(repeating: "A", count: 10_000)))
        let small = Node.empty.updating("s", with: .string("A"))
        let denied = rules.canRead(path: "t", auth: nil, root: big, now: 0)
        #expect(!denied.isAllowed && denied.exceededBudget && ruleID(denied) == "/.read", "\(denied)")
        let granted = rules.canRead(path: "t", auth: nil, root: small, now: 0)
        #expect(granted.isAllowed && ruleID(granted) == "/t/.read", "\(granted)")
        #expect(!granted.exceededBudget && granted.evaluationSteps > 0)
    }

    /// String methods are charged their bytes before they run.
    @Test(arguments: [
        "newData.val().contains('needle')", "newData.val().replace('a', 'bb') != ''",
        "newData.val().toUpperCase() != ''", "newData.val().length > 0", "newData.val() + 'x' != ''",
        "newData.val() == root.child('s').val()", "newData.val().matches(/b/)",
    ])
    func stringWorkIsCharged(_ expression: String) throws {
        var limits = RulesSet.Limits()
        limits.evaluationSteps = 5_000
        let source = oneRule(".write", expression)
        let rules = try RulesSet.parse(source: source, limits: limits)
        let long = Node.string(String(repeating: "a", count: 10_000))
        let old = Node.empty.updating("s", with: long)
        let decision = rules.canWrite(
            path: "t", newRoot: old.updating("t", with: long), oldRoot: old, auth: nil, now: 0)
        #expect(decision.exceededBudget, "\(decision)")
    }

    /// The string methods search bytes (linear time) and keep their meaning.
    @Test(arguments: [
        ("'aaa'.replace('aa', 'b') === 'ba'", true),
        ("'ébé'.replace('é', 'e') === 'ebe'", true),
        ("'a😀b'.contains('😀')", true),
        ("'aab'.contains('ab')", true),
        ("'abab'.contains('abb')", false),
        ("'xyz'.endsWith('xyz')", true),
        ("'yz'.endsWith('xyz')", false),
        ("'abc'.beginsWith('')", true),
    ])
    func stringMethods(_ expression: String, _ expected: Bool) throws {
        let rules = try RulesSet.parse(source: oneRule(".read", expression))
        #expect(rules.canRead(path: "t", auth: nil, root: .empty, now: 0).isAllowed == expected)
    }
}
