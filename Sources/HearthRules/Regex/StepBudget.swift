// StepBudget: how much work one request's rules evaluation may still do, counted in steps.

/// The work one request may spend evaluating rules, in steps.
///
/// A step is one unit of work whose cost does not depend on the data: an expression node
/// evaluated, a data node walked, a key of a path followed, a byte of a string compared,
/// copied, searched or case-mapped, or a state of a regular expression's automaton visited at
/// one input position. Work is charged before it is done wherever its size is known in advance
/// (string operations), so nothing large starts without being paid for; a regular expression
/// pays after each input position, so it can overrun by at most one position's work (twice
/// its states).
struct StepBudget {
    /// The steps allowed in all.
    let limit: Int
    /// The steps spent so far (never above `limit`).
    private(set) var used = 0
    /// Whether a charge was refused: the evaluation must stop.
    private(set) var isExhausted = false

    init(limit: Int) { self.limit = max(0, limit) }

    /// Spends `steps`, or throws when fewer than `steps` are left (and spends what was left,
    /// so that `used` reports the whole budget).
    mutating func charge(_ steps: Int) throws(BudgetExhausted) {
        assert(steps >= 0, "a charge is a count of work, never negative")
        if steps > limit - used || isExhausted {
            used = limit
            isExhausted = true
            throw BudgetExhausted()
        }
        used += steps
        assert(used <= limit, "the steps spent stay within the budget")
    }
}

/// A request ran out of evaluation steps.
struct BudgetExhausted: Error {}
