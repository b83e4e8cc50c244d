import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// Random event sequences over a small world (few keys, shallow paths, small ids) so that
/// paths overlap, ids collide and queries get replaced — where reducers go wrong.
enum SmallWorld {
    static let keyPool = ["a", "b", "c", "1", "01", "\u{E9}", "e\u{301}"]

    static func key(_ rng: inout SeededRandom) -> ChildKey { ChildKey(rng.pick(keyPool)) }

    static func path(_ rng: inout SeededRandom, maxDepth: Int = 3, priority: Bool = false) -> Path {
        var p = Gen.path(&rng, maxDepth: maxDepth, keys: key)
        if priority, !p.isRoot, rng.chance(0.05) { p = p.child(".priority") }
        return p
    }

    static func node(_ rng: inout SeededRandom, serverValues: Bool = false) -> Node {
        Gen.node(&rng, depth: 3, keys: key, serverValues: serverValues, emptyChance: 0.15, maxChildren: 3)
    }

    static func children(_ rng: inout SeededRandom, serverValues: Bool = false) -> [ChildUpdate] {
        (0..<rng.int(0...3)).map { _ in
            var p = path(&rng, maxDepth: 2)
            if p.isRoot { p = Path(keys: [key(&rng)]) }
            return ChildUpdate(path: p, node: node(&rng, serverValues: serverValues))
        }
    }

    static let queries: [QuerySpec] = [
        .default,
        QuerySpec(orderBy: .value),  // loads all data: normalized to the default query
        try! QuerySpec(orderBy: .key).limitToFirst(2),
        try! QuerySpec(orderBy: .child("b")).startAt(.number(1)),
    ]

    static func location(_ rng: inout SeededRandom) -> QueryLocation {
        QueryLocation(path: path(&rng, maxDepth: 2), query: rng.pick(queries))
    }

    static func id(_ rng: inout SeededRandom) -> Int64 { Int64(rng.int(1...12)) }

    static func time(_ rng: inout SeededRandom) -> Int64 { Int64(rng.int(0...1000)) }

    static func trackedQuery(_ rng: inout SeededRandom) -> TrackedQuery {
        TrackedQuery(
            id: id(&rng), location: location(&rng), complete: rng.chance(0.5), active: rng.chance(0.5),
            lastUse: time(&rng), keys: rng.chance(0.5) ? [key(&rng)] : nil)
    }

