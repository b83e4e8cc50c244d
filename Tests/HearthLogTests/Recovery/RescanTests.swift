import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

/// The one loop every read without the store's lock runs its passes through.
@Suite struct RescanTests {
    /// Counts the passes of one `Rescan.retrying` whose every pass gets `verdict`.
    func passes(_ verdict: Rescan.Verdict) throws -> Int {
        let fs = SimulatedFileSystem(seed: 1)
        try fs.createDirectory("store")
        var count = 0
        let last = Rescan.retrying(directory: "store", fileSystem: fs) {
            count += 1
            return count
        } verdict: { _ in
            verdict
        }
        #expect(last == count, "the last pass's outcome stands")
        return count
    }

    @Test func aPassThatStandsRunsOnce() throws {
        #expect(try passes(.stands) == 1)
    }

    @Test func aFailureNoWriterExplainsIsNotReadAgain() throws {
        // The MANIFEST (absent here) did not move on, and the error is no file shrinking.
        #expect(try passes(.failed(nil)) == 1)
        #expect(try passes(.failed(.corruption(file: "00000001.log", offset: 0, reason: "bad"))) == 1)
    }

    @Test func aFileShrinkingUnderTheReaderIsReadAgainABoundedNumberOfTimes() throws {
        let shrank = LogError.corruption(file: "00000001.log", offset: 0, reason: LogError.shrankWhileReading)
        #expect(shrank.isShrinkUnderReader)
        #expect(try passes(.failed(shrank)) == Scanner.rescanAttempts)
        #expect(Log.verifyAttempts == Scanner.rescanAttempts)
    }

    @Test func aThrowingPassIsReadAgainOnlyWhenAWriterExplainsIt() throws {
        let fs = SimulatedFileSystem(seed: 2)
        try fs.createDirectory("store")
        var count = 0
        #expect(throws: LogError.self) {
            try Rescan.retrying(directory: "store", fileSystem: fs) { () throws(LogError) -> Int in
                count += 1
                throw .corruption(file: "f", offset: 0, reason: LogError.shrankWhileReading)
            }
        }
        #expect(count == Scanner.rescanAttempts)
        count = 0
        let value = try Rescan.retrying(directory: "store", fileSystem: fs) { () throws(LogError) -> Int in
            count += 1
            return 7
        }
        #expect(value == 7 && count == 1)
    }
}
