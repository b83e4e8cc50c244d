import Hearth
@_spi(HearthInternals) import HearthWire

// Writes: validation, server values, the durable write, and the pushes to every affected
// listener.
//
// Cost: a write visits every listen of every connection (O(listens) overlap tests, each
// O(depth)), plus, for each overlapping filtered query, its window before and after
// (O(children at the query's path)). Bounded by maxListensPerConnection × connections; a
// path-indexed listen tree is the step after this one if fan-out grows.

extension ServerCore {
    /// Converts written JSON to a node, validating as Firebase does.
    func validated(_ json: JSONValue, at path: Path) throws(WriteError) -> Node {
        do { try path.validateWritable() } catch { throw .path(error) }
        let node: Node
        do { node = try Node(json: resolvingPriorities(json, at: path), at: path) } catch { throw .data(error) }
        if node.nestingExceeds(Path.maxDepth - path.depth) { throw .data(.tooDeep(path: path.description)) }
        return node
    }

    /// `json` with every server value written as a priority (`".priority": {".sv": …}`)
    /// resolved against ``now`` and the priority at that location now, as Firebase's server and
    /// the JS SDK's `resolveDeferredValue` do: `timestamp` is now, `{"increment": n}` adds n to
    /// a number priority (and is n over anything else). Done on the JSON, before the node is
    /// made, because a node's priority holds only a number or a string; an operation that runs
    /// later (onDisconnect) keeps its JSON and is resolved when it runs. Anything else that is
    /// not valid is left for `Node(json:)` to refuse.
    func resolvingPriorities(_ json: JSONValue, at path: Path) -> JSONValue {
        Self.resolvingPriorities(json, existing: { data.child(at: path) }, now: now) ?? json
    }

    /// `json` with its priority server values resolved, or nil when it holds none — the common
    /// write, which is read once and never copied. `existing` is the node now at `json`'s
    /// location, looked up only when a server value needs it; a key that is not valid finds
    /// nothing there, and `Node(json:)` refuses it afterwards.
    private static func resolvingPriorities(_ json: JSONValue, existing: () -> Node, now: Int64) -> JSONValue? {
        guard case .object(let members) = json else { return nil }
        var out: [JSONMember]?
        for (i, m) in members.enumerated() {
            let resolved: JSONValue?
            if m.key == ".priority" {
                resolved = resolvedPriority(m.value, existing: { existing().priority }, now: now)
            } else if case .object = m.value {
                resolved = resolvingPriorities(m.value, existing: { existing().child(ChildKey(m.key)) }, now: now)
            } else {
                resolved = nil
            }
            guard let resolved else { continue }
            if out == nil { out = members }
            out?[i].value = resolved
        }
        return out.map(JSONValue.object)
    }

    /// The value a priority server value stands for, or nil when `value` is not one. What the
    /// placeholder means is the model's resolver's (the increment exact when both are integers);
    /// a priority is a `Double`.
    private static func resolvedPriority(_ value: JSONValue, existing: () -> Priority?, now: Int64) -> JSONValue? {
        guard case .object(let members) = value, members.count == 1, members[0].key == ".sv",
            let placeholder = ServerValuePlaceholder(json: members[0].value)
        else { return nil }
        let resolved = placeholder.resolved(
            over: existing().map { priority -> LeafValue in
                switch priority {
                case .number(let n): .number(n)
                case .string(let s): .string(s)
                }
            },
            serverNow: Double(now))
        // An overflow is left as the server value, which `Node(json:)` refuses.
        guard let number = resolved.doubleValue, number.isFinite else { return nil }
        return .number(number)
    }

    /// Converts a merge's children, validating each.
    func validated(_ children: [(Path, JSONValue)], at path: Path) throws(WriteError) -> [(path: Path, node: Node)] {
        var out: [(path: Path, node: Node)] = []
        out.reserveCapacity(children.count)
        for (rel, json) in children {
            if rel.isRoot { throw .overlap("an update may not write its own location as a child") }
            out.append((rel, try validated(json, at: path.appending(rel))))
        }
        // Firebase refuses a merge where one path is an ancestor of another.
        let sorted = out.map(\.path).sorted()
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.contains(b) {
            throw .overlap("\(path.appending(a)) is an ancestor of \(path.appending(b)) in the same update")
        }
        return out
    }

