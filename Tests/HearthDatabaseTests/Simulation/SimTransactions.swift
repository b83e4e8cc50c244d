import Hearth
import HearthModel
@testable import HearthDatabase
@_spi(HearthInternals) import HearthWire

/// A named transaction the workload runs, as the runtime keeps it while it is in flight.
struct SimTransaction: Sendable {
    /// The store's id of the persisted transaction.
    let storeID: Int64
    let name: String
    let path: Path
    let argument: Node
    /// The value listener that keeps the location fresh while it runs (Firebase's, and the
    /// runtime's): its store listener.
    var listener: ListenerToken?
}

/// What the checks know of one transaction.
struct SimTransactionRecord {
    let client: Int
    let storeID: Int64
    let name: String
    let path: Path
    let argument: Node
    /// `nil` until it ends; then whether it committed and why not.
    var outcome: (committed: Bool, error: DatabaseError?)?
}

/// The named update functions (what `registerTransactionFunction` registers): an increment
/// of a counter and an append to a list, under `/t`, where no other write goes — so their
/// effect can be counted exactly.
enum SimTransactions {
    static let counters: [Path] = ["t/n0", "t/n1"]
    static let list: Path = "t/list"

    /// The function `name` on `current` with `argument`.
    static func apply(_ name: String, current: Node, argument: Node) -> Node {
        switch name {
        case "increment":
            return SimWorkload.int(count(current) + 1)
        default:  // "append"
            let n = current.isLeaf ? 0 : current.childCount
            return (current.isLeaf ? Node.empty : current).updatingChild(
                ChildKey("i\(String(format: "%04d", n))"), argument)
        }
    }

    /// The count a counter holds.
    static func count(_ node: Node) -> Int {
        node.leafValue?.exactInteger.map { Int($0) } ?? 0
    }
}

extension Simulation {
    /// The runtime's `runTransaction(named:)` (`Database.run`): the function runs on the local
    /// value (pending writes included), its result is saved as a write — with the persisted
    /// transaction, in the same commit — and handed to the core as a compare-and-set against
    /// the hash of the value it ran on; the transaction queue holds it under that write.
    func runTransaction(_ i: Int, _ tx: SimTransaction, retries: Int, new: Bool) {
        let client = clients[i]
        var tx = tx
        if tx.listener == nil {
            // The value listener while it runs.
            let location = QueryLocation(path: tx.path, query: .default)
            do {
                tx.listener = try client.store.addListener(at: tx.path) { _ in }
            } catch {
                fail("c\(i) transaction listener: \(error)")
            }
            apply(i, client.core.listen(location, now: now))
        }
        let current: Node
        do { current = try client.store.value(at: tx.path) } catch {
            fail("c\(i) transaction read: \(error)")
            return
        }
        let result = SimTransactions.apply(tx.name, current: current, argument: tx.argument)
        var writeID: Int64 = 0
        var storeID = tx.storeID
        do {
            try client.store.commit { (b: inout StoreBatch) throws(StoreError) in
                writeID = try b.saveWrite(.set(result), at: tx.path, writer: client.writerID)
                if new {
                    storeID = try b.enqueueTransaction(
                        at: tx.path, functionName: tx.name, argument: tx.argument, localResult: result
                    ).id
                } else if b.transaction(storeID) != nil {
                    try b.updateTransaction(storeID, localResult: result, retryCount: retries, status: .queued)
                }
            }
        } catch {
            fail("c\(i) could not save a transaction: \(error)")
            return
        }
        tx = SimTransaction(
            storeID: storeID, name: tx.name, path: tx.path, argument: tx.argument, listener: tx.listener)
        let key = "c\(i)#\(storeID)"
        if new {
            if checks.transactions[key] != nil { fail("c\(i) transaction id \(storeID) reused") }
            checks.transactions[key] = SimTransactionRecord(
                client: i, storeID: storeID, name: tx.name, path: tx.path, argument: tx.argument)
            stats.transactions += 1
        }
        if writeID <= client.maxWriteID { fail("c\(i) write id \(writeID) reused (last was \(client.maxWriteID))") }
        client.maxWriteID = max(client.maxWriteID, writeID)
        client.saved[writeID] = SimWrite(client: i, id: writeID, path: tx.path, operation: .set(result))
        client.transactionWrites.insert(writeID)
        stats.transactionAttempts += 1
        note(
            "c\(i) tx\(storeID) \(tx.name) /\(tx.path.wireString) attempt \(retries + 1) w\(writeID) = \(result.plainJSONString()) on hash of \(current.plainJSONString())"
        )
        client.transactions.sent(writeID, path: tx.path, retries: retries, payload: tx)
        let condition = ClientCore.WriteCondition(hash: current.hash, transactionID: storeID)
        apply(
            i,
            client.core.write(
                PendingWrite(id: writeID, path: tx.path, operation: .set(result)), writer: client.writerID,
                condition: condition, now: now))
    }

