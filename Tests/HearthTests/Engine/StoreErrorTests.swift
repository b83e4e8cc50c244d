import Testing
import HearthLog
import HearthModel
@testable import Hearth

/// `StoreError` reads well: every case says what happened and what to do.
@Suite struct StoreErrorTests {
    static let samples: [StoreError] = [
        .log(.storeLocked(path: "/s")), .log(.storeMissing(path: "/s")), .log(.manifestMissing(path: "/s")),
        .log(.unsupportedVersion(file: "MANIFEST", offset: 8, version: 9)),
        .log(.corruption(file: "seg-1.log", offset: 64, reason: "bad crc")),
        .log(.lsnGap(file: "seg-1.log", offset: 64, expected: 3, found: 5)), .log(.missingFile(file: "seg-2.log")),
        .log(.unknownRecordType(file: "seg-1.log", offset: 64, type: 9)), .log(.recordTooLarge(size: 10, limit: 5)),
        .log(.invalidArgument("x")), .log(.poisoned(underlying: .closed)), .log(.closed),
        .corruptCheckpoint(file: "cp-1", offset: 12, reason: "bad chunk"),
        .corruptRecord(file: "seg-1.log", offset: 64, lsn: 7, reason: "bad tag"),
        .invalidOption("cap must be positive"), .unknownWrite(id: 4), .unknownTransaction(id: 5),
        .unknownOnDisconnect(id: 6), .poisoned("fsync failed"), .closed,
    ]

    @Test func everyCaseSaysWhatHappenedAndWhatToDo() {
        for error in Self.samples {
            #expect(error.description == "\(error.whatHappened); \(error.whatToDo)")
            #expect(!error.whatHappened.isEmpty && !error.whatToDo.isEmpty, "\(error)")
            #expect("\(error)" == error.description)
        }
        // Distinct advice where the remedy differs.
        #expect(StoreError.log(.storeLocked(path: "/s")).whatToDo != StoreError.closed.whatToDo)
    }

    @Test func damageNamesTheFileAndOffsetAndTheRemedy() {
        let e = StoreError.corruptRecord(file: "seg-1.log", offset: 64, lsn: 7, reason: "bad tag")
        #expect(e.description.contains("seg-1.log"))
        #expect(e.description.contains("offset 64"))
        #expect(e.description.contains("hearth verify"))
        #expect(
            StoreError.log(.corruption(file: "seg-1.log", offset: 64, reason: "r")).description.contains(
                "hearth verify"))
        #expect(StoreError.log(.storeLocked(path: "/s")).description.contains("another process"))
        #expect(StoreError.poisoned("fsync failed").description.contains("reopen"))
    }

    @Test func invalidInputSaysNothingWasWritten() {
        let e = StoreError.invalidData(.tooDeep(path: "a"))
        #expect(e.description.hasPrefix("invalid data: "))
        #expect(e.description.contains("nothing was written"))
    }

    #if canImport(Darwin)
    @Test func localizedDescriptionIsTheMessage() {
        let e = StoreError.closed
        #expect(e.localizedDescription == e.description)
        #expect(e.recoverySuggestion == "open the store again")
    }
    #endif

    /// The `Store` doc comment's example, verbatim but for the directory: if it stops
    /// compiling, so does this test.
    @Test func storeDocCommentExampleCompiles() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path)
        let id = try store.saveWrite(.set(.string("hi")), at: "messages/m1")
        // ack + the server's data: one atomic commit. The closure names its thrown type
        // (`throws(StoreError)`): Swift infers `any Error` for a closure that does not.
        try store.commit { batch throws(StoreError) in
            try batch.ackWrite(id)
            try batch.applyServerOverwrite(.string("hi"), at: "messages/m1")
        }
        print(try store.value(at: "messages"))
        #expect(try store.value(at: "messages/m1") == .string("hi"))
        #expect(store.pendingWrites().isEmpty)
        try store.close()
    }
}
