// The FuzzState check: event batches decoded from the input, with checkpoints and reopens at chosen
// points, give the same state through checkpoint + replay as applied directly; and its seeds.
// Fuzz/Sources/FuzzChecks is the one source of these checks: Tests/HearthTests/FuzzChecks/ holds a
// symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails when a
// copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting

extension FuzzChecks {
    // MARK: - 3. State

    /// Ids handed out by the event generator: mostly fresh (as the store assigns them), sometimes reused.
    struct IDs {
        var write: Int64 = 0, query: Int64 = 0, transaction: Int64 = 0, onDisconnect: Int64 = 0
        static func next(_ counter: inout Int64, _ s: inout Source) -> Int64 {
            if counter > 0, s.below(4) == 0 { return 1 + Int64(s.below(Int(min(counter, 200)))) }
            counter += 1
            return counter
        }
        static func existing(_ counter: Int64, _ s: inout Source) -> Int64 { 1 + Int64(s.below(Int(min(counter + 1, 200)))) }
    }

    /// Any event, structure-aware: every byte string maps to valid events.
    static func event(_ s: inout Source, ids: inout IDs) -> StoreEvent {
        let t = 1_700_000_000_000 + Int64(s.u8()) - 20
        switch s.below(19) {
        case 0: return .serverOverwrite(path: path(&s), node: node(&s), at: t)
        case 1: return .serverMerge(path: path(&s), children: children(&s), at: t)
        case 2:
            let id = IDs.next(&ids.write, &s)
            return .writeSaved(PendingWrite(id: id, path: path(&s), operation: s.bool() ? .set(node(&s)) : .update(children(&s))))
        case 3: return .writeAcked(id: IDs.existing(ids.write, &s))
        case 4: return .writeReverted(id: IDs.existing(ids.write, &s))
        case 5:
            let id = s.bool() && ids.query > 0 ? IDs.existing(ids.query, &s) : IDs.next(&ids.query, &s)
            let keys: Set<ChildKey>? = s.bool() ? Set((0..<s.below(4)).map { _ in key(&s) }) : nil
            return .trackedQuerySaved(TrackedQuery(id: id, location: location(&s), complete: s.bool(), active: s.bool(), lastUse: t, keys: keys))
        case 6: return .trackedQueryRemoved(id: IDs.existing(ids.query, &s))
        case 7: return .pinChanged(location(&s), on: s.bool())
        case 8: return .authSaved(AuthToken(token: s.pick(["", "tok", "é"]), expiresAt: t))
        case 9: return .authCleared
        case 10:
            let id = s.bool() && ids.transaction > 0 ? IDs.existing(ids.transaction, &s) : IDs.next(&ids.transaction, &s)
            return .transactionSaved(QueuedTransaction(id: id, path: path(&s), functionName: s.pick(["f", "", "inc"]), argument: node(&s),
                                                       localResult: node(&s), retryCount: s.below(5), status: s.pick(QueuedTransaction.Status.allCases)))
        case 11: return .transactionRemoved(id: IDs.existing(ids.transaction, &s))
        case 12:
            let id = IDs.next(&ids.onDisconnect, &s)
            let action: OnDisconnectOperation.Action
            switch s.below(4) {
            case 0: action = .set(node(&s))
            case 1: action = .update(children(&s))
            case 2: action = .remove
            default: action = .cancel
            }
            return .onDisconnectSaved(OnDisconnectOperation(id: id, path: path(&s), action: action, acknowledged: s.bool()))
        case 13: return .onDisconnectAcked(id: IDs.existing(ids.onDisconnect, &s))
        case 14: return .onDisconnectRemoved(id: IDs.existing(ids.onDisconnect, &s))
        case 15: return .serverTimeOffset(ms: s.pick(numbers))
        case 16: return .sessionStarted(at: t)
        case 17:
            return .trackedQueryKeysChanged(id: IDs.existing(ids.query, &s), added: (0..<s.below(3)).map { _ in key(&s) },
                                            removed: (0..<s.below(3)).map { _ in key(&s) })
        default:
            return .cachePruned(PruneResult(prunedPaths: (0..<s.below(3)).map { _ in path(&s) },
                                            keptPaths: (0..<s.below(3)).map { _ in path(&s) },
                                            removedQueryIDs: (0..<s.below(3)).map { _ in IDs.existing(ids.query, &s) }))
        }
    }

