// The `Store` doc comment's example, verbatim, compiled and run as an app would (this target
// imports Hearth without `@testable`), and `StoreError` as a user reads it.
import Foundation
import Hearth
import Testing

@Suite struct DocExampleTests {
    @Test func theStoreDocCommentExampleCompilesAndRuns() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-doc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        // --- verbatim from Sources/Hearth/Engine/Store.swift (path replaced) ---
        let store = try Store.open(directory: dir.path)
        let id = try store.saveWrite(.set(.string("hi")), at: "messages/m1")
        try store.commit { batch in  // ack + the server's data: one atomic commit
            try batch.ackWrite(id)
            try batch.applyServerOverwrite(.string("hi"), at: "messages/m1")
        }
        print(try store.value(at: "messages"))
        // --- end of the example ---
        #expect(store.pendingWrites().isEmpty)
        #expect(try store.serverValue(at: "messages/m1") == .string("hi"))
        try store.close()
    }

    /// The example's text in the doc comment is the code above, line for line.
    @Test func theDocCommentStillSaysWhatThisTestRuns() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let source = try String(
            contentsOf: root.appendingPathComponent("Sources/Hearth/Engine/Store.swift"), encoding: .utf8)
        let test = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        guard let start = source.range(of: "/// ```swift\n"),
            let end = source.range(of: "/// ```\n", range: start.upperBound..<source.endIndex)
        else {
            Issue.record("no swift example in Store's doc comment")
            return
        }
        let example = source[start.upperBound..<end.lowerBound].split(separator: "\n").map { $0.dropFirst(4) }
        for line in example where !line.contains("/path/to/store") {
            #expect(test.contains("        " + line), "doc example line not exercised here: \(line)")
        }
    }

    struct Abort: Error {}

    @Test func aForeignErrorFromTheShortFormAbortsTheCommitAndIsRethrown() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-doc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Store.open(directory: dir.path)
        #expect(throws: Abort.self) {
            try store.commit { batch in
                try batch.applyServerOverwrite(.number(1), at: "x")
                throw Abort()
            }
        }
        #expect(throws: StoreError.self) {
            try store.commit { batch in try batch.ackWrite(42) }
        }
        #expect(try store.serverValue(at: "x").isEmpty)
        try store.close()
    }

    @Test func storeErrorsReadAsSentences() throws {
        let cases: [StoreError] = [
            .invalidOption("cacheSizeBytes 5 is outside 1 MiB … 100 MiB"), .unknownWrite(id: 7),
            .unknownQuery(QueryLocation(path: "a", query: .default)), .unknownTransaction(id: 1),
            .unknownOnDisconnect(id: 2),
            .poisoned("write failed: EIO"), .closed,
            .corruptCheckpoint(file: "ckpt-1.ckpt", offset: 64, reason: "bad chunk"),
            .corruptRecord(file: "seg-1.log", offset: 96, lsn: 3, reason: "bad tag"),
            .log(.storeLocked(path: "/tmp/s/LOCK")), .log(.io(FileSystemError(.ioError, .sync, "seg-1.log"))),
            .log(.io(FileSystemError(.other(20), .lock, "afile/LOCK"))),
        ]
        for e in cases {
            let text = e.description
            #expect(!text.isEmpty && !text.contains("Hearth.") && !text.contains("Optional("), "\(text)")
            #expect(String(describing: e) == text)
            #expect("\(e)" == text)
        }
        #expect(StoreError.poisoned("x").description.contains("reopen"))
    }
}
