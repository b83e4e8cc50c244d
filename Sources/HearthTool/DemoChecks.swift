/// One behaviour a demo shows: what the documentation page says, and what the demo must see for
/// it, in order, as the step prints it (the expectations are data: `DemoExpectations.swift`).
struct Behaviour: Sendable, Equatable {
    /// The page's claim, one line.
    let claim: String
    /// What the step must see, in the order it must see it.
    let expected: [String]

    init(_ claim: String, _ expected: [String]) {
        self.claim = claim
        self.expected = expected
    }
}

/// One behaviour compared with what a step saw.
struct Verdict: Sendable, Equatable {
    let behaviour: Behaviour
    let seen: [String]

    /// Whether what was seen is what the page says, line for line. Runs of spaces do not count
    /// (the story pads its columns; the expectations are written with single spaces).
    var shown: Bool { seen.map(Verdict.normalized) == behaviour.expected.map(Verdict.normalized) }

    /// What the demo prints for it: a ✓ and the claim; or a ✗, the claim, and both lists.
    var lines: [String] {
        guard !shown else { return ["✓ \(behaviour.claim)"] }
        func list(_ title: String, _ items: [String]) -> [String] {
            let pad = String(repeating: " ", count: title.count)
            guard let first = items.first else { return ["    \(title)(nothing)"] }
            return ["    \(title)\(first)"] + items.dropFirst().map { "    \(pad)\($0)" }
        }
        // The steps indent what they print; the lists line up without it.
        let seenLines = seen.map { String($0.drop { $0 == " " }) }
        return ["✗ \(behaviour.claim)"] + list("expected: ", behaviour.expected) + list("seen:     ", seenLines)
    }

    /// `line` without leading or trailing spaces, its runs of spaces made one.
    static func normalized(_ line: String) -> String {
        line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}

/// The verdicts of one demo run, and what they add up to.
struct Checklist: Sendable {
    private(set) var verdicts: [Verdict] = []

    /// Compares `seen` with `behaviour`, keeps the verdict and returns it.
    @discardableResult
    mutating func check(_ behaviour: Behaviour, seen: [String]) -> Verdict {
        let verdict = Verdict(behaviour: behaviour, seen: seen)
        verdicts.append(verdict)
        return verdict
    }

    /// How many behaviours were shown as the page says.
    var shownCount: Int { verdicts.filter(\.shown).count }

    /// Whether every behaviour checked was shown (and there was at least one).
    var allShown: Bool { !verdicts.isEmpty && shownCount == verdicts.count }

    /// The run's last line: `N of M behaviours shown`.
    var summary: String { "\(shownCount) of \(verdicts.count) behaviours shown" }

    /// The tool's exit code for the run: 0 when every behaviour was shown, else 1 (a failure).
    var exitCode: Int32 { allShown ? ExitCodes.ok : ExitCodes.failure }
}

/// What both demos tell their story with: numbered headings and a verdict per behaviour, each
/// printed through the demo's own `say`.
protocol DemoNarrator {
    var checklist: Checklist { get set }
    func say(_ s: String)
}

extension DemoNarrator {
    func heading(_ n: Int, _ title: String) {
        say("")
        say("\(n). \(title)")
        say(String(repeating: "─", count: title.count + 3))
    }

    /// Compares what a step saw with the page and prints the verdict.
    mutating func check(_ behaviour: Behaviour, _ seen: [String]) {
        for line in checklist.check(behaviour, seen: seen).lines { say(line) }
    }
}
