// RulesSet+Limits: the bounds a rules file is loaded and evaluated within.

extension RulesSet {
    /// The bounds a rules file must keep to load, and the work one request may spend evaluating
    /// it. Loading checks each bound as it parses (nothing recurses or allocates past one) and
    /// refuses with a ``RulesError`` naming it; evaluation stops a request at its step budget
    /// and denies it.
    ///
    /// The defaults take every rules file we know of, including Bolt's generated ones; raise a
    /// bound (``RulesSet/parse(source:limits:)``) for a larger file, knowing what it costs.
    public struct Limits: Sendable, Hashable {
        /// The largest rules file, in UTF-8 bytes. Default 256 KiB: the largest rules source
        /// Firebase accepts for Cloud Firestore (its Realtime Database limits name none).
        /// Nesting needs no bound of its own: JSON stops at 64 levels and rules at Firebase's
        /// 32 path levels, whatever the limits.
        public var maxSourceBytes: Int = 256 * 1024

        /// The longest expression of one rule, in Unicode scalars. Default 65,536: a chain of
        /// 4,000 short terms (`auth != null && …`) fits.
        public var maxExpressionLength: Int = 65_536

        /// The deepest nesting in one expression: parentheses, unary operators, `?:`, call
        /// arguments and array literals, and the depth of the tree (a chain of `+` or of
        /// member accesses `a.b.c` is as deep as it is long; a chain of `&&` or `||` is one
        /// level however long). Also bounds the nesting of groups in a regular expression.
        /// Default 64: the evaluator recurses this deep, which stays far below a thread's stack.
        public var maxExpressionDepth: Int = 64

        /// The most states (NFA instructions) one regular expression compiles to. Counted
        /// repetition copies its operand: `[a-z]{2,40}` is 79 states, `(\w{10}){600}` is
        /// 6,000 and refused. Default 5,000; matching costs up to this many steps per scalar
        /// of the string.
        public var maxRegexStates: Int = 5_000

        /// The step budget of one request (``RulesSet/canRead(path:auth:root:now:)``,
        /// `canQuery`, `canWrite` or `canUpdate`): every `.read`, `.write` and `.validate`
        /// the request evaluates draws on it, and so does walking a write's new data to
        /// validate it. A step is an expression node evaluated, a byte of a string compared,
        /// copied, searched or case-mapped, or a regular expression's state visited at one
        /// input position; costlier work counts as several (a rule's context 32, a node of
        /// new data walked 32, a snapshot made by `child()` 8, a path key followed 4, a byte
        /// case-mapped or of a computed path 4). A request that runs out is denied
        /// (``Decision/exceededBudget``), whatever rules were left.
        ///
        /// Default 2,000,000 steps. The weights keep a step at or under about 30 ns on a
        /// 2-core x86-64 VM (Swift 6.3, release build) whatever the rules and data, so a
        /// request's rules cost at most about 60 ms there; ordinary requests use a few hundred
        /// steps (a chat message's write with five `.validate` rules, about 600). A write
        /// validated node by node with a simple rule spends about 90 steps a node: about
        /// 20,000 nodes fit. (Admin requests bypass rules and spend nothing.)
        public var evaluationSteps: Int = 2_000_000

        /// The defaults.
        public init() {}
    }
}