    static func eventBatch(_ s: inout Source, ids: inout IDs) -> [StoreEvent] {
        (0...s.below(3)).map { _ in event(&s, ids: &ids) }
    }

    enum StateStep {
        case batch([StoreEvent])
        case checkpoint
        case reopen
    }

    /// Random event sequences, written to the log in batches with checkpoints and reopens at
    /// input-chosen points: checkpoint + replay (eager and lazy) must equal applying them directly,
    /// and every batch survives the event codec's round trip.
    public static func state(_ input: [UInt8]) {
        var s = Source(input)
        var ids = IDs()
        var steps: [StateStep] = []
        while !s.isAtEnd, steps.count < 48 {
            switch s.below(10) {
            case 0: steps.append(.checkpoint)
            case 1: steps.append(.reopen)
            default: steps.append(.batch(eventBatch(&s, ids: &ids)))
            }
        }
        let fs = SimulatedFileSystem(seed: 3)
        let clock = Clock()
        var direct = StoreState()
        var log: Log?
        func openLog() -> Log {
            do { return try Log.open(directory: directory, fileSystem: fs, options: logOptions()) } catch {
                fatalError("FUZZ FINDING: Log.open failed: \(error)")
            }
        }
        /// Opens the store (mirroring its sessionStarted) and compares its state with the direct one.
        func openStore(lazy: Bool) -> Store {
            let store: Store
            do { store = try Store.open(directory: directory, options: storeOptions(fs, clock, lazy: lazy)) } catch {
                fatalError("FUZZ FINDING: Store.open failed: \(error)")
            }
            if direct.trackedQueries.values.contains(where: \.active) { direct.apply(.sessionStarted(at: clock.value)) }
            if lazy {
                for p in ["a", "b/c", "1", "a/07/ü"] as [Path] {
                    let v: Node
                    do { v = try store.serverValue(at: p) } catch { fatalError("FUZZ FINDING: lazy read failed: \(error)") }
                    check(v == direct.serverCache.child(at: p), "lazy read at \(p): \(v) vs \(direct.serverCache.child(at: p))")
                }
            }
            let state: StoreState
            do { state = try store.state() } catch { fatalError("FUZZ FINDING: state() failed: \(error)") }
            check(state == direct, "store state (lazy \(lazy)) differs from direct application: \(diff(direct, state))")
            check(state.checkInvariants() == nil, "state breaks an invariant: \(state.checkInvariants() ?? "")")
            return store
        }
        do {
            try fs.createDirectory(directory)
            try Store.open(directory: directory, options: storeOptions(fs, clock)).close()
        } catch { fatalError("\(error)") }
        for step in steps {
            clock.advance(1)
            switch step {
            case let .batch(events):
                checkRoundTrip(events)
                direct.apply(events)
                if log == nil { log = openLog() }
                do { _ = try log!.append(EventCodec.encode(events), type: EventCodec.recordType, durability: .buffered) } catch {
                    fatalError("FUZZ FINDING: append failed: \(error)")
                }
            case .checkpoint:
                try? log?.close()
                log = nil
                let store = openStore(lazy: false)
                do { try store.compact(); try store.close() } catch { fatalError("FUZZ FINDING: compact failed: \(error)") }
            case .reopen:
                try? log?.close()
                log = nil
                let store = openStore(lazy: clock.value % 2 == 0)
                do { try store.close() } catch { fatalError("FUZZ FINDING: close failed: \(error)") }
            }
        }
        try? log?.close()
        log = nil
        for lazy in [true, false] {
            let store = openStore(lazy: lazy)
            do { try store.close() } catch { fatalError("FUZZ FINDING: close failed: \(error)") }
        }
    }

    static func stateSeeds() -> [(String, [UInt8])] {
        var rng = SeededRandom(seed: 7)
        return (0..<16).map { i in
            let n = 16 + Int(rng.next() % 300)
            return ("events-\(i)", (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }
}