    /// The server answered a transaction's write, or the connection dropped under it: the
    /// transaction queue decides.
    func transactionAnswered(_ i: Int, writeID: Int64, error: DatabaseError?, interrupted: Bool) {
        let client = clients[i]
        let decided =
            interrupted ? client.transactions.interrupted(writeID) : client.transactions.answered(writeID, error: error)
        guard let (entry, step) = decided else { return }
        if interrupted {
            // The core forgot the write; the store still holds it (as the runtime does).
            do {
                try client.store.commit { (b: inout StoreBatch) throws(StoreError) in
                    if b.pendingWrite(writeID) != nil { try b.revertWrite(writeID) }
                }
            } catch { fail("c\(i) reverting an interrupted transaction write: \(error)") }
        }
        switch step {
        case .committed: finishTransaction(i, entry.payload, committed: true, error: nil)
        case .runAgain: runTransaction(i, entry.payload, retries: entry.retries, new: false)
        case .aborted(let e): finishTransaction(i, entry.payload, committed: false, error: e)
        }
    }

    /// A transaction ends as `Database.finish` ends one: its record stays, decided, its
    /// listener stops, the outcome is reported (once), then acknowledged (the record leaves;
    /// synced here, so that a power cut never delivers it again).
    func finishTransaction(_ i: Int, _ tx: SimTransaction, committed: Bool, error: DatabaseError?) {
        let client = clients[i]
        let (status, reason) = Database.decidedRecord(committed: committed, error: error)
        do {
            try client.store.commit { (b: inout StoreBatch) throws(StoreError) in
                if b.transaction(tx.storeID) != nil {
                    try b.updateTransaction(tx.storeID, localResult: reason, status: status)
                }
            }
        } catch { fail("c\(i) deciding a transaction: \(error)") }
        if let token = tx.listener {
            do { try client.store.removeListener(token) } catch { fail("c\(i) removeListener: \(error)") }
            apply(i, client.core.unlisten(QueryLocation(path: tx.path, query: .default), now: now))
        }
        checks.transactionEnded(client: i, storeID: tx.storeID, committed: committed, error: error, in: self)
        acknowledgeOutcome(i, tx.storeID)
    }

    /// The app's handler ran: the decided record (a transaction's or a plain write's) leaves
    /// the store.
    func acknowledgeOutcome(_ i: Int, _ id: Int64) {
        do {
            try clients[i].store.commit { (b: inout StoreBatch) throws(StoreError) in
                if b.transaction(id)?.status.isDecided == true { try b.completeTransaction(id) }
            }
        } catch { fail("c\(i) acknowledging an outcome: \(error)") }
    }

    /// After a restart: what `Database.open` and `registerTransactionFunction` do with the
    /// transactions the last run left — those in flight end `disconnect` (outcome unknown),
    /// decided ones report their outcome (kept until then), queued ones run again.
    func restoreTransactions(_ i: Int) {
        let client = clients[i]
        for o in client.restoredTransactions.outcomes {
            checks.transactionEnded(client: i, storeID: o.id, committed: o.committed, error: o.error, in: self)
            acknowledgeOutcome(i, o.id)
        }
        for q in client.restoredTransactions.queued.sorted(by: { $0.id < $1.id }) {
            note("c\(i) tx\(q.id) restored (\(q.status))")
            runTransaction(
                i, SimTransaction(storeID: q.id, name: q.functionName, path: q.path, argument: q.argument),
                retries: q.retryCount, new: false)
        }
        client.restoredTransactions = ([], [])
        // Plain writes' results the last run kept in the store (`Database.open` hands them to
        // the first write-result observer).
        let kept: [KeptOutcome<WriteResult>]
        do { kept = try Database.keptWriteResults(client.store, warn: { fail("c\(i): \($0)") }) } catch {
            return fail("c\(i) restoring write results: \(error)")
        }
        for k in kept {
            note("c\(i) write \(k.value.id.rawValue)'s result restored")
            checks.writeResult(k.value, client: i, in: self)
            acknowledgeOutcome(i, k.record)
        }
    }
}

