import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

/// The random workload's vocabulary: a small key space (so that writes collide and queries
/// see each other's changes), values that sort in interesting ways, and queries of every
/// index with limits and ranges.
///
/// Everything lives under `/k`: children `a`…`d` (leaves or objects with `x` and `y`) and a
/// list `/k/list` that pushes append to.
enum SimWorkload {
    static let keys: [ChildKey] = ["a", "b", "c", "d"]
    static let fields: [ChildKey] = ["x", "y"]

    /// An integer leaf in canonical form (what the API and the wire produce).
    static func int(_ i: Int) -> Node { Node(.integer(exactly: Int64(i))) }

    /// A value: a small integer, a string, a bool, an object of fields, or null (a remove).
    static func value(_ r: inout SimRandom, allowNull: Bool = true) -> Node {
        switch r.int(0...9) {
        case 0, 1, 2: return int(r.int(0...5))
        case 3: return Node(.string("s\(r.int(0...3))"))
        case 4: return Node(.bool(r.chance(0.5)))
        case 5, 6, 7:
            var children: [(key: ChildKey, value: Node)] = []
            for f in fields where r.chance(0.7) { children.append((f, int(r.int(0...5)))) }
            if children.isEmpty { children.append(("x", int(r.int(0...5)))) }
            return Node(children: children)
        default:
            return allowNull ? .empty : int(r.int(0...5))
        }
    }

    /// A path to overwrite: `/k`, `/k/<key>`, `/k/<key>/<field>`, or a list entry.
    static func setPath(_ r: inout SimRandom, listKeys: [ChildKey]) -> Path {
        switch r.int(0...9) {
        case 0: return "k"
        case 1, 2, 3, 4: return Path(keys: ["k", r.pick(keys)])
        case 5, 6, 7: return Path(keys: ["k", r.pick(keys), r.pick(fields)])
        default:
            if let key = listKeys.isEmpty ? nil : r.pick(listKeys) { return Path(keys: ["k", "list", key]) }
            return Path(keys: ["k", r.pick(keys)])
        }
    }

    /// A multi-path update: its location and 1…3 non-overlapping children.
    static func update(_ r: inout SimRandom) -> (Path, [ChildUpdate]) {
        let atRoot = r.chance(0.6)
        let base: Path = atRoot ? "k" : Path(keys: ["k", r.pick(keys)])
        var children: [ChildUpdate] = []
        var used: [Path] = []
        for _ in 0..<r.int(1...3) {
            let rel: Path =
                atRoot
                ? (r.chance(0.5) ? Path(keys: [r.pick(keys)]) : Path(keys: [r.pick(keys), r.pick(fields)]))
                : Path(keys: [r.pick(fields)])
            if used.contains(where: { $0.contains(rel) || rel.contains($0) }) { continue }
            used.append(rel)
            children.append(ChildUpdate(path: rel, node: value(&r)))
        }
        return (base, children)
    }

    /// A query location: the default query or a filtered one at `/k`, `/k/list`, a key, or
    /// the root.
    static func location(_ r: inout SimRandom) -> QueryLocation {
        let path: Path =
            switch r.int(0...9) {
            case 0: .root
            case 1: "k/list"
            case 2: Path(keys: ["k", r.pick(keys)])
            default: "k"
            }
        return QueryLocation(path: path, query: query(&r))
    }

    static func query(_ r: inout SimRandom) -> QuerySpec {
        var q: QuerySpec
        switch r.int(0...4) {
        case 0: return .default
        case 1: q = QuerySpec(orderBy: .key)
        case 2: q = QuerySpec(orderBy: .value)
        case 3: q = QuerySpec(orderBy: .child("x"))
        default: q = QuerySpec(orderBy: .priority)
        }
        let isKey = q.index == .key
        func bound(_ r: inout SimRandom) -> Node {
            isKey ? Node(.string(r.pick(keys).string)) : int(r.int(0...5))
        }
        if r.chance(0.3) { q = (try? q.startAt(bound(&r))) ?? q }
        if r.chance(0.3) { q = (try? q.endAt(bound(&r))) ?? q }
        if r.chance(0.6) {
            let n = r.int(1...3)
            q = (try? (r.chance(0.5) ? q.limitToFirst(n) : q.limitToLast(n))) ?? q
        }
        return q
    }
}