    /// Plans a set (`children` = one child at the empty path, `merge` false) or a merge on the
    /// data as it is now: each child resolved against it, and the database they make.
    func plan(_ path: Path, _ children: [(path: Path, node: Node)], merge: Bool) -> WritePlan {
        var newData = data
        var resolved: [(path: Path, node: Node)] = []
        var writes: [(path: Path, value: Node)] = []
        resolved.reserveCapacity(children.count)
        writes.reserveCapacity(children.count)
        for c in children {
            let at = path.appending(c.path)
            let value = resolve(c.node, at: at, in: data)
            resolved.append((c.path, value))
            writes.append((at, value))
            newData = newData.updating(at, with: value)
        }
        return WritePlan(
            path: path, isMerge: merge, children: resolved, writes: writes, oldData: data, newData: newData)
    }

    /// Asks the policy about a planned write.
    func mayWrite(_ plan: WritePlan, as principal: Principal) -> AccessDecision {
        policy.write(plan.writes, principal: principal, oldData: plan.oldData, newData: plan.newData, now: now)
    }

    /// Plans a set (`merge` false: one child at the empty path) or a merge and asks the policy
    /// about it: the plan to ``apply(_:weight:into:)`` when the policy allows it, nil when not.
    func allowedWrite(
        _ path: Path, _ children: [(path: Path, node: Node)], merge: Bool, as principal: Principal
    ) -> WritePlan? {
        let plan = plan(path, children, merge: merge)
        return mayWrite(plan, as: principal).allowed ? plan : nil
    }

    /// Asks the policy about a read or listen.
    func mayRead(_ path: Path, _ query: QuerySpec, as principal: Principal) -> AccessDecision {
        policy.read(path, query: query, principal: principal, data: data, now: now)
    }

    /// Resolves server values in `node` against what is at `path` in `base`.
    func resolve(_ node: Node, at path: Path, in base: Node) -> Node {
        guard node.containsServerValue else { return node }
        return node.resolvingServerValues(over: base.child(at: path), serverNow: Double(now))
    }

    /// Applies a planned set or merge — the tree the policy was shown becomes the data —,
    /// records the durable write and pushes to listeners. The plan must have been made on the
    /// data as it is now (nothing applied in between). `weight`: the size of the request that
    /// made it, which each push it causes carries (``OutboundMessage/weight``).
    mutating func apply(_ plan: WritePlan, weight: Int, into out: inout ServerOutput) {
        precondition(writesSuspended == nil, "a write was applied while writes are suspended")
        assert(plan.oldData == data, "a write plan applied to data other than the data it was made on")
        if plan.isMerge && plan.children.isEmpty { return }
        let old = data
        data = plan.newData
        if plan.isMerge {
            out.writes.append(.merge(plan.path, plan.children.map { ChildUpdate(path: $0.path, node: $0.node) }))
            notify(
                changedAt: plan.writes.map(\.path), old: old, weight: weight, into: &out,
                merge: (plan.path, plan.children))
        } else {
            out.writes.append(.set(plan.path, plan.children[0].node))
            notify(changedAt: [plan.path], old: old, weight: weight, into: &out, merge: nil)
        }
    }