    /// A random event, weighted towards server writes and tracked queries.
    static func event(_ rng: inout SeededRandom, state: StoreState) -> StoreEvent {
        switch rng.int(0..<28) {
        case 0...3: return .serverOverwrite(path: path(&rng, priority: true), node: node(&rng), at: time(&rng))
        case 4, 5: return .serverMerge(path: path(&rng), children: children(&rng), at: time(&rng))
        case 6:
            let op: PendingWrite.Operation =
                rng.chance(0.5) ? .set(node(&rng, serverValues: true)) : .update(children(&rng, serverValues: true))
            // Mostly the next id, sometimes an old one (replay of an out-of-order log).
            let wid = rng.chance(0.8) ? state.lastWriteID + 1 : id(&rng)
            return .writeSaved(PendingWrite(id: wid, path: path(&rng), operation: op))
        case 7: return rng.chance(0.5) ? .writeAcked(id: id(&rng)) : .writeReverted(id: id(&rng))
        case 8...10: return .trackedQuerySaved(trackedQuery(&rng))
        case 11, 12:
            // Usually an existing query.
            if rng.chance(0.8), let q = state.trackedQueries.keys.sorted().randomElement(using: &rng) {
                return .trackedQueryRemoved(id: q)
            }
            return .trackedQueryRemoved(id: id(&rng))
        case 13: return .pinChanged(location(&rng), on: rng.chance(0.6))
        case 14:
            return rng.chance(0.6)
                ? .authSaved(AuthToken(token: Gen.string(&rng), expiresAt: time(&rng))) : .authCleared
        case 15:
            return .transactionSaved(
                QueuedTransaction(
                    id: id(&rng), path: path(&rng), functionName: "f", argument: node(&rng),
                    localResult: node(&rng), retryCount: rng.int(0...3),
                    status: rng.pick(QueuedTransaction.Status.allCases)))
        case 16: return .transactionRemoved(id: id(&rng))
        case 17, 18:
            let action: OnDisconnectOperation.Action
            switch rng.int(0..<4) {
            case 0: action = .set(node(&rng))
            case 1: action = .update(children(&rng))
            case 2: action = .remove
            default: action = .cancel
            }
            return .onDisconnectSaved(
                OnDisconnectOperation(id: id(&rng), path: path(&rng), action: action, acknowledged: rng.chance(0.3)))
        case 19: return .onDisconnectAcked(id: id(&rng))
        case 20: return rng.chance(0.5) ? .onDisconnectRemoved(id: id(&rng)) : .serverTimeOffset(ms: Gen.double(&rng))
        case 21: return .sessionStarted(at: time(&rng))
        case 22:
            // Usually an existing query.
            let q =
                rng.chance(0.8) ? (state.trackedQueries.keys.sorted().randomElement(using: &rng) ?? id(&rng)) : id(&rng)
            return .trackedQueryKeysChanged(
                id: q, added: (0..<rng.int(0...2)).map { _ in key(&rng) },
                removed: (0..<rng.int(0...2)).map { _ in key(&rng) })
        case 25: return .writerWatermark(writer: rng.pick(["a", "b", "c"]), id: id(&rng), at: time(&rng))
        case 26: return .writerWatermarksRemoved(writers: (0..<rng.int(0...2)).map { _ in rng.pick(["a", "b", "c"]) })
        case 27:
            // Usually a run from the next write on, as a client begins one; sometimes format
            // 3's form or a run from an arbitrary id.
            let first: Int64? =
                rng.chance(0.7) ? state.lastWriteID + 1 : rng.chance(0.5) ? nil : Int64(rng.int(0...20))
            return .writerIdentity(writer: rng.pick(["me", "you", "them"]), firstWriteID: first)
        default:
            let pruned = (0..<rng.int(0...2)).map { _ in path(&rng, maxDepth: 2) }
            var kept: [Path] = []
            for p in pruned where rng.chance(0.6) { kept.append(p.appending(path(&rng, maxDepth: 2))) }
            let ids = (0..<rng.int(0...2)).map { _ in id(&rng) }
            return .cachePruned(PruneResult(prunedPaths: pruned, keptPaths: kept, removedQueryIDs: ids))
        }
    }
}

@Suite struct ReducerModelTests {
    @Test func randomSequencesMatchTheNaiveModel() {
        for seed: UInt64 in 1...150 {
            var rng = SeededRandom(seed: seed)
            var state = StoreState()
            var model = NaiveState()
            for step in 0..<60 {
                let event = SmallWorld.event(&rng, state: state)
                state.apply(event)
                model.apply(event)
                let diffs = model.differences(from: state)
                if !diffs.isEmpty {
                    Issue.record("seed \(seed) step \(step) after \(event):\n\(diffs.joined(separator: "\n"))")
                    break
                }
                if let e = state.checkInvariants() {
                    Issue.record("seed \(seed) step \(step) after \(event): invariant: \(e)")
                    break
                }
                // Untracked entries never sit at or below a tracked query's path.
                for (p, _) in state.untrackedEntries
                where state.trackedQueries.values.contains(where: { $0.path.contains(p) }) {
                    Issue.record("seed \(seed) step \(step): untracked entry \(p) covered by a tracked query")
                }
            }
        }
    }

    @Test func replayingAnEncodedLogGivesTheSameState() throws {
        // Applying events one by one and applying the decoded batch yield equal states.
        for seed: UInt64 in 1...40 {
            var rng = SeededRandom(seed: seed)
            var live = StoreState()
            var events: [StoreEvent] = []
            for _ in 0..<40 {
                let e = SmallWorld.event(&rng, state: live)
                live.apply(e)
                events.append(e)
            }
            var replayed = StoreState()
            replayed.apply(try EventCodec.decode(EventCodec.encode(events)))
            #expect(replayed == live, "seed \(seed)")
        }
    }

