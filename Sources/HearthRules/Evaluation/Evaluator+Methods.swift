// Evaluator, continued: method calls — the string methods (each charged its bytes before it
// runs) and the data-snapshot methods (each charged the path keys it follows).

import HearthModel

extension Evaluator {
    /// Steps charged per byte of a string whose case is mapped (a non-ASCII scalar's mapping
    /// costs about as much as this many other steps).
    static let caseMappingStepsPerByte = 4
    /// Steps charged per data snapshot made (`child()`, `parent()`): a path and a box.
    static let snapshotSteps = 8
    /// Steps charged per key of a path followed in the data.
    static let keySteps = 4
    /// Steps charged per node of a write's new data walked to validate it: its location and
    /// the data below it.
    static let walkSteps = 32
    /// Steps charged per rule evaluated: its context.
    static let ruleSteps = 32
    /// Steps charged per byte of a path computed at evaluation (`child(auth.uid + '/x')`),
    /// parsed and checked key by key.
    static let pathStepsPerByte = 4

    mutating func call(
        _ base: RuleValue, _ method: Method, _ arguments: [Expr], _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        if method.isSnapshotMethod {
            guard case .snapshot(let snapshot) = base else { throw fail("\(method.rawValue)() needs a data snapshot") }
            return try snapshotMethod(snapshot, method, arguments, c)
        }
        guard case .string(let s) = base else {
            throw fail("\(method.rawValue)() is a string method, not a method of a \(base.typeName)")
        }
        var strings: [String] = []
        for argument in arguments {
            switch try evaluate(argument, c) {
            case .string(let a): strings.append(a)
            case .regex(let r) where method == .matches:
                do { return .bool(try r.matches(s, budget: &budget)) } catch { throw overBudget(in: " in matches()") }
            case let other: throw fail("\(method.rawValue)() needs string arguments, not a \(other.typeName)")
            }
        }
        let length = s.utf8.count
        switch method {
        case .contains:
            guard !strings[0].isEmpty else { return .bool(true) }
            try charge(length + strings[0].utf8.count)
            return .bool(!ByteSearch.occurrences(of: Array(strings[0].utf8), in: Array(s.utf8), limit: 1).isEmpty)
        case .beginsWith:
            try charge(min(length, strings[0].utf8.count))
            return .bool(s.utf8.starts(with: strings[0].utf8))
        case .endsWith:
            let suffix = strings[0].utf8
            try charge(min(length, suffix.count))
            return .bool(length >= suffix.count && s.utf8.suffix(suffix.count).elementsEqual(suffix))
        case .replace:
            let (target, replacement) = (strings[0].utf8.count, strings[1].utf8.count)
            guard target > 0 else { return .string(s) }
            // The search, and the result at its largest: every occurrence replaced (each one
            // also costs a splice).
            try charge(length + target + length + (length / target) * (replacement + Self.keySteps))
            return .string(ByteSearch.replacing(strings[0], with: strings[1], in: s))
        case .toLowerCase:
            try charge(length * Self.caseMappingStepsPerByte)
            return .string(s.lowercased())
        case .toUpperCase:
            try charge(length * Self.caseMappingStepsPerByte)
            return .string(s.uppercased())
        default: throw fail("matches() needs a regular expression")
        }
    }

    /// The child path an argument names, or nil when it is no valid path (a key with a dot, say):
    /// Firebase answers such a path as a child that does not exist.
    private mutating func childPath(
        _ argument: Expr, _ c: EvaluationContext, _ method: Method
    ) throws(EvaluationError) -> Path? {
        if case .path(_, let path) = argument.kind {
            try charge(path.depth * Self.keySteps)
            return path
        }
        guard case .string(let s) = try evaluate(argument, c) else {
            throw fail("\(method.rawValue)() needs a string path")
        }
        try charge(s.utf8.count * Self.pathStepsPerByte)
        guard let path = try? Path(validating: s) else { return nil }
        guard !path.isRoot else { throw fail("\(method.rawValue)() needs a non-empty path") }
        try charge(path.depth * Self.keySteps)
        return path
    }

