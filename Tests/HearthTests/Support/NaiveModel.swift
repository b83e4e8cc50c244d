@_spi(HearthInternals) @testable import Hearth

// A deliberately simple model of the store's state semantics, written without the engine's
// data structures: the tree is nested dictionaries, every operation is plain recursion or a
// linear scan. The reducer tests apply the same events to it and to `StoreState` and
// compare. (Keys are `ChildKey`s only because Swift's `String` hashing would merge
// canonically-equivalent keys, which Firebase keeps apart.)

/// A tree value: `nil` (absent) is the empty node.
indirect enum MValue: Equatable {
    case leaf(LeafValue, Priority?)
    case object([ChildKey: MValue], Priority?)

    init?(_ node: Node) {
        if node.isEmpty { return nil }
        if let leaf = node.leafValue {
            self = .leaf(leaf, node.priority)
        } else {
            var dict: [ChildKey: MValue] = [:]
            for (k, v) in node.children { dict[k] = MValue(v) }
            self = .object(dict, node.priority)
        }
    }

    var priority: Priority? {
        switch self {
        case .leaf(_, let p), .object(_, let p): p
        }
    }
}

enum Model {
    static let priorityKey = ChildKey(".priority")

    /// Writes `value` at `path` below `tree`, with Firebase's rules: null deletes and an
    /// object left without children disappears (with its priority); a leaf ignores a null
    /// child write and becomes an object (keeping its priority) on a non-null one;
    /// `.priority` (last segment only) sets the priority of an existing node.
    static func write(_ tree: MValue?, _ path: ArraySlice<ChildKey>, _ value: MValue?) -> MValue? {
        guard let key = path.first else { return value }
        let rest = path.dropFirst()
        if key == priorityKey {
            guard rest.isEmpty, let tree else { return tree }
            var p: Priority?
            if case .leaf(let v, _)? = value {
                switch v {
                case .number(let n): p = .number(n)
                case .string(let s): p = .string(s)
                default: p = nil
                }
            }
            switch tree {
            case .leaf(let v, _): return .leaf(v, p)
            case .object(let d, _): return .object(d, p)
            }
        }
        switch tree {
        case nil:
            guard let child = write(nil, rest, value) else { return nil }
            return .object([key: child], nil)
        case .leaf(_, let p)?:
            guard let child = write(nil, rest, value) else { return tree }
            return .object([key: child], p)
        case .object(var d, let p)?:
            d[key] = write(d[key], rest, value)
            return d.isEmpty ? nil : .object(d, p)
        }
    }

    static func write(_ tree: MValue?, _ path: Path, _ value: MValue?) -> MValue? {
        write(tree, path.keys[...], value)
    }

    static func read(_ tree: MValue?, _ path: Path) -> MValue? {
        var t = tree
        for key in path.keys {
            guard let node = t else { return nil }
            if key == priorityKey {
                guard let p = node.priority else { return nil }
                switch p {
                case .number(let n): t = .leaf(.number(n), nil)
                case .string(let s): t = .leaf(.string(s), nil)
                }
                continue
            }
            guard case .object(let d, _) = node else { return nil }
            t = d[key]
        }
        return t
    }

    /// Firebase export JSON: children in key order, `.priority` last, a leaf with a priority
    /// as `{".value", ".priority"}`.
    static func export(_ tree: MValue?) -> JSONValue {
        guard let tree else { return .null }
        func pjson(_ p: Priority) -> JSONValue {
            switch p {
            case .number(let n): .number(n)
            case .string(let s): .string(s)
            }
        }
        switch tree {
        case let .leaf(v, p):
            guard let p else { return v.json }
            return .object([JSONMember(key: ".value", value: v.json), JSONMember(key: ".priority", value: pjson(p))])
        case let .object(d, p):
            let keys = d.keys.sorted { ChildKey.compare($0, $1) < 0 }
            var members = keys.map { JSONMember(key: $0.string, value: export(d[$0])) }
            if let p { members.append(JSONMember(key: ".priority", value: pjson(p))) }
            return .object(members)
        }
    }
}