    // MARK: Directed cases

    @Test func serverMergeWritesEachChildAndDeletesWithEmpty() {
        var s = StoreState()
        s.apply(
            .serverOverwrite(
                path: "a", node: Node(children: [("x", .number(1)), ("y", .number(2))], priority: .string("p")), at: 1))
        s.apply(
            .serverMerge(
                path: "a",
                children: [ChildUpdate(path: "y", node: .empty), ChildUpdate(path: "z/w", node: .bool(true))], at: 2))
        #expect(s.serverCache.exportJSONString() == #"{"a":{"x":1,"z":{"w":true},".priority":"p"}}"#)
        // Deleting the last children removes the node and its priority.
        s.apply(
            .serverMerge(
                path: "a", children: [ChildUpdate(path: "x", node: .empty), ChildUpdate(path: "z", node: .empty)], at: 3
            ))
        #expect(s.serverCache.isEmpty)
    }

    @Test func writeAckAndRevertRemoveByIdAndOutOfOrderSavesStaySorted() {
        var s = StoreState()
        for id: Int64 in [1, 2, 5] {
            s.apply(.writeSaved(PendingWrite(id: id, path: "a", operation: .set(.number(Double(id))))))
        }
        s.apply(.writeSaved(PendingWrite(id: 3, path: "b", operation: .set(.bool(true)))))
        s.apply(.writeSaved(PendingWrite(id: 2, path: "c", operation: .set(.bool(false)))))  // replaces id 2
        #expect(s.pendingWrites.map(\.id) == [1, 2, 3, 5])
        #expect(s.pendingWrites[1].path == "c")
        #expect(s.lastWriteID == 5)
        s.apply(.writeAcked(id: 2))
        s.apply(.writeReverted(id: 5))
        s.apply(.writeAcked(id: 99))  // unknown: no change
        #expect(s.pendingWrites.map(\.id) == [1, 3])
        #expect(s.lastWriteID == 5)
        #expect(s.checkInvariants() == nil)
    }

    @Test func sessionStartDeactivatesActiveQueriesOnly() {
        var s = StoreState()
        let l1 = QueryLocation(path: "a", query: .default), l2 = QueryLocation(path: "b", query: .default)
        let l3 = QueryLocation(path: "c", query: .default)
        s.apply(.trackedQuerySaved(TrackedQuery(id: 1, location: l1, complete: true, active: true, lastUse: 100)))
        s.apply(.trackedQuerySaved(TrackedQuery(id: 2, location: l2, complete: true, active: true, lastUse: 900)))
        s.apply(.trackedQuerySaved(TrackedQuery(id: 3, location: l3, complete: true, active: false, lastUse: 10)))
        s.apply(.sessionStarted(at: 500))
        #expect(s.trackedQueries[1]?.active == false && s.trackedQueries[1]?.lastUse == 500)
        #expect(s.trackedQueries[2]?.active == false && s.trackedQueries[2]?.lastUse == 900)  // max, never back in time
        #expect(s.trackedQueries[3]?.lastUse == 10)  // inactive ones untouched
    }