    private mutating func snapshotMethod(
        _ snap: RuleSnapshot, _ method: Method, _ arguments: [Expr], _ c: EvaluationContext
    ) throws(EvaluationError) -> RuleValue {
        switch method {
        case .val: return RuleValue(primitive: snap.node)
        case .exists: return .bool(!snap.node.isEmpty)
        case .getPriority:
            guard let priority = snap.node.priority else { return .null }
            return RuleValue(leaf: priority.leafValue)
        case .isNumber:
            if case .number = RuleValue(primitive: snap.node) { return .bool(true) }
            return .bool(false)
        case .isString:
            if case .string = RuleValue(primitive: snap.node) { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool = RuleValue(primitive: snap.node) { return .bool(true) }
            return .bool(false)
        case .child:
            try charge(Self.snapshotSteps)
            guard let relative = try childPath(arguments[0], c, method) else {
                // No such child: an empty snapshot (the path has no place in the tree; its
                // location stays this snapshot's).
                return .snapshot(RuleSnapshot(tree: snap.tree, path: snap.path, node: .empty))
            }
            let path = snap.path.appending(relative)
            return .snapshot(RuleSnapshot(tree: snap.tree, path: path, node: snap.node.child(at: relative)))
        case .parent:
            guard let parent = snap.path.parent else { throw fail("the root has no parent") }
            try charge(Self.snapshotSteps + parent.depth * Self.keySteps)
            return .snapshot(RuleSnapshot(tree: snap.tree, path: parent, node: snap.tree.child(at: parent)))
        case .hasChild:
            guard let relative = try childPath(arguments[0], c, method) else { return .bool(false) }
            return .bool(!snap.node.child(at: relative).isEmpty)
        case .hasChildren:
            guard let argument = arguments.first else { return .bool(snap.node.childCount > 0) }
            guard case .array(let names) = argument.kind else { throw fail("hasChildren() needs an array") }
            for name in names {
                guard let relative = try childPath(name, c, method), !snap.node.child(at: relative).isEmpty else {
                    return .bool(false)
                }
            }
            return .bool(true)
        default:
            throw fail("\(method.rawValue)() is not a snapshot method")
        }
    }
}

/// Substring search over UTF-8 bytes (Knuth–Morris–Pratt): O(haystack + needle) whatever the
/// input. UTF-8 is self-synchronizing, so an occurrence of one valid UTF-8 string in another
/// starts and ends on scalar boundaries: the byte occurrences are exactly the scalar ones.
enum ByteSearch {
    /// The start offsets of the non-overlapping occurrences of `needle` (not empty) in
    /// `haystack`, left to right, at most `limit` of them.
    static func occurrences(of needle: [UInt8], in haystack: [UInt8], limit: Int = .max) -> [Int] {
        // fallback[k]: the length of the longest proper border of needle[0...k].
        var fallback = Array(repeating: 0, count: needle.count)
        var border = 0
        for k in 1..<max(needle.count, 1) {
            while border > 0 && needle[k] != needle[border] { border = fallback[border - 1] }
            if needle[k] == needle[border] { border += 1 }
            fallback[k] = border
        }
        var found: [Int] = []
        var matched = 0
        for (k, byte) in haystack.enumerated() {
            while matched > 0 && byte != needle[matched] { matched = fallback[matched - 1] }
            if byte == needle[matched] { matched += 1 }
            if matched == needle.count {
                found.append(k + 1 - needle.count)
                if found.count == limit { break }
                matched = 0  // non-overlapping: start afresh after an occurrence
            }
        }
        return found
    }

    /// `string` with every non-overlapping occurrence of `target` (not empty), from the left,
    /// replaced by `replacement`.
    static func replacing(_ target: String, with replacement: String, in string: String) -> String {
        let bytes = Array(string.utf8)
        let targetBytes = Array(target.utf8)
        let hits = occurrences(of: targetBytes, in: bytes)
        guard !hits.isEmpty else { return string }
        var out: [UInt8] = []
        var from = 0
        for hit in hits {
            out += bytes[from..<hit]
            out += replacement.utf8
            from = hit + targetBytes.count
        }
        out += bytes[from...]
        return String(decoding: out, as: UTF8.self)
    }
}
