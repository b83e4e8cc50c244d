// RegexProgram: a parsed pattern compiled to a Thompson NFA (one instruction per state), with
// counted repetition expanded and the size bounded.

/// A regular expression as an NFA program: consuming instructions (`scalar`, `set`) and the
/// ε-moves between them (`split`, `jump`), ending in `match`. Matching simulates every state at
/// once (``matches(_:budget:)``), so its work is O(instructions × input) whatever the pattern:
/// there is no backtracking to blow up.
struct RegexProgram: Sendable {
    enum Instruction: Sendable, Hashable {
        /// Consumes this scalar value (its canonical form under `i`).
        case scalar(UInt32)
        /// Consumes a scalar of `sets[index]`.
        case set(Int)
        /// Continues at both.
        case split(Int, Int)
        case jump(Int)
        case match
    }

    let instructions: [Instruction]
    let sets: [ScalarSet]
    let anchoredStart: Bool
    let anchoredEnd: Bool
    let ignoresCase: Bool

    /// A pattern whose program would be larger than the limit.
    struct TooLarge: Error {}

    /// Compiles `syntax`, refusing a program of more than `maxStates` instructions (counted
    /// repetition copies its operand: `(a{100}){100}` is 10,000 states). Recursion follows the
    /// tree, whose depth the parser bounded.
    init(_ syntax: RegexSyntax, ignoresCase: Bool, maxStates: Int) throws(TooLarge) {
        var compiler = Compiler(ignoresCase: ignoresCase, maxStates: maxStates)
        try compiler.emit(syntax.root)
        try compiler.append(.match)
        instructions = compiler.program
        sets = compiler.sets
        anchoredStart = syntax.anchoredStart
        anchoredEnd = syntax.anchoredEnd
        self.ignoresCase = ignoresCase
        // The matcher takes the last instruction as the accepting state and follows every jump
        // and split without a bounds check.
        assert(instructions.count <= maxStates && instructions.last == .match, "a program ends in its one accept")
        assert(
            instructions.allSatisfy { instruction in
                switch instruction {
                case .jump(let t): t >= 0 && t < instructions.count
                case .split(let a, let b): a >= 0 && a < instructions.count && b >= 0 && b < instructions.count
                case .set(let index): index >= 0 && index < sets.count
                case .scalar, .match: true
                }
            }, "every jump, split and set of a program is within it")
    }

    private struct Compiler {
        let ignoresCase: Bool
        let maxStates: Int
        var program: [Instruction] = []
        var sets: [ScalarSet] = []
        var setIndex: [ScalarSet: Int] = [:]

        mutating func append(_ instruction: Instruction) throws(TooLarge) {
            guard program.count < maxStates else { throw TooLarge() }
            program.append(instruction)
        }

        /// Appends a placeholder to patch once its targets are known.
        mutating func hole() throws(TooLarge) -> Int {
            try append(.match)
            return program.count - 1
        }

        mutating func emit(_ node: RegexNode) throws(TooLarge) {
            switch node {
            case .scalar(let s):
                try append(.scalar(ignoresCase ? CaseFolding.canonical(s).value : s.value))
            case .set(let set):
                let index = setIndex[set] ?? sets.count
                if index == sets.count {
                    sets.append(set)
                    setIndex[set] = index
                }
                try append(.set(index))
            case .sequence(let items):
                for item in items { try emit(item) }
            case .alternation(let branches):
                // split L1, next; L1: a; jump end; next: split L2, … ; last branch falls through.
                var jumps: [Int] = []
                for (k, branch) in branches.enumerated() {
                    if k == branches.count - 1 {
                        try emit(branch)
                    } else {
                        let split = try hole()
                        try emit(branch)
                        jumps.append(try hole())
                        program[split] = .split(split + 1, program.count)
                    }
                }
                for j in jumps { program[j] = .jump(program.count) }
            case let .repetition(operand, min, max):
                let mandatory = max == nil && min > 0 ? min - 1 : min
                for _ in 0..<mandatory { try emit(operand) }
                if let max {
                    // Each optional copy may be skipped to the end: split copy, end.
                    var skips: [Int] = []
                    for _ in min..<max {
                        skips.append(try hole())
                        try emit(operand)
                    }
                    for k in skips { program[k] = .split(k + 1, program.count) }
                } else if min > 0 {
                    // The last mandatory copy loops back to itself: L: x; split L, next.
                    let start = program.count
                    try emit(operand)
                    try append(.split(start, program.count + 1))
                } else {
                    // L: split body, end; body: x; jump L; end.
                    let loop = try hole()
                    try emit(operand)
                    try append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}