    @Test func ackedCancelRemovesEarlierOpsAtOrBelowItsPath() {
        var s = StoreState()
        let ops: [(Int64, Path, OnDisconnectOperation.Action)] = [
            (1, "a", .set(.number(1))), (2, "a/b", .remove), (3, "x", .remove), (4, "a", .cancel),
            (5, "a/c", .set(.bool(true))), (6, "", .update([ChildUpdate(path: "a", node: .empty)])),
        ]
        for (id, p, action) in ops {
            s.apply(.onDisconnectSaved(OnDisconnectOperation(id: id, path: p, action: action, acknowledged: true)))
        }
        s.apply(.onDisconnectAcked(id: 4))
        // 1 and 2 (earlier, at/below a) and the cancel itself go; 3 (elsewhere), 5 (later)
        // and 6 (above) stay.
        #expect(s.onDisconnect.keys.sorted() == [3, 5, 6])
        s.apply(.onDisconnectSaved(OnDisconnectOperation(id: 7, path: "", action: .cancel)))
        #expect(s.onDisconnect[7]?.acknowledged == false)
        s.apply(.onDisconnectAcked(id: 7))
        #expect(s.onDisconnect.isEmpty)
        #expect(s.lastOnDisconnectID == 7)
    }

    @Test func ackOfNonCancelMarksAcknowledged() {
        var s = StoreState()
        s.apply(.onDisconnectSaved(OnDisconnectOperation(id: 1, path: "a", action: .remove)))
        s.apply(.onDisconnectAcked(id: 1))
        s.apply(.onDisconnectAcked(id: 2))
        #expect(s.onDisconnect[1]?.acknowledged == true)
        #expect(s.onDisconnect.count == 1)
    }

    @Test func cachePruneKeepsSubpathsAndRemovesQueries() throws {
        var s = StoreState()
        let tree = try Node(jsonText: #"{"a":{"b":{"c":1,"d":2},"e":3},"f":4}"#)
        s.apply(.serverOverwrite(path: "", node: tree, at: 1))
        let loc = QueryLocation(path: "a/b/c", query: .default)
        s.apply(.trackedQuerySaved(TrackedQuery(id: 1, location: loc, complete: true, active: false, lastUse: 1)))
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 2, location: QueryLocation(path: "f", query: .default), complete: true, active: false,
                    lastUse: 1)))
        s.apply(.cachePruned(PruneResult(prunedPaths: ["a", "f"], keptPaths: ["a/b/c"], removedQueryIDs: [2])))
        #expect(s.serverCache.exportJSONString() == #"{"a":{"b":{"c":1}}}"#)
        #expect(s.trackedQueries.keys.sorted() == [1])
        #expect(s.trackedByLocation[QueryLocation(path: "f", query: .default)] == nil)
        // A removed query does not come back as untracked data.
        #expect(s.untrackedEntries.map(\.path).contains("f") == false)
        #expect(s.checkInvariants() == nil)
    }

    @Test func trackedQueryUpsertReplacesByIdAndByLocation() throws {
        var s = StoreState()
        let q = try QuerySpec(orderBy: .key).limitToFirst(1)
        let la = QueryLocation(path: "a", query: q), lb = QueryLocation(path: "b", query: .default)
        s.apply(.trackedQuerySaved(TrackedQuery(id: 1, location: la, complete: false, active: true, lastUse: 1)))
        s.apply(.trackedQuerySaved(TrackedQuery(id: 1, location: la, complete: true, active: true, lastUse: 2)))
        #expect(s.trackedQueries[1]?.complete == true)
        #expect(s.trackedQuery(at: la)?.keys == [])  // filtered: keys default to the empty set
        s.apply(.trackedQuerySaved(TrackedQuery(id: 2, location: la, complete: false, active: false, lastUse: 3)))
        #expect(s.trackedQueries.keys.sorted() == [2])  // same location: id 1 replaced
        s.apply(.trackedQuerySaved(TrackedQuery(id: 2, location: lb, complete: false, active: false, lastUse: 3)))
        #expect(s.trackedQuery(at: la) == nil)  // moved
        #expect(s.trackedQuery(at: lb)?.id == 2)
        #expect(s.trackedQuery(at: lb)?.keys == nil)
        #expect(s.lastQueryID == 2)
        #expect(s.checkInvariants() == nil)
        // orderByValue() with no bounds is the default query at that location.
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 3, location: QueryLocation(path: "b", query: QuerySpec(orderBy: .value)), complete: true,
                    active: false, lastUse: 4)))
        #expect(s.trackedQueries.keys.sorted() == [3])
    }
}
