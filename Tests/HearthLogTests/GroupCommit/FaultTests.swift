// EIO and ENOSPC on write and on sync: the failing call throws, earlier data is intact, and the log is
// poisoned (every later append throws) until it is reopened.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

@Suite struct FaultTests {
    @Test(arguments: [FileOperation.write, .sync], [FileSystemError.Code.ioError, .noSpace])
    func failedWriteOrSyncPoisonsTheLog(op: FileOperation, code: FileSystemError.Code) throws {
        let fs = SimulatedFileSystem(seed: 21)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        var history: [[UInt8]] = []
        for i in 0..<10 {
            history.append(jsonPayload(i))
            _ = try log.append(history.last!, type: 1)
        }
        fs.injectFault(op, code)
        do {
            _ = try log.append(jsonPayload(99), type: 1)
            Issue.record("append succeeded despite the fault")
        } catch let e {
            #expect(e == .io(FileSystemError(code, op, "/store/seg-0000000000000001.log")))
        }
        // Poisoned: even though the fault was one-shot, nothing is acknowledged any more.
        #expect(
            throws: LogError.poisoned(underlying: .io(FileSystemError(code, op, "/store/seg-0000000000000001.log")))
        ) {
            try log.append([1], type: 1)
        }
        #expect(throws: LogError.self) { try log.flush() }
        #expect(throws: LogError.self) { try log.installCheckpoint(lsn: 5, body: []) }
        #expect(log.durableLSN == 10)
        try? log.close()
        // Reopen: the earlier records are intact; the failed one may or may not have reached the file.
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let h = try recoveredHistory(again)
        #expect(Array(h.prefix(10)) == history)
        #expect(h.count == 10 || (h.count == 11 && op == .sync))
        #expect(try again.append([7], type: 1) == LSN(h.count + 1))
        try again.close()
    }

    @Test func stickyFaultsFailReopenUntilCleared() throws {
        let fs = SimulatedFileSystem(seed: 22)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        for i in 0..<5 { _ = try log.append(jsonPayload(i), type: 1) }
        fs.injectFault(.sync, .ioError, sticky: true)
        #expect(throws: LogError.self) { try log.append([1], type: 1) }
        try? log.close()
        #expect(throws: LogError.io(FileSystemError(.ioError, .sync, "/store/seg-0000000000000001.log"))) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        fs.clearFaults()
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(try recoveredHistory(again).count >= 5)
        try again.close()
    }

    /// A checkpoint that fails while its file is written or renamed changes nothing durable: the
    /// log stays writable (on a full disk, open must not be refused for want of room for a
    /// checkpoint). From the directory sync on, the state is uncertain: the log is poisoned.
    @Test(arguments: [FileOperation.create, .write, .sync, .rename, .syncDirectory])
    func failedCheckpointInstallLeavesOldGenerationAndPoisonsOnlyWhenUncertain(op: FileOperation) throws {
        let fs = SimulatedFileSystem(seed: 23)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        var history: [[UInt8]] = []
        for i in 0..<40 {
            history.append(jsonPayload(i, extra: 10))
            _ = try log.append(history.last!, type: 1)
        }
        try log.installCheckpoint(lsn: 20, body: encodeBody(Array(history.prefix(20))))
        fs.injectFault(op, .ioError, pathContains: op == .syncDirectory ? nil : "ckpt-0000000000000002")
        #expect(throws: LogError.self) { try log.installCheckpoint(lsn: 40, body: encodeBody(history)) }
        if op == .syncDirectory {
            #expect(throws: LogError.self) { try log.append([1], type: 1) }
        } else {
            fs.clearFaults()
            _ = try log.append([1], type: 1)
            try log.waitUntilDurable(log.lastLSN)
            history.append([1])
        }
        try? log.close()
        fs.powerCut(mode: .dropAllUnsynced)
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(again.checkpoint?.lsn == 20)
        #expect(try recoveredHistory(again) == history)
        try again.close()
    }

    /// A checkpoint that fails on a full disk removes its temp file: left behind,
    /// it would hold the space the next attempt needs.
    @Test(arguments: [FileOperation.write, .sync, .rename])
    func failedCheckpointRemovesItsTempFile(op: FileOperation) throws {
        let fs = SimulatedFileSystem(seed: 24)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        var history: [[UInt8]] = []
        for i in 0..<40 {
            history.append(jsonPayload(i, extra: 10))
            _ = try log.append(history.last!, type: 1)
        }
        fs.injectFault(op, .noSpace, pathContains: "ckpt-")
        #expect(throws: LogError.self) { try log.installCheckpoint(lsn: 40, body: encodeBody(history)) }
        #expect(!fs.fileNames(in: storeDir).contains { $0.hasSuffix(".tmp") })
        try? log.close()
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(try recoveredHistory(again) == history)
        try again.close()
    }
}
