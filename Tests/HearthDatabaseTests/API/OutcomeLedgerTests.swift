import Dispatch
import Testing
@testable import HearthDatabase

/// The runtime's outcome ledger on its own: who hears of an outcome, what waits for an
/// observer, and when the acknowledgement commit is due.
@Suite("Outcome ledger")
struct OutcomeLedgerTests {
    let queue = DispatchQueue(label: "outcome-ledger-tests")

    func kept(_ record: Int64) -> KeptOutcome<WriteResult> {
        KeptOutcome(record: record, value: WriteResult(id: WriteID(rawValue: record), error: nil))
    }

    func observer() -> OutcomeObserver<WriteResult> { OutcomeObserver(queue: queue) { _ in } }

    /// A write of this run keeps its outcome only when something will hear it; a restored one
    /// always (its completion died with the run that made it).
    @Test func anOutcomeIsKeptOnlyForSomeoneToHearIt() {
        var ledger = OutcomeLedger(firstWriteOfRun: 10, limit: 4)
        #expect(ledger.keepsOutcome(ofWrite: 9), "restored from an earlier run")
        #expect(!ledger.keepsOutcome(ofWrite: 10), "no completion, no observer")
        ledger.expect(WriteCallback(queue: queue) { _ in }, forWrite: 11)
        #expect(ledger.keepsOutcome(ofWrite: 11))
        #expect(!ledger.keepsOutcome(ofWrite: 12))
        _ = ledger.writes.register(observer(), as: 1)
        #expect(ledger.keepsOutcome(ofWrite: 12), "a write-result observer hears every write")
        ledger.writes.remove(1)
        #expect(!ledger.keepsOutcome(ofWrite: 12))
    }

    /// An answer hands out the write's completion and its kept record once.
    @Test func anAnswerTakesTheCompletionAndTheRecordOnce() {
        var ledger = OutcomeLedger(firstWriteOfRun: 1, limit: 4)
        ledger.expect(WriteCallback(queue: queue) { _ in }, forWrite: 3)
        ledger.kept([3: 70, 4: 71])
        let first = ledger.answered(write: 3)
        #expect(first.completion != nil && first.record == 70)
        let again = ledger.answered(write: 3)
        #expect(again.completion == nil && again.record == nil)
        let other = ledger.answered(write: 4)
        #expect(other.completion == nil && other.record == 71)
    }

    /// Outcomes wait for the first observer, which takes them all, oldest first; past the limit
    /// the oldest is dropped (for the caller to acknowledge), including those restored at open.
    @Test func waitingOutcomesAreBoundedAndGoToTheFirstObserver() {
        var ledger = OutcomeLedger(firstWriteOfRun: 1, limit: 3, waitingWrites: (1...5).map(kept))
        #expect(ledger.writes.waiting.map(\.record) == [1, 2, 3, 4, 5], "restored outcomes are not dropped at open")
        let dropped = ledger.writes.keep(kept(6))
        #expect(dropped.map(\.record) == [1, 2, 3])
        #expect(ledger.writes.waiting.map(\.record) == [4, 5, 6])
        #expect(ledger.writes.keep(kept(7)).map(\.record) == [4])
        let handed = ledger.writes.register(observer(), as: 1)
        #expect(handed.map(\.record) == [5, 6, 7])
        #expect(ledger.writes.waiting.isEmpty)
        _ = ledger.writes.register(observer(), as: 2)
        #expect(ledger.transactions.waiting.isEmpty, "the two kinds wait apart")
    }

    /// The acknowledgement commit is scheduled once for every record acknowledged before it
    /// runs, and again only after it took them.
    @Test func oneAcknowledgementCommitCarriesEveryRecordAcknowledgedBeforeIt() {
        var ledger = OutcomeLedger(firstWriteOfRun: 1, limit: 3)
        let schedules = [5, 6, 7].map { ledger.acknowledge($0) }
        #expect(schedules == [true, false, false], "only the first acknowledgement schedules the commit")
        let taken = ledger.takeAcknowledged()
        #expect(taken == [5, 6, 7])
        #expect(!ledger.ackCommitScheduled)
        let none = ledger.takeAcknowledged()
        #expect(none.isEmpty)
        let again = ledger.acknowledge(8)
        #expect(again, "after a commit took them, the next one schedules again")
    }
}