    /// Pushes a change to every listen it touches, in connection order.
    ///
    /// - A default listen at or above the write gets the write itself: `d` at the written
    ///   path, or `m` with the merge's children (those under the listen).
    /// - A default listen below the write gets its new value (`d` at its path) when it changed.
    /// - A filtered query gets its new window, tagged, when the window changed.
    ///
    /// Only which listens are touched is decided here; each push's text — a window before and
    /// after, a comparison, the JSON — is rendered at delivery from the trees before and after
    /// (``OutboundMessage``), so the core's lock is held O(listens) per write, not O(data).
    mutating func notify(
        changedAt paths: [Path], old: Node, weight: Int, into out: inout ServerOutput,
        merge: (Path, [(path: Path, node: Node)])?
    ) {
        let new = data
        // A merge's pushes carry its children's values after it: found once, for every listener.
        let merged = merge.map { at, children in (at, children.map { ($0.path, new.child(at: at.appending($0.path))) })
        }
        // Only connections that listen are visited (the core keeps their set as listens come and
        // go), and only their listens the write touches are sorted: idle connections cost a
        // write nothing.
        for id in listening.sorted(by: { $0.rawValue < $1.rawValue }) {
            // Copies of what is read, not the connection: a held copy of its listens would make
            // the first revocation below copy them all (once per revocation).
            guard let principal = connections[id]?.principal, let isEventStream = connections[id]?.isEventStream,
                let touched = connections[id]?.listens.values.filter({ l in
                    paths.contains(where: { $0.contains(l.path) || l.path.contains($0) })
                })
            else { continue }
            for l in touched.sorted(by: Listen.inOrder) {
                // Rules may read the data (`root`, `data`): a listen granted before this write
                // is checked again before the write's data goes to it.
                guard mayRead(l.path, l.query, as: principal).allowed else {
                    revoke(id, l, into: &out)
                    continue
                }
                let before = old.child(at: l.path), after = new.child(at: l.path)
                if isEventStream {
                    notifyEventStream(
                        id, l, before: before, after: after, changedAt: paths, merged: merged, weight: weight,
                        into: &out)
                    continue
                }
                if !l.query.loadsAllData {
                    out.send(id, weight: weight) {
                        let window = queryView(after, l.query)
                        guard queryView(before, l.query) != window else { return nil }
                        return ServerMessage.set(path: l.path, data: window.exportJSON(), tag: l.tag).text
                    }
                    continue
                }
                if let (at, values) = merged, l.path.contains(at) {
                    out.send(id, weight: weight) {
                        ServerMessage.merge(path: at, data: values.map { ($0.0, $0.1.exportJSON()) }, tag: nil).text
                    }
                    continue
                }
                if merge == nil, paths.count == 1, l.path.contains(paths[0]) {
                    let at = paths[0], node = new.child(at: at)
                    out.send(id, weight: weight) { ServerMessage.set(path: at, data: node.exportJSON(), tag: nil).text }
                    continue
                }
                // The write is above the listen (or a merge reaches into it from above).
                out.send(id, weight: weight) {
                    before == after ? nil : ServerMessage.set(path: l.path, data: after.exportJSON(), tag: nil).text
                }
            }
        }
    }
}

/// A set or a merge resolved and applied to the data once (``ServerCore/plan(_:_:merge:)``):
/// the policy judges the tree it makes, and applying it makes that tree the data, so a write's
/// tree update is not computed once for the check and again for the apply.
struct WritePlan {
    /// Where the write is.
    let path: Path
    /// A merge (`m`, `PATCH`) rather than a set of one child at the empty path.
    let isMerge: Bool
    /// The children, relative to ``path``, with their server values resolved.
    let children: [(path: Path, node: Node)]
    /// The same children at absolute paths (what the policy is asked about).
    let writes: [(path: Path, value: Node)]
    /// The data the plan was made on.
    let oldData: Node
    /// The data it makes: what the policy judges, and what applying the plan makes the data.
    let newData: Node
}

/// Why written data was refused (answered as `invalid_data`, or REST 400).
package enum WriteError: Error, Sendable, CustomStringConvertible {
    /// The path is not writable.
    case path(PathError)
    /// The data is not valid Firebase data.
    case data(NodeError)
    /// An update's paths overlap.
    case overlap(String)

    package var description: String {
        switch self {
        case .path(let e): "invalid path: \(e)"
        case .data(let e): "invalid data: \(e)"
        case .overlap(let why): "invalid update: \(why)"
        }
    }
}
