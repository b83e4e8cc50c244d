import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting

/// Focused tests of the view engine (``SyncTree``) beyond the Firebase conformance cases.
@Suite struct ViewEngineTests {
    static func node(_ json: String) -> Node {
        do { return try Node(jsonText: json) } catch { fatalError("bad test JSON \(json): \(error)") }
    }

    static func summary(_ events: [ViewEvent]) -> [String] {
        events.map { e in
            switch e.kind {
            case .value: "\(e.path) value \(e.node.description)"
            case .childRemoved: "\(e.path) \(e.kind.rawValue) \(e.childKey?.string ?? "?")"
            default:
                "\(e.path) \(e.kind.rawValue) \(e.childKey?.string ?? "?") prev=\(e.previousChildKey?.string ?? "nil")"
            }
        }
    }

    // MARK: - Event order

    @Test func deeperLocationsFirstThenTypeOrderPerView() throws {
        let tree = SyncTree()
        let byScore = try QuerySpec(orderBy: .child("score")).limitToLast(2)
        tree.addListener(at: "a", query: .default, registration: RegistrationID(1))
        tree.addListener(at: "a/x", query: .default, registration: RegistrationID(2))
        tree.addListener(at: "a", query: byScore, registration: RegistrationID(3))
        _ = tree.applyServerOverwrite(Self.node(#"{"x":{"score":1},"y":{"score":5},"z":{"score":3}}"#), at: "a")
        let events = tree.applyServerOverwrite(Self.node(#"{"x":{"score":9},"z":null,"w":{"score":4}}"#), at: "a")
        #expect(
            Self.summary(events) == [
                // a/x first (deeper), then the views at a in creation order.
                "a/x child_changed score prev=nil",
                #"a/x value {"score":9}"#,
                // Removals in index order (priority, then key), then additions, then changes.
                "a child_removed y",
                "a child_removed z",
                "a child_added w prev=nil",
                "a child_changed x prev=w",
                #"a value {"w":{"score":4},"x":{"score":9}}"#,
                // limitToLast(2) by score: was z(3), y(5); now w(4), x(9). Sorted by score.
                "a child_removed z",
                "a child_removed y",
                "a child_added w prev=nil",
                "a child_added x prev=w",
                #"a value {"w":{"score":4},"x":{"score":9}}"#,
            ])
    }

    @Test func childMovedAccompaniesAnIndexChange() throws {
        let tree = SyncTree()
        tree.addListener(at: "l", query: QuerySpec(orderBy: .value), registration: RegistrationID(1))
        _ = tree.applyServerOverwrite(Self.node(#"{"a":1,"b":2,"c":3}"#), at: "l")
        let events = tree.applyServerOverwrite(.number(5), at: "l/a")
        #expect(
            Self.summary(events) == [
                "l child_moved a prev=c",
                "l child_changed a prev=c",
                #"l value {"a":5,"b":2,"c":3}"#,
            ])
        // Equal value: nothing at all, not even `value`.
        #expect(tree.applyServerOverwrite(.number(5), at: "l/a").isEmpty)
    }

    @Test func kindsSelectEvents() {
        let tree = SyncTree()
        tree.addListener(at: "l", query: .default, registration: RegistrationID(1), kinds: .value)
        tree.addListener(at: "l", query: .default, registration: RegistrationID(2), kinds: .children)
        let events = tree.applyServerOverwrite(Self.node(#"{"a":1}"#), at: "l")
        #expect(events.map(\.registration) == [RegistrationID(2), RegistrationID(1)])
        #expect(events.map(\.kind) == [.childAdded, .value])
    }

    @Test func valueOnlyWhenComplete() {
        let tree = SyncTree()
        tree.addListener(at: "p", query: .default, registration: RegistrationID(1))
        // A child write under a location never loaded: child event, no value.
        let events = tree.applyUserOverwrite(.string("x"), at: "p/c", writeID: 1)
        #expect(Self.summary(events) == ["p child_added c prev=nil"])
        #expect(tree.eventCache(at: "p", query: .default)?.complete == false)
        // The listen completing with no data makes it complete.
        let done = tree.applyListenComplete(at: "p", query: .default)
        #expect(Self.summary(done) == [#"p value {"c":"x"}"#])
    }

    // MARK: - Accumulator

    @Test func accumulatorMergesChangesToOneChild() {
        let k: ChildKey = "k"
        let one = Node.number(1), two = Node.number(2), three = Node.number(3)
        func net(_ changes: [Change]) -> [String] {
            let acc = ChildChangeAccumulator()
            for c in changes { acc.track(c) }
            return acc.netChanges.map { "\($0.kind) \($0.node) old=\($0.oldNode?.description ?? "nil")" }
        }
        #expect(net([.removed(k, one), .added(k, two)]) == ["childChanged 2 old=1"])
        #expect(net([.added(k, one), .removed(k, one)]) == [])
        #expect(net([.changed(k, new: two, old: one), .removed(k, two)]) == ["childRemoved 1 old=nil"])
        #expect(net([.added(k, one), .changed(k, new: two, old: one)]) == ["childAdded 2 old=nil"])
        #expect(net([.changed(k, new: two, old: one), .changed(k, new: three, old: two)]) == ["childChanged 3 old=1"])
        // Different children stay apart, in first-tracked order.
        let acc = ChildChangeAccumulator()
        acc.track(.added("b", one))
        acc.track(.added("a", two))
        #expect(acc.netChanges.map { $0.childKey?.string } == ["b", "a"])
    }

    // MARK: - Limit windows

    @Test func limitWindowPullsInTheNextChild() throws {
        let tree = SyncTree()
        let first2 = try QuerySpec(orderBy: .priority).limitToFirst(2)
        tree.addListener(at: "l", query: .default, registration: RegistrationID(1), kinds: .value)
        tree.addListener(at: "l", query: first2, registration: RegistrationID(2))
        #expect(tree.tag(at: "l", query: first2) == 1)
        _ = tree.applyServerOverwrite(Self.node(#"{"a":1,"b":2,"c":3,"d":4}"#), at: "l")
        // Removing a windowed child pulls in the next one from the complete server data.
        var events = tree.applyServerOverwrite(.empty, at: "l/a").filter { $0.registration == RegistrationID(2) }
        #expect(Self.summary(events) == ["l child_removed a", "l child_added c prev=b", #"l value {"b":2,"c":3}"#])
        // So does a local delete; and its revert puts the window back.
        events = tree.applyUserOverwrite(.empty, at: "l/b", writeID: 1).filter { $0.registration == RegistrationID(2) }
        #expect(Self.summary(events) == ["l child_removed b", "l child_added d prev=c", #"l value {"c":3,"d":4}"#])
        events = tree.ackUserWrite(1, revert: true).filter { $0.registration == RegistrationID(2) }
        #expect(Self.summary(events) == ["l child_removed d", "l child_added b prev=nil", #"l value {"b":2,"c":3}"#])
        // A child inserted before the boundary pushes the last one out.
        events = tree.applyServerOverwrite(.number(0), at: "l/0").filter { $0.registration == RegistrationID(2) }
        #expect(Self.summary(events) == ["l child_removed c", "l child_added 0 prev=nil", #"l value {"0":0,"b":2}"#])
    }

    /// A merge that changes both the child leaving a window and the child refilling it: the
    /// refill must use the data after the merge. (Firebase hands views the complete server
    /// cache read before the operation and would pull in `b` here; see
    /// `ViewOperation.applyingServerData(to:)`.)
    @Test func limitRefillUsesDataAfterTheMerge() throws {
        let tree = SyncTree()
        let q = try QuerySpec(orderBy: .child("s")).limitToLast(2)
        tree.addListener(at: "l", query: .default, registration: RegistrationID(1), kinds: .value)
        tree.addListener(at: "l", query: q, registration: RegistrationID(2))
        _ = tree.applyServerOverwrite(Self.node(#"{"2":"y","10":"x","a":{"s":4},"b":"y","d":{"s":2}}"#), at: "l")
        let events = tree.applyServerMerge(
            [ChildUpdate(path: "a", node: .string("y")), ChildUpdate(path: "2", node: Self.node(#"{"s":0}"#))], at: "l"
        ).filter { $0.registration == RegistrationID(2) }
        #expect(
            Self.summary(events) == [
                "l child_removed a", "l child_added 2 prev=nil", #"l value {"2":{"s":0},"d":{"s":2}}"#,
            ])
    }

    @Test func limitToLastByValueWithBounds() throws {
        let tree = SyncTree()
        let q = try QuerySpec(orderBy: .value).startAt(.number(2)).endBefore(.number(9)).limitToLast(2)
        tree.addListener(at: "l", query: q, registration: RegistrationID(1))
        let events = tree.applyServerOverwrite(Self.node(#"{"a":1,"b":2,"c":5,"d":8,"e":9,"f":"s"}"#), at: "l")
        #expect(
            Self.summary(events) == ["l child_added c prev=nil", "l child_added d prev=c", #"l value {"c":5,"d":8}"#])
        let window = try #require(tree.eventCache(at: "l", query: q))
        #expect(window.complete && window.window.keys == ["c", "d"])
    }

    // MARK: - Writes, acks and reverts

    @Test func revertRestoresServerData() {
        let tree = SyncTree()
        tree.addListener(at: "r", query: .default, registration: RegistrationID(1))
        _ = tree.applyServerOverwrite(Self.node(#"{"a":1,"b":2}"#), at: "r")
        var events = tree.applyUserOverwrite(.number(10), at: "r/a", writeID: 1)
        #expect(Self.summary(events) == ["r child_changed a prev=nil", #"r value {"a":10,"b":2}"#])
        // Server data under a pending write is shadowed: no events.
        #expect(tree.applyServerOverwrite(.number(3), at: "r/a").isEmpty)
        events = tree.ackUserWrite(1, revert: true)
        #expect(Self.summary(events) == ["r child_changed a prev=nil", #"r value {"a":3,"b":2}"#])
    }

    @Test func ackWithMatchingServerDataRaisesNothing() {
        let tree = SyncTree()
        tree.addListener(at: "r", query: .default, registration: RegistrationID(1))
        _ = tree.applyServerOverwrite(Self.node(#"{"a":1}"#), at: "r")
        _ = tree.applyUserMerge(
            [ChildUpdate(path: "b", node: .number(2)), ChildUpdate(path: "c/d", node: .bool(true))], at: "r", writeID: 7
        )
        _ = tree.applyServerMerge(
            [ChildUpdate(path: "b", node: .number(2)), ChildUpdate(path: "c", node: Self.node(#"{"d":true}"#))], at: "r"
        )
        #expect(tree.ackUserWrite(7, revert: false).isEmpty)
        #expect(tree.ackUserWrite(7, revert: false).isEmpty)  // unknown id now
        #expect(tree.eventCache(at: "r", query: .default)?.window.node == Self.node(#"{"a":1,"b":2,"c":{"d":true}}"#))
    }

    @Test func hiddenWritesRaiseNothing() {
        let tree = SyncTree()
        tree.addListener(at: "h", query: .default, registration: RegistrationID(1))
        _ = tree.applyServerOverwrite(.number(1), at: "h")
        #expect(tree.applyUserOverwrite(.number(2), at: "h", writeID: 1, visible: false).isEmpty)
        #expect(tree.eventCache(at: "h", query: .default)?.window.node == .number(1))
        #expect(tree.ackUserWrite(1, revert: false).isEmpty)
    }

    // MARK: - Tags

    @Test func tagsPerFilteredView() throws {
        let tree = SyncTree()
        let q1 = try QuerySpec(orderBy: .key).limitToFirst(1)
        let q2 = try QuerySpec(orderBy: .key).limitToLast(1)
        tree.addListener(at: "t", query: QuerySpec(orderBy: .value), registration: RegistrationID(1))
        tree.addListener(at: "t", query: q1, registration: RegistrationID(2))
        tree.addListener(at: "t", query: q2, registration: RegistrationID(3))
        tree.addListener(at: "t", query: q2, registration: RegistrationID(4))  // same view, same tag
        #expect(tree.tag(at: "t", query: QuerySpec(orderBy: .value)) == nil)
        #expect(tree.tag(at: "t", query: q1) == 1)
        #expect(tree.tag(at: "t", query: q2) == 2)
        #expect(tree.viewCount == 3)
        // Tagged data goes to its view only.
        let events = tree.applyTaggedServerOverwrite(Self.node(#"{"z":1}"#), at: "t", tag: 2)
        #expect(Set(events.map(\.registration)) == [RegistrationID(3), RegistrationID(4)])
        #expect(tree.applyTaggedServerOverwrite(.number(1), at: "t", tag: 99).isEmpty)
        // A view going away releases its tag; a new view gets the next number.
        tree.removeListener(at: "t", query: q1, registration: RegistrationID(2))
        #expect(tree.tag(at: "t", query: q1) == nil)
        tree.addListener(at: "t", query: q1, registration: RegistrationID(2))
        #expect(tree.tag(at: "t", query: q1) == 3)
        // Removing by location (default query) removes the registration from every view there.
        tree.removeListener(at: "t", query: .default, registration: RegistrationID(3))
        #expect(tree.viewCount == 3)
        tree.removeListener(at: "t", query: .default, registration: RegistrationID(4))
        #expect(tree.viewCount == 2 && tree.tag(at: "t", query: q2) == nil)
        tree.removeListener(at: "t", query: .default, registration: nil)
        #expect(tree.viewCount == 0)
    }

    // MARK: - Server cache source

    struct FixedSource: ServerCacheSource {
        let node: Node
        let complete: Bool
        func serverCache(at path: Path, query: QuerySpec) -> (node: Node, complete: Bool)? { (node, complete) }
    }

    @Test func serverCacheSourceSeedsNewViews() {
        let complete = SyncTree(source: FixedSource(node: Self.node(#"{"a":1,"b":2}"#), complete: true))
        let events = complete.addListener(at: "s", query: .default, registration: RegistrationID(1))
        #expect(
            Self.summary(events) == ["s child_added a prev=nil", "s child_added b prev=a", #"s value {"a":1,"b":2}"#])
        let partial = SyncTree(source: FixedSource(node: Self.node(#"{"a":1}"#), complete: false))
        #expect(
            Self.summary(partial.addListener(at: "s", query: .default, registration: RegistrationID(1))) == [
                "s child_added a prev=nil"
            ])
    }

    // MARK: - Randomized: event caches and event streams against a model

    /// Applies random untagged server overwrites and merges, user writes, acks and reverts to
    /// views of several queries at one location, and checks after every step that each view's
    /// event cache is the query applied to the model's local data (server data with pending
    /// writes), that replaying each view's events on a replica reproduces it, and that the
    /// order index stays consistent.
    @Test(arguments: Array(UInt64(1)...16))
    func randomOperationsMatchModel(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let keys: [ChildKey] = ["a", "b", "c", "d", "e", "1", "2", "10"]
        let queries: [QuerySpec] = [
            .default,
            QuerySpec(orderBy: .value),
            QuerySpec(orderBy: .child("s")),
            try QuerySpec(orderBy: .priority).limitToFirst(3),
            try QuerySpec(orderBy: .child("s")).limitToLast(2),
            try QuerySpec(orderBy: .value).startAt(.number(2)).endAt(.number(6)),
            try QuerySpec(orderBy: .key).startAfter(.string("1")).limitToFirst(3),
        ]
        func randomChild() -> Node {
            var n: Node
            switch rng.int(0..<4) {
            case 0: n = .number(Double(rng.int(0...8)))
            case 1: n = Node(children: [(key: "s", value: .number(Double(rng.int(0...5))))])
            case 2: n = .string(rng.pick(["x", "y"]))
            default: n = .empty
            }
            if !n.isEmpty && rng.chance(0.3) {
                n = n.withPriority(rng.chance(0.5) ? .number(Double(rng.int(0...3))) : .string("p"))
            }
            return n
        }
        let tree = SyncTree()
        // The default view makes the location complete after the first server overwrite, so
        // every query reads complete data.
        for (i, q) in queries.enumerated() { tree.addListener(at: "x", query: q, registration: RegistrationID(i)) }
        var server = Node.empty
        var log: [String] = []
        /// Pending writes, relative to `x`: each as the updates it makes.
        var pending: [(id: Int64, updates: [ChildUpdate])] = []
        func applying(_ updates: [ChildUpdate], to node: Node) -> Node {
            updates.reduce(node) { $0.updating($1.path, with: $1.node) }
        }
        var nextWrite: Int64 = 0
        var replicas = Array(repeating: [ChildKey: Node](), count: queries.count)
        var values = Array(repeating: Node?.none, count: queries.count)
        _ = tree.applyServerOverwrite(.empty, at: "x")
        for step in 0..<300 {
            var events: [ViewEvent]
            let before = pending.reduce(server) { applying($1.updates, to: $0) }
            log.append("before \(before)")
            switch rng.int(0..<9) {
            case 6, 7:
                // A deep write (server or user) or a priority write below a child.
                let k = rng.pick(keys)
                let deep: Path = rng.chance(0.7) ? Path(keys: [k, "s"]) : Path(keys: [k, ".priority"])
                let value: Node =
                    deep.isPriority
                    ? (rng.chance(0.7) ? .number(Double(rng.int(0...3))) : .empty)
                    : (rng.chance(0.8) ? .number(Double(rng.int(0...5))) : .empty)
                if rng.chance(0.5) {
                    server = server.updating(deep, with: value)
                    log.append("server deep \(deep) \(value)")
                    events = tree.applyServerOverwrite(value, at: Path(keys: ["x"]).appending(deep))
                } else {
                    // Firebase's write overlay keeps the last write per path and applies a
                    // `.priority` write after its siblings, so it differs from applying writes
                    // one by one when a null deep write follows one that turned a leaf into an
                    // object, or when a priority write precedes the write creating its node.
                    // Those are Firebase's semantics; the model here is sequential, so the
                    // user's deep writes are non-null values below `s` only.
                    let deep = Path(keys: [k, "s"])
                    let value = Node.number(Double(rng.int(0...5)))
                    pending.append((nextWrite, [ChildUpdate(path: deep, node: value)]))
                    log.append("user deep \(nextWrite) \(deep) \(value)")
                    events = tree.applyUserOverwrite(value, at: Path(keys: ["x"]).appending(deep), writeID: nextWrite)
                    nextWrite += 1
                }
            case 0:
                var n = Node.empty
                for k in keys where rng.chance(0.5) { n = n.updatingChild(k, randomChild()) }
                server = n
                log.append("server set \(n)")
                events = tree.applyServerOverwrite(n, at: "x")
            case 1:
                let k = rng.pick(keys)
                let c = randomChild()
                server = server.updatingChild(k, c)
                log.append("server set \(k) \(c)")
                events = tree.applyServerOverwrite(c, at: Path(keys: ["x", k]))
            case 2:
                var updates: [ChildUpdate] = []
                for k in keys where rng.chance(0.3) {
                    updates.append(ChildUpdate(path: Path(keys: [k]), node: randomChild()))
                }
                for u in updates { server = server.updating(u.path, with: u.node) }
                log.append("server merge \(updates.map { "\($0.path)=\($0.node)" })")
                events = tree.applyServerMerge(updates, at: "x")
            case 3:
                let k = rng.pick(keys)
                let c = randomChild()
                pending.append((nextWrite, [ChildUpdate(path: Path(keys: [k]), node: c)]))
                log.append("user set \(nextWrite) \(k) \(c)")
                events = tree.applyUserOverwrite(c, at: Path(keys: ["x", k]), writeID: nextWrite)
                nextWrite += 1
            case 4:
                var updates: [ChildUpdate] = []
                for k in keys where rng.chance(0.3) {
                    updates.append(ChildUpdate(path: Path(keys: [k]), node: randomChild()))
                }
                log.append("user merge \(nextWrite) \(updates.map { "\($0.path)=\($0.node)" })")
                pending.append((nextWrite, updates))
                events = tree.applyUserMerge(updates, at: "x", writeID: nextWrite)
                nextWrite += 1
            default:
                guard !pending.isEmpty else { continue }
                // The server answers writes in order (Firebase's protocol guarantee; the engine,
                // like Firebase's, assumes it).
                let write = pending.removeFirst()
                let revert = rng.chance(0.5)
                log.append("ack \(write.id) revert \(revert)")
                events = []
                if !revert {
                    // As the server does: push the write's data to the listens, then ack it.
                    server = applying(write.updates, to: server)
                    events += tree.applyServerMerge(write.updates, at: "x")
                }
                events += tree.ackUserWrite(write.id, revert: revert)
            }
            let local = pending.reduce(server) { applying($1.updates, to: $0) }
            var windows: [QueryWindow] = []
            for q in queries { windows.append(q.window(of: local)) }
            let problems = consume(events, into: &replicas, values: &values, windows: windows)
            if let problem = tree.checkInvariants() { Issue.record("seed \(seed) step \(step): \(problem)"); return }
            if !problems.isEmpty, ProcessInfo.processInfo.environment["HEARTH_VIEW_DEBUG"] != nil {
                print(log.joined(separator: "\n"))
            }
            try #require(problems.isEmpty, "seed \(seed) step \(step) \(log.suffix(3)): \(problems)\nlocal \(local)")
            for (i, q) in queries.enumerated() {
                let expected = windows[i]
                let actual = try #require(tree.eventCache(at: "x", query: q))
                #expect(actual.complete, "seed \(seed) step \(step) \(q)")
                try #require(
                    actual.window.keys == expected.keys && actual.window.node == expected.node,
                    "\(log.suffix(3)) seed \(seed) step \(step) \(q): \(actual.window.keys) \(actual.window.node) vs \(expected.keys) \(expected.node)"
                )
                try #require(
                    replicas[i].count == expected.entries.count,
                    "seed \(seed) step \(step) \(q) replica \(replicas[i].keys) vs \(expected.keys)")
                for b in expected.entries {
                    try #require(replicas[i][b.key] == b.value, "seed \(seed) step \(step) \(q) replica \(b.key)")
                }
                if let v = values[i] { try #require(v == expected.node, "seed \(seed) step \(step) \(q) value") }
            }
        }
    }

    /// Replays events on per-query replicas (children by key) and checks each previous-child
    /// key against the window after the operation (Firebase computes them against the new
    /// event cache; applying a multi-child operation's events one by one to an ordered list
    /// is not guaranteed to reproduce the order, so the order is checked this way).
    private func consume(
        _ events: [ViewEvent], into replicas: inout [[ChildKey: Node]], values: inout [Node?], windows: [QueryWindow]
    ) -> [String] {
        var problems: [String] = []
        for e in events {
            let i = e.registration.rawValue
            guard let key = e.childKey else {
                values[i] = e.node
                continue
            }
            if e.kind != .childRemoved {
                let keys = windows[i].keys
                let expectedPrevious = keys.firstIndex(of: key).flatMap { $0 > 0 ? keys[$0 - 1] : nil }
                if keys.firstIndex(of: key) == nil { problems.append("\(e): not in the window \(keys)") }
                if e.previousChildKey != expectedPrevious {
                    problems.append("\(e): previous should be \(expectedPrevious?.string ?? "nil")")
                }
            }
            switch e.kind {
            case .childAdded:
                if replicas[i][key] != nil { problems.append("\(e): added twice") }
                replicas[i][key] = e.node
            case .childRemoved:
                if replicas[i].removeValue(forKey: key) == nil { problems.append("\(e): removing unknown") }
            case .childMoved:
                if replicas[i][key] == nil { problems.append("\(e): moving unknown") }
            case .childChanged:
                if replicas[i][key] == nil { problems.append("\(e): changing unknown") }
                replicas[i][key] = e.node
            case .value:
                break
            }
        }
        return problems
    }

    // MARK: - Large views

    static func bigList(_ n: Int) -> Node {
        var pairs: [(key: ChildKey, value: Node)] = []
        pairs.reserveCapacity(n)
        for i in 0..<n { pairs.append((ChildKey("k" + String(i + 1_000_000)), .number(Double(i)))) }
        return Node(children: ChildMap(sortedPairs: pairs))
    }

    @Test func oneChildUpdateUnderAHundredThousandChildren() throws {
        let tree = SyncTree()
        tree.addListener(at: "big", query: .default, registration: RegistrationID(1))
        let initial = tree.applyServerOverwrite(Self.bigList(100_000), at: "big")
        #expect(initial.count == 100_001)
        let events = tree.applyServerOverwrite(.string("changed"), at: "big/k1050000")
        try #require(events.count == 2)
        #expect(events[0].kind == .childChanged)
        #expect(events[0].childKey == "k1050000")
        #expect(events[0].previousChildKey == "k1049999")
        #expect(events[0].node == .string("changed"))
        #expect(events[1].kind == .value)
        #expect(events[1].node.childCount == 100_000)
        #expect(events[1].node.child("k1050000") == .string("changed"))
    }

    @Test func prioritiesKeepPredecessorsRightInLargeViews() throws {
        let tree = SyncTree()
        tree.addListener(at: "big", query: .default, registration: RegistrationID(1))
        _ = tree.applyServerOverwrite(Self.bigList(1_000), at: "big")
        // A priority moves a child after every unprioritized one.
        var events = tree.applyServerOverwrite(Node(.number(1), priority: .number(5)), at: "big/k1000010")
        #expect(
            Self.summary(events).prefix(2) == [
                "big child_moved k1000010 prev=k1000999", "big child_changed k1000010 prev=k1000999",
            ])
        events = tree.applyServerOverwrite(Node(.number(1), priority: .number(4)), at: "big/k1000500")
        #expect(
            Self.summary(events).prefix(2) == [
                "big child_moved k1000500 prev=k1000999", "big child_changed k1000500 prev=k1000999",
            ])
        events = tree.applyServerOverwrite(.number(1), at: "big/k1000002")
        #expect(Self.summary(events).first == "big child_changed k1000002 prev=k1000001")
        events = tree.applyServerOverwrite(.number(1), at: "big/k1000011")
        #expect(Self.summary(events).first == "big child_changed k1000011 prev=k1000009")
    }

    /// `HEARTH_VIEW_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter ViewEngineTests/benchmark`
    ///
    /// One server update of one child under a default view of n children (n = 1k, 10k, 100k),
    /// then the same with an orderByValue view beside it. Prints ns per update.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HEARTH_VIEW_BENCH"] == "1"))
    func benchmark() {
        func nanoseconds(_ d: Duration) -> Double {
            Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
        }
        let clock = ContinuousClock()
        for n in [1_000, 10_000, 100_000] {
            let tree = SyncTree()
            tree.addListener(at: "big", query: .default, registration: RegistrationID(1))
            _ = tree.applyServerOverwrite(Self.bigList(n), at: "big")
            let paths = (0..<1000).map { Path(keys: ["big", ChildKey("k" + String(1_000_000 + ($0 * 97) % n))]) }
            let rounds = 20_000
            var count = 0
            let t1 = clock.measure {
                for r in 0..<rounds {
                    count += tree.applyServerOverwrite(.number(Double(r)), at: paths[r % paths.count]).count
                }
            }
            tree.addListener(at: "big", query: QuerySpec(orderBy: .value), registration: RegistrationID(2))
            let t2 = clock.measure {
                for r in 0..<rounds {
                    count += tree.applyServerOverwrite(.number(Double(-r)), at: paths[r % paths.count]).count
                }
            }
            print(
                "view bench: n=\(n): default view \(Int(nanoseconds(t1) / Double(rounds))) ns/update; with an orderByValue view too \(Int(nanoseconds(t2) / Double(rounds))) ns/update (\(count) events)"
            )
        }
    }
}
