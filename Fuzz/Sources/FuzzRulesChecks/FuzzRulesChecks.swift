// FuzzRules (Fuzz/README.md): rules sources, raw (mutated from real rules files) or built from the
// input's bytes, × data, auth and requests built from the bytes. Loading returns a value or a typed
// error; every request returns a decision within its step budget, the same one twice, and the same one
// as with a larger budget unless it ran out; never a crash. A third mode checks the regular-expression
// engine against a backtracking reference (FuzzRegexReference.swift) on short strings.
// Fuzz/Sources/FuzzRulesChecks is the one source of these checks: Tests/HearthRulesTests/FuzzChecks/
// holds a symbolic link to each of its files (Fuzz/sync-checks.sh), so the fuzzer and `swift test`
// run one and the same code.
import HearthModel
import HearthRules

public enum FuzzRulesChecks {
    /// Reports a violated invariant (a finding).
    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() { fatalError("FUZZ FINDING: \(message())") }
    }

    /// The budget of the fuzzed requests: small, so that a request doing work the budget does not
    /// count shows up as a slow input (libFuzzer's -timeout), not as a long run.
    static let smallBudget = 20_000
    static let largeBudget = 2_000_000

    /// Runs one input. The first byte picks the mode: 1 builds rules from the bytes, 2 a regular
    /// expression from the bytes and 3 takes one as text (both checked against the reference);
    /// anything else (a real rules file starts with `{`, `/` or a space) is a rules source, up to
    /// its first NUL byte, followed by the bytes the data and requests are built from.
    public static func run(_ bytes: [UInt8]) {
        guard let mode = bytes.first else { return }
        switch mode {
        case 1:
            var generator = FuzzRulesGenerator(FuzzRulesInput(Array(bytes.dropFirst())))
            let source = generator.rulesSource()
            rules(source: source, generator: &generator)
        case 2:
            var input = FuzzRulesInput(Array(bytes.dropFirst()))
            FuzzRegexReference.differential(generated: &input)
        case 3:
            var input = FuzzRulesInput(Array(bytes.dropFirst()))
            FuzzRegexReference.differential(text: &input)
        default:
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            let source = String(decoding: bytes[..<end], as: UTF8.self)
            let rest = end < bytes.count ? Array(bytes[(end + 1)...]) : bytes.reversed()
            var generator = FuzzRulesGenerator(FuzzRulesInput(rest), keys: keys(in: source))
            rules(source: source, generator: &generator)
        }
    }

    /// Loads `source` with a small and a large budget, then runs requests `generator` builds.
    static func rules(source: String, generator: inout FuzzRulesGenerator) {
        var limits = RulesSet.Limits()
        limits.evaluationSteps = smallBudget
        let small: RulesSet
        do {
            small = try RulesSet.parse(source: source, limits: limits)
        } catch {
            check(error.line >= 1 && error.column >= 1, "error without a position: \(error)")
            check(!error.description.isEmpty, "error without a message")
            return
        }
        limits.evaluationSteps = largeBudget
        let large: RulesSet
        do { large = try RulesSet.parse(source: source, limits: limits) } catch {
            check(false, "the file loads with one budget and not another: \(error)")
            return
        }
        for _ in 0..<(1 + generator.input.int(8)) {
            let request = generator.request()
            let decision = request.decide(small)
            check(decision.evaluationSteps <= smallBudget, "over the budget: \(decision.evaluationSteps)")
            check(!(decision.isAllowed && decision.exceededBudget), "allowed over budget: \(decision)")
            check(request.decide(small) == decision, "two decisions for one request: \(decision)")
            let roomy = request.decide(large)
            if decision.exceededBudget {
                check(roomy.exceededBudget || roomy.evaluationSteps > smallBudget, "ran out early: \(roomy)")
            } else {
                check(roomy == decision, "the budget changed a decision: \(decision) / \(roomy)")
            }
            let admin = request.decide(small, as: .admin)
            check(admin.isAllowed && admin.evaluationSteps == 0, "admin denied or charged: \(admin)")
        }
    }

    /// The quoted names in a source, to find the locations its rules are at (bounded).
    static func keys(in source: String) -> [String] {
        var keys: Set<String> = []
        var current: [Unicode.Scalar] = []
        var quoted = false
        for s in source.unicodeScalars {
            if s == "\"" || s == "'" {
                if quoted, !current.isEmpty, current.count <= 24 {
                    keys.insert(String(String.UnicodeScalarView(current)))
                }
                quoted.toggle()
                current = []
            } else if quoted {
                current.append(s)
            }
            if keys.count >= 64 { break }
        }
        return keys.filter { (try? Path(validating: $0))?.depth == 1 && !$0.hasPrefix(".") }.sorted()
    }
}

/// The input's bytes as a stream of choices; zeros when they run out.
struct FuzzRulesInput {
    let bytes: [UInt8]
    var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { at >= bytes.count }

    mutating func byte() -> UInt8 {
        guard at < bytes.count else { return 0 }
        defer { at += 1 }
        return bytes[at]
    }

    /// A number in 0..<bound (0 when `bound` is 0).
    mutating func int(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        let value = bound > 256 ? Int(byte()) << 8 | Int(byte()) : Int(byte())
        return value % bound
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[int(choices.count)] }

    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
}
