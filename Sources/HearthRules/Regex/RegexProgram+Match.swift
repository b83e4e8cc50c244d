// RegexProgram+Match: the NFA simulation (Thompson's): every live state advances together over
// the input, one scalar at a time, so the work is bounded by states × scalars.

extension RegexProgram {
    /// Whether the pattern matches anywhere in `string` (JavaScript's `RegExp.test`; `^` and
    /// `$` pin the match to the ends). The input is read as Unicode scalars, so `.` and a class
    /// consume one scalar, an emoji included.
    ///
    /// Steps charged per input position on top of its states: reading the scalar and turning
    /// the state sets over.
    static let positionSteps = 2
    /// Steps charged per non-ASCII input position under `i`: its case mappings (``FoldedScalar``)
    /// cost about as much as this many other steps.
    static let foldingSteps = 16

    /// Charges `budget` the program's size to start, then, after each input position, one step
    /// per state reached there (plus ``positionSteps``, and ``foldingSteps`` for a non-ASCII
    /// scalar under `i`); throws when the budget runs out.
    func matches(_ string: String, budget: inout StepBudget) throws(BudgetExhausted) -> Bool {
        let count = instructions.count
        let accept = count - 1
        try budget.charge(count)
        var current = StateSet(capacity: count)
        var next = StateSet(capacity: count)
        var stack: [Int] = []
        var atStart = true
        var scalars = string.unicodeScalars.makeIterator()
        while true {
            var work = Self.positionSteps
            if atStart || !anchoredStart {
                work += close(0, into: &current, stack: &stack)
            }
            if current.contains(accept) && !anchoredEnd { return true }
            guard let scalar = scalars.next() else { return current.contains(accept) }
            if current.isEmpty { return false }
            let folded = ignoresCase ? FoldedScalar(scalar) : nil
            if folded != nil && !scalar.isASCII { work += Self.foldingSteps }
            next.removeAll()
            for k in 0..<current.count {
                let pc = current[k]
                work += 1
                let advances: Bool
                switch instructions[pc] {
                case .scalar(let value): advances = value == (folded?.canonical ?? scalar).value
                case .set(let index): advances = folded.map { sets[index].contains($0) } ?? sets[index].contains(scalar)
                default: advances = false
                }
                if advances { work += close(pc + 1, into: &next, stack: &stack) }
            }
            try budget.charge(work)
            swap(&current, &next)
            atStart = false
        }
    }

    /// Adds `pc` and every state its ε-moves reach to `set` (each state once: an ε-loop such
    /// as `(a*)*` ends there). Returns the states added.
    private func close(_ pc: Int, into set: inout StateSet, stack: inout [Int]) -> Int {
        var added = 0
        stack.append(pc)
        while let pc = stack.popLast() {
            if set.contains(pc) { continue }
            set.insert(pc)
            added += 1
            switch instructions[pc] {
            case .jump(let target): stack.append(target)
            case .split(let a, let b):
                stack.append(b)
                stack.append(a)
            default: break
            }
        }
        return added
    }
}

/// A set of states with O(1) insert, membership and clear, iterable in insertion order
/// (Briggs and Torczon's sparse set).
private struct StateSet {
    private var dense: [Int]
    private var sparse: [Int]
    private(set) var count = 0

    init(capacity: Int) {
        dense = Array(repeating: 0, count: capacity)
        sparse = Array(repeating: 0, count: capacity)
    }

    var isEmpty: Bool { count == 0 }

    subscript(k: Int) -> Int { dense[k] }

    func contains(_ pc: Int) -> Bool {
        let d = sparse[pc]
        return d < count && dense[d] == pc
    }

    mutating func insert(_ pc: Int) {
        assert(!contains(pc) && count < dense.count, "a state is added once, within the program's size")
        sparse[pc] = count
        dense[count] = pc
        count += 1
    }

    mutating func removeAll() { count = 0 }
}
