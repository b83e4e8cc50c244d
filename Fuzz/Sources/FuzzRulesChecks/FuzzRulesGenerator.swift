// FuzzRules' structure-aware half: rules files, expressions, data, identities and requests built from
// the input's bytes, so that most inputs load and reach evaluation (Fuzz/README.md).
import HearthModel
import HearthRules

/// One request against a rules file.
struct FuzzRulesRequest {
    enum Kind {
        case read(Path)
        case query(Path, QuerySpec)
        case write(Path, Node)
        case update([(path: Path, value: Node)])
    }

    let kind: Kind
    let auth: RulesAuth?
    let root: Node

    func decide(_ rules: RulesSet, as who: RulesAuth? = nil) -> Decision {
        let auth = who ?? self.auth
        switch kind {
        case .read(let path): return rules.canRead(path: path, auth: auth, root: root, now: 1_700_000_000_000)
        case let .query(path, query):
            return rules.canQuery(path: path, query: query, auth: auth, root: root, now: 1_700_000_000_000)
        case let .write(path, value):
            return rules.canWrite(
                path: path, newRoot: root.updating(path, with: value), oldRoot: root, auth: auth, now: 1_700_000_000_000
            )
        case .update(let writes):
            return rules.canUpdate(writes: writes, oldRoot: root, auth: auth, now: 1_700_000_000_000)
        }
    }
}

struct FuzzRulesGenerator {
    var input: FuzzRulesInput
    /// Child names: a fixed few and those of the source.
    let keys: [String]

    init(_ input: FuzzRulesInput, keys: [String] = []) {
        self.input = input
        self.keys = ["a", "b", "users", "t", "x1"] + keys
    }

    // MARK: - Rules files

    /// A rules file: a tree of locations (named and `$wildcard`) with rules at some of them.
    mutating func rulesSource() -> String {
        JSONValue.object([JSONMember(key: "rules", value: location(depth: 0, captures: []))]).serialized()
    }

    private mutating func location(depth: Int, captures: [String]) -> JSONValue {
        var members: [JSONMember] = []
        for kind in [".read", ".write", ".validate"] where input.chance(35) {
            let rule: JSONValue =
                input.chance(15)
                ? .bool(input.chance(50)) : .string(expression(.boolean, depth: 0, captures, read: kind == ".read"))
            members.append(JSONMember(key: kind, value: rule))
        }
        if input.chance(10) { members.append(JSONMember(key: ".indexOn", value: .string(input.pick(keys)))) }
        guard depth < 4 else { return .object(members) }
        var names: Set<String> = []
        for _ in 0..<input.int(4) {
            let wildcard = input.chance(30)
            let name = wildcard ? "$w\(captures.count)" : input.pick(keys)
            guard !names.contains(name), !(wildcard && names.contains(where: { $0.hasPrefix("$") })) else { continue }
            names.insert(name)
            let inner = wildcard ? captures + ["w\(captures.count)"] : captures
            members.append(JSONMember(key: name, value: location(depth: depth + 1, captures: inner)))
        }
        return .object(members)
    }

    // MARK: - Expressions

    enum Kind: CaseIterable { case boolean, number, string, snapshot }