/// The naive state model: the same fields as `StoreState`, kept in dictionaries and lists.
struct NaiveState {
    var cache: MValue?
    var writes: [Int64: PendingWrite] = [:]
    var tracked: [Int64: TrackedQuery] = [:]
    var pins: Set<QueryLocation> = []
    var auth: AuthToken?
    var transactions: [Int64: QueuedTransaction] = [:]
    var onDisconnect: [Int64: OnDisconnectOperation] = [:]
    var offset: Double = 0
    var lastWriteID: Int64 = 0, lastQueryID: Int64 = 0, lastTransactionID: Int64 = 0, lastOnDisconnectID: Int64 = 0
    /// Untracked entries as a plain list of (path, last write).
    var untracked: [(path: Path, time: Int64)] = []
    /// Writer watermarks as (highest id, latest time) per writer.
    var watermarks: [String: (id: Int64, at: Int64)] = [:]
    /// The writer-identity runs as a plain list of (first write id, writer), in order.
    var runs: [(first: Int64, writer: String)] = []

    /// The writer of write `id`: the last run beginning at or below it.
    func writer(of id: Int64) -> String? { runs.last { $0.first <= id }?.writer }

    func covered(_ path: Path) -> Bool { tracked.values.contains { $0.path.contains(path) } }

    mutating func noteServerWrite(_ path: Path, _ time: Int64) {
        if covered(path) { return }
        if let i = untracked.firstIndex(where: { $0.path.contains(path) }) {
            untracked[i].time = max(untracked[i].time, time)
            return
        }
        untracked.removeAll { path.contains($0.path) }
        untracked.append((path, time))
    }

    mutating func removeQuery(_ id: Int64, reAdd: Bool) {
        guard let q = tracked.removeValue(forKey: id) else { return }
        // Re-added whether or not data is cached there (the rule must not depend on a cache
        // that may still be loading).
        if reAdd { noteServerWrite(q.path, q.lastUse) }
    }

    mutating func apply(_ event: StoreEvent) {
        switch event {
        case let .serverOverwrite(path, node, at):
            cache = Model.write(cache, path, MValue(node))
            noteServerWrite(path, at)
        case let .serverMerge(path, children, at):
            for c in children { cache = Model.write(cache, path.appending(c.path), MValue(c.node)) }
            noteServerWrite(path, at)
        case .writeSaved(let w):
            writes[w.id] = w
            lastWriteID = max(lastWriteID, w.id)
        case .writeAcked(let id), .writeReverted(let id):
            writes[id] = nil
        case .trackedQuerySaved(let q):
            lastQueryID = max(lastQueryID, q.id)
            let isNew = tracked[q.id]?.location != q.location
            if isNew { removeQuery(q.id, reAdd: false) }
            for (other, oq) in tracked where other != q.id && oq.location == q.location {
                removeQuery(other, reAdd: false)
            }
            tracked[q.id] = q
            if isNew { untracked.removeAll { q.path.contains($0.path) } }
        case let .trackedQueryKeysChanged(id, added, removed):
            if tracked[id]?.keys != nil {
                tracked[id]!.keys = tracked[id]!.keys!.subtracting(removed).union(added)
            }
        case .trackedQueryRemoved(let id):
            removeQuery(id, reAdd: true)
        case let .pinChanged(loc, on):
            if on { pins.insert(loc) } else { pins.remove(loc) }
        case .authSaved(let t): auth = t
        case .authCleared: auth = nil
        case .transactionSaved(let t):
            transactions[t.id] = t
            lastTransactionID = max(lastTransactionID, t.id)
        case .transactionRemoved(let id): transactions[id] = nil
        case .onDisconnectSaved(let op):
            onDisconnect[op.id] = op
            lastOnDisconnectID = max(lastOnDisconnectID, op.id)
        case .onDisconnectAcked(let id):
            guard let op = onDisconnect[id] else { break }
            if case .cancel = op.action {
                // The acked cancel removes itself and every earlier op at or below its path.
                onDisconnect = onDisconnect.filter { !($0.key <= id && op.path.contains($0.value.path)) }
            } else {
                onDisconnect[id]!.acknowledged = true
            }
        case .onDisconnectRemoved(let id): onDisconnect[id] = nil
        case .serverTimeOffset(let ms): offset = ms
        case .sessionStarted(let at):
            for id in tracked.keys where tracked[id]!.active {
                tracked[id]!.active = false
                tracked[id]!.lastUse = max(tracked[id]!.lastUse, at)
            }
        case .cachePruned(let r):
            for p in r.prunedPaths {
                var kept: MValue?
                for k in r.keptPaths where p.contains(k) && k != p {
                    kept = Model.write(kept, p.relativePath(to: k)!, Model.read(cache, k))
                }
                cache = Model.write(cache, p, kept)
                untracked.removeAll { $0.path == p }
            }
            for id in r.removedQueryIDs { removeQuery(id, reAdd: false) }
        case let .writerWatermark(w, id, at):
            let old = watermarks[w] ?? (id, at)
            watermarks[w] = (max(old.id, id), max(old.at, at))
        case .writerWatermarksRemoved(let ws):
            for w in ws { watermarks[w] = nil }
        case let .writerIdentity(writer, first):
            let from = first ?? 0
            runs.removeAll { $0.first >= from }
            if runs.last?.writer != writer { runs.append((from, writer)) }
            // Runs whose ids all lie below the oldest pending write are forgotten; the last
            // one stays.
            let oldest = writes.keys.min()
            runs = runs.enumerated().filter { i, _ in
                i == runs.count - 1 || oldest.map { runs[i + 1].first > $0 } == true
            }.map(\.element)
        }
    }

