import Dispatch
import Hearth
import HearthModel
import Synchronization
import Testing
@testable import HearthDatabase

/// The ack path as a component: the core's commits in, each answered write's outcome kept in the
/// store while someone will hear of it, handed to its handlers, and removed once they returned.
/// Deterministic: handlers run on a serial queue the test drains with `sync`, and the
/// acknowledgement commit on a `work` queue drained the same way.
@Suite("Write acknowledger")
struct WriteAcknowledgerTests {
    let dir = TempDir()
    let work = DispatchQueue(label: "write-acknowledger-tests.work")
    let handlers = DispatchQueue(label: "write-acknowledger-tests.handlers")
    /// The server's answer to a write it applied.
    let applied: DatabaseError? = nil

    func open() throws -> Store {
        try Store.open(directory: dir.path, options: SyncHarness.storeOptions(clock: { 1_700_000_000_000 }))
    }

    func acknowledger(
        _ store: Store, firstWriteOfRun: Int64 = 1, log: @escaping @Sendable (String) -> Void = { _ in }
    ) -> WriteAcknowledger {
        WriteAcknowledger(
            store: store, work: work, log: log,
            ledger: OutcomeLedger(firstWriteOfRun: firstWriteOfRun, limit: WriteAcknowledger.maxUndeliveredOutcomes))
    }

    func outcomeRecords(_ store: Store) -> [QueuedTransaction] {
        store.transactions().filter(\.status.isWriteOutcome)
    }

    /// An ack with a completion waiting: the write leaves the pending writes and its outcome is
    /// kept in the same commit; the completion hears it; once it has returned, the record leaves.
    @Test func anAckedWritesOutcomeIsKeptUntilItsCompletionReturned() throws {
        let store = try open()
        defer { try? store.close() }
        let id = try store.saveWrite(.set(.string("v")), at: Path("a"))
        let ack = acknowledger(store)
        let heard = Mutex<[DatabaseError?]>([])
        ack.expect(WriteCallback(queue: handlers) { e in heard.withLock { $0.append(e) } }, forWrite: id)
        ack.commit([.ackWrite(id)], answering: [id: applied])
        #expect(store.pendingWrites().isEmpty)
        #expect(outcomeRecords(store).count == 1, "the outcome is kept with the ack")
        ack.reportWrite(id, nil)
        handlers.sync {}
        #expect(heard.withLock { $0.count } == 1)
        work.sync {}
        #expect(outcomeRecords(store).isEmpty, "the record left once the completion returned")
        #expect(ack.ledger.completions.isEmpty)
    }

    /// A write of this run nothing will hear of keeps no outcome; one restored from an earlier
    /// run keeps it, and it waits for the first write-result observer, which then acknowledges it.
    @Test func onlyAnOutcomeSomeoneWillHearIsKept() throws {
        let store = try open()
        defer { try? store.close() }
        let restored = try store.saveWrite(.set(.number(1)), at: Path("r"))
        let unheard = try store.saveWrite(.set(.number(2)), at: Path("u"))
        let ack = acknowledger(store, firstWriteOfRun: unheard)
        ack.commit(
            [.ackWrite(restored), .revertWrite(unheard)], answering: [restored: applied, unheard: applied])
        #expect(store.pendingWrites().isEmpty)
        #expect(outcomeRecords(store).count == 1, "only the restored write's outcome is kept")
        ack.reportWrite(restored, nil)
        ack.reportWrite(unheard, nil)
        #expect(ack.ledger.writes.waiting.map(\.value.id.rawValue) == [restored], "waits for an observer")
        let results = Mutex<[WriteResult]>([])
        ack.observe(OutcomeObserver(queue: handlers) { r in results.withLock { $0.append(r) } }, as: 1, on: \.writes)
        handlers.sync {}
        work.sync {}
        #expect(results.withLock { $0.map(\.id.rawValue) } == [restored])
        #expect(outcomeRecords(store).isEmpty)
    }

    /// A commit the store refuses is skipped and logged; the others in its slice commit.
    @Test func aRefusedCommitIsSkippedAndLogged() throws {
        let store = try open()
        defer { try? store.close() }
        let logged = Mutex<[String]>([])
        let ack = acknowledger(store) { line in logged.withLock { $0.append(line) } }
        ack.commit([.serverOverwrite(Path("t"), .string("y"))], answering: [:])
        #expect(logged.withLock { $0 }.isEmpty)
        ack.commit([.serverTimeOffset(.nan), .serverOverwrite(Path("s"), .string("x"))], answering: [:])
        #expect(logged.withLock { $0.count } == 1)
        #expect(logged.withLock { $0.first?.hasPrefix("the store refused a change from the server") } == true)
        #expect(try store.value(at: Path("s")) == .string("x"))
    }

    /// After ``WriteAcknowledger/close()`` no acknowledgement commit runs: the record stays, to
    /// be delivered again at the next start.
    @Test func afterCloseTheRecordsStay() throws {
        let store = try open()
        defer { try? store.close() }
        let id = try store.saveWrite(.set(.bool(true)), at: Path("c"))
        let ack = acknowledger(store)
        ack.expect(WriteCallback(queue: handlers) { _ in }, forWrite: id)
        ack.commit([.ackWrite(id)], answering: [id: applied])
        work.sync { ack.close() }
        ack.reportWrite(id, nil)
        handlers.sync {}
        work.sync {}
        #expect(outcomeRecords(store).count == 1)
    }
}
