import HearthModel
import Testing
@testable import HearthDatabase

/// The sans-I/O transaction decisions (``TransactionQueue``): what each answer does.
@Suite struct TransactionQueueTests {
    let stale = DatabaseError.serverError(status: "datastale", message: "Transaction hash does not match")

    @Test func okCommitsOnceAndForgetsTheWrite() throws {
        var q = TransactionQueue<String>()
        q.sent(7, path: "t/n", retries: 0, payload: "inc")
        #expect(q.contains(7))
        let answer = q.answered(7, error: nil)
        let (entry, step) = try #require(answer)
        #expect(step == .committed)
        #expect(entry.payload == "inc")
        #expect(!q.contains(7))
        let again = q.answered(7, error: nil)
        #expect(again == nil, "a second answer for the same write decides nothing")
        let interrupted = q.interrupted(7)
        #expect(interrupted == nil)
    }

    @Test func staleRunsAgainUntilTheTwentyFifthAttemptThenMaxretry() throws {
        var q = TransactionQueue<Int>()
        var retries = 0
        var id: Int64 = 1
        while true {
            q.sent(id, path: "t/n", retries: retries, payload: 0)
            let answer = q.answered(id, error: stale)
            let (entry, step) = try #require(answer)
            id += 1
            if step == .runAgain {
                #expect(entry.retries == retries + 1)
                retries = entry.retries
                continue
            }
            #expect(step == .aborted(.transactionAborted("maxretry")))
            break
        }
        #expect(retries == TransactionQueue<Int>.maxRetries - 1, "25 stale attempts in all")
    }

    @Test func interruptedAbortsDisconnect() {
        var q = TransactionQueue<Int>()
        q.sent(3, path: "t/n", retries: 2, payload: 0)
        let step = q.interrupted(3)?.1
        #expect(step == .aborted(.transactionAborted("disconnect")))
        #expect(!q.contains(3))
    }

    @Test func otherRefusalAbortsWithWhatTheServerSaid() {
        var q = TransactionQueue<Int>()
        q.sent(3, path: "t/n", retries: 0, payload: 0)
        let denied = DatabaseError.permissionDenied("Permission denied")
        let step = q.answered(3, error: denied)?.1
        #expect(step == .aborted(denied))
    }

    /// A plain write at, above or below a transaction's location: unsent ones are withdrawn
    /// (abort `set`), sent ones abort `set` when they come back stale instead of running again.
    @Test func plainWriteAbortsRelatedTransactionsWithSet() {
        var q = TransactionQueue<Int>()
        q.sent(1, path: "t/n", retries: 0, payload: 0)
        q.sent(2, path: "t/list", retries: 0, payload: 0)
        q.sent(3, path: "u", retries: 0, payload: 0)
        #expect(q.related(to: "t") == [1, 2])
        #expect(q.related(to: "t/n/x") == [1])
        let withdrawn = q.withdrawn(1)?.1
        #expect(withdrawn == .aborted(.transactionAborted("set")))
        q.markOverwritten(2)
        let overwritten = q.answered(2, error: stale)?.1
        #expect(overwritten == .aborted(.transactionAborted("set")))
        let unrelated = q.answered(3, error: stale)?.1
        #expect(unrelated == .runAgain)
    }
}