    /// Differences from the engine's state, as readable lines (empty when equal).
    func differences(from s: StoreState) -> [String] {
        var out: [String] = []
        let mine = Model.export(cache), theirs = s.serverCache.exportJSON()
        if mine != theirs { out.append("cache: model \(mine.serialized()) vs engine \(theirs.serialized())") }
        let ids = writes.keys.sorted()
        if s.pendingWrites.map(\.id) != ids {
            out.append("write ids: model \(ids) vs engine \(s.pendingWrites.map(\.id))")
        }
        for w in s.pendingWrites where writes[w.id] != w { out.append("write \(w.id) differs") }
        if s.trackedQueries != tracked {
            out.append("tracked queries: model \(tracked.keys.sorted()) vs engine \(s.trackedQueries.keys.sorted())")
        }
        if s.pins != pins { out.append("pins differ") }
        if s.auth != auth { out.append("auth differs") }
        if s.transactions != transactions { out.append("transactions differ") }
        if s.onDisconnect != onDisconnect {
            out.append("onDisconnect: model \(onDisconnect.keys.sorted()) vs engine \(s.onDisconnect.keys.sorted())")
        }
        if s.serverTimeOffsetMs != offset { out.append("offset differs") }
        if (s.lastWriteID, s.lastQueryID, s.lastTransactionID, s.lastOnDisconnectID) != (
            lastWriteID, lastQueryID, lastTransactionID, lastOnDisconnectID
        ) {
            out.append("last ids differ")
        }
        let engineMarks = s.writerWatermarks.mapValues { "\($0.id)@\($0.at)" }
        if engineMarks != watermarks.mapValues({ "\($0.id)@\($0.at)" }) {
            out.append("writer watermarks: model \(watermarks) vs engine \(engineMarks)")
        }
        let engineRuns = s.writerIdentities.runs.map { "\($0.firstWriteID):\($0.writer)" }
        if engineRuns != runs.map({ "\($0.first):\($0.writer)" }) {
            out.append("writer runs: model \(runs) vs engine \(engineRuns)")
        }
        for id in ids where s.writerIdentities.writer(of: id) != writer(of: id) {
            out.append("writer of write \(id) differs")
        }
        if s.writerID != runs.last?.writer { out.append("writer id differs") }
        let modelUntracked = untracked.sorted { $0.path < $1.path }
        let engineUntracked = s.untrackedEntries
        if modelUntracked.map(\.path) != engineUntracked.map(\.path)
            || modelUntracked.map(\.time) != engineUntracked.map(\.lastWrite)
        {
            out.append(
                "untracked: model \(modelUntracked.map { "\($0.path)@\($0.time)" }) vs engine \(engineUntracked.map { "\($0.path)@\($0.lastWrite)" })"
            )
        }
        return out
    }
}