    /// An expression of `kind`, mostly well-typed; sometimes a long chain or a deep nesting.
    mutating func expression(_ kind: Kind, depth: Int, _ captures: [String], read: Bool) -> String {
        if depth == 0 && input.chance(3) {
            let count = 1 + input.int(3_000)
            let term = expression(.boolean, depth: 4, captures, read: read)
            return Array(repeating: term, count: count).joined(separator: input.chance(50) ? " && " : " || ")
        }
        if depth == 0 && input.chance(2) {
            let levels = input.int(100)
            return String(repeating: "(", count: levels) + "true" + String(repeating: ")", count: levels)
        }
        let leaf = depth >= 5 || input.chance(25)
        func sub(_ k: Kind) -> String { expression(k, depth: depth + 1, captures, read: read) }
        switch kind {
        case .boolean:
            if leaf { return input.pick(["true", "false", "auth != null", "auth == null"]) }
            switch input.int(14) {
            case 0: return "(\(sub(.boolean)) && \(sub(.boolean)))"
            case 1: return "(\(sub(.boolean)) || \(sub(.boolean)))"
            case 2: return "!(\(sub(.boolean)))"
            case 3: return "(\(sub(.boolean)) ? \(sub(.boolean)) : \(sub(.boolean)))"
            case 4: return "\(sub(.number)) \(input.pick(["<", "<=", ">", ">=", "==", "!="])) \(sub(.number))"
            case 5: return "\(sub(.string)) \(input.pick(["==", "===", "!=", "<", ">="])) \(sub(.string))"
            case 6: return "\(sub(.snapshot)).\(input.pick(["exists", "isString", "isNumber", "isBoolean"]))()"
            case 7: return "\(sub(.snapshot)).hasChild('\(input.pick(keys))')"
            case 8: return "\(sub(.snapshot)).hasChildren(['\(input.pick(keys))', '\(input.pick(keys))'])"
            case 9: return "\(sub(.string)).matches(/\(FuzzRegexReference.pattern(&input))/\(input.pick(["", "i"])))"
            case 10: return "\(sub(.string)).\(input.pick(["contains", "beginsWith", "endsWith"]))(\(sub(.string)))"
            case 11: return "\(sub(.snapshot)).val() == \(input.pick([sub(.string), sub(.number), "true", "null"]))"
            case 12: return "auth.uid == \(captures.isEmpty ? "'a'" : "$" + input.pick(captures))"
            default: return "\(sub(.snapshot)).hasChildren()"
            }
        case .number:
            if leaf { return input.pick(["0", "1", "-2.5", "now", "1e300"]) }
            switch input.int(5) {
            case 0: return "(\(sub(.number)) \(input.pick(["+", "-", "*", "/", "%"])) \(sub(.number)))"
            case 1: return "\(sub(.string)).length"
            case 2: return "-(\(sub(.number)))"
            case 3: return "\(sub(.snapshot)).getPriority()"
            default: return "\(sub(.snapshot)).val()"
            }
        case .string:
            if leaf {
                var names = ["'ab'", "''", "'a/b'", "auth.uid", "auth.token.email", "'É'"]
                names += captures.map { "$" + $0 }
                return input.pick(names)
            }
            switch input.int(5) {
            case 0: return "(\(sub(.string)) + \(sub(.string)))"
            case 1: return "\(sub(.string)).\(input.pick(["toLowerCase", "toUpperCase"]))()"
            case 2: return "\(sub(.string)).replace(\(sub(.string)), \(sub(.string)))"
            case 3: return "auth.token[\(sub(.string))]"
            default: return "\(sub(.snapshot)).val()"
            }
        case .snapshot:
            if leaf { return input.pick(read ? ["data", "root"] : ["data", "root", "newData"]) }
            switch input.int(3) {
            case 0: return "\(sub(.snapshot)).child('\(input.pick(keys))')"
            case 1: return "\(sub(.snapshot)).child(\(sub(.string)))"
            default: return "\(sub(.snapshot)).parent()"
            }
        }
    }

    // MARK: - Data, identities, requests

    /// A value: leaves of every kind (long strings included), objects of the known names.
    mutating func value(depth: Int) -> Node {
        if depth >= 3 || input.chance(45) {
            switch input.int(6) {
            case 0: return .string(input.pick(["ab", "", "a", "É", "a/b", "😀"]))
            case 1: return .string(String(repeating: input.pick(["ab", "é", "a"]), count: input.int(3_000)))
            case 2: return Node(.number(input.pick([0, 1, -2.5, 1e300])))
            case 3: return Node(.bool(input.chance(50)))
            case 4: return .empty
            default: return .string(input.pick(keys))
            }
        }
        var children: [(key: ChildKey, value: Node)] = []
        var seen: Set<String> = []
        let count = input.chance(5) ? input.int(400) : input.int(5)
        for i in 0..<count {
            let name = input.chance(70) ? input.pick(keys) : "k\(i)"
            guard seen.insert(name).inserted else { continue }
            children.append((ChildKey(name), value(depth: depth + 1)))
        }
        return Node(children: children)
    }

    mutating func path() -> Path {
        var keys: [ChildKey] = []
        for _ in 0..<input.int(5) { keys.append(ChildKey(input.pick(self.keys))) }
        return Path(keys: keys)
    }

    mutating func auth() -> RulesAuth? {
        switch input.int(4) {
        case 0: return nil
        case 1:
            let token = JSONValue.object([
                JSONMember(key: "email", value: .string(input.pick(["a@example.com", "É", ""]))),
                JSONMember(key: "admin", value: .bool(input.chance(50))),
            ])
            return RulesAuth(uid: input.pick(keys), token: token)
        case 2: return RulesAuth(variable: [JSONMember(key: "uid", value: .number(1))])
        default: return RulesAuth(uid: input.pick(keys))
        }
    }

    mutating func request() -> FuzzRulesRequest {
        let root = value(depth: 0)
        let auth = auth()
        let kind: FuzzRulesRequest.Kind
        switch input.int(4) {
        case 0: kind = .read(path())
        case 1: kind = .query(path(), QuerySpec(orderBy: .child(Path(keys: [ChildKey(input.pick(keys))]))))
        case 2: kind = .write(path(), value(depth: 1))
        default:
            var writes: [(path: Path, value: Node)] = []
            for _ in 0...input.int(3) { writes.append((path(), value(depth: 2))) }
            kind = .update(writes)
        }
        return FuzzRulesRequest(kind: kind, auth: auth, root: root)
    }
}