extension SimChecks {
    /// A transaction reported its outcome: once, and committed only without an error; an
    /// abort has a reason the workload can cause (`disconnect`, `maxretry`).
    func transactionEnded(client i: Int, storeID: Int64, committed: Bool, error: DatabaseError?, in sim: Simulation) {
        let key = "c\(i)#\(storeID)"
        guard var record = transactions[key] else {
            sim.fail("c\(i)'s transaction \(storeID) ended, which it never started")
            return
        }
        if let o = record.outcome {
            sim.fail(
                "c\(i)'s transaction \(storeID) ended twice: \(o.committed ? "committed" : "aborted \(o.error.map { "\($0)" } ?? "")"), then \(committed ? "committed" : "aborted \(error.map { "\($0)" } ?? "")")"
            )
            return
        }
        record.outcome = (committed, error)
        transactions[key] = record
        sim.note("c\(i) tx\(storeID) \(committed ? "COMMITTED" : "aborted: \(error.map { "\($0)" } ?? "no reason")")")
        if committed {
            sim.stats.transactionsCommitted += 1
            if error != nil { sim.fail("c\(i)'s transaction \(storeID) committed with an error") }
            return
        }
        switch error {
        case .serverError(status: "disconnect", _)?: sim.stats.transactionsDisconnected += 1
        case .serverError(status: "maxretry", _)?: sim.stats.transactionsMaxRetry += 1
        default: sim.fail("c\(i)'s transaction \(storeID) aborted: \(error.map { "\($0)" } ?? "no reason")")
        }
    }

    /// At quiescence: every transaction ended; each counter holds at least its committed
    /// increments and at most those plus the ones that ended `disconnect` (Firebase: whether
    /// such a write was applied is unknown); the list holds every committed append exactly
    /// once, a `disconnect` one at most once, nothing else.
    func finalTransactions(_ sim: Simulation, data: Node) {
        var committed: [Path: Int] = [:]
        var unknown: [Path: Int] = [:]
        var mustAppear: Set<Node> = []
        var mayAppear: Set<Node> = []
        for key in transactions.keys.sorted() {
            let r = transactions[key]!
            guard let o = r.outcome else {
                sim.fail("c\(r.client)'s transaction \(r.storeID) (\(r.name) /\(r.path.wireString)) never ended")
                continue
            }
            let maybe = !o.committed && o.error == .transactionAborted("disconnect")
            if r.name == "increment" {
                if o.committed { committed[r.path, default: 0] += 1 }
                if maybe { unknown[r.path, default: 0] += 1 }
            } else {
                if o.committed { mustAppear.insert(r.argument) }
                if maybe { mayAppear.insert(r.argument) }
            }
        }
        for path in SimTransactions.counters {
            let value = SimTransactions.count(data.child(at: path))
            let low = committed[path, default: 0]
            let high = low + unknown[path, default: 0]
            if value < low || value > high {
                sim.fail(
                    "the counter /\(path.wireString) is \(value); \(low) increments committed, \(high - low) ended disconnect"
                )
            }
        }
        let list = data.child(at: SimTransactions.list)
        var seen: [Node: Int] = [:]
        if !list.isLeaf { for c in list.children { seen[c.value, default: 0] += 1 } }
        for (v, n) in seen where n > 1 {
            sim.fail("the list holds \(v.plainJSONString()) \(n) times: an append applied twice")
        }
        for v in mustAppear where seen[v] == nil {
            sim.fail("the list lacks the committed append \(v.plainJSONString())")
        }
        for v in seen.keys where !mustAppear.contains(v) && !mayAppear.contains(v) {
            sim.fail("the list holds \(v.plainJSONString()), which no committed or disconnected append wrote")
        }
    }
}
