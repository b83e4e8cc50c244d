// A requested segment roll (Log.submitRoll, what a checkpoint asks for before it snapshots) at
// every I/O call it makes: a failed call, and a power cut in every mode.
//
// The rule under test: a roll that fails before the new MANIFEST is renamed into place has
// changed nothing durable, so it is given up and the log goes on in the old segment (on a full
// disk the store keeps writing); a failed sync of the old segment, or a failure from the rename
// on, poisons the log. Either way every durable record survives a power cut.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

@Suite struct RollFaultTests {
    static let segment1 = "seg-0000000000000001.log"
    static let segment2 = "seg-0000000000000002.log"

    /// A log whose first segment holds 30 durable records (room for many more).
    static func seeded(seed: UInt64) throws -> (SimulatedFileSystem, Log, [[UInt8]]) {
        let fs = SimulatedFileSystem(seed: seed)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        var history: [[UInt8]] = []
        for i in 0..<30 {
            history.append(jsonPayload(i, extra: 10))
            _ = try log.append(history.last!, type: 1)
        }
        return (fs, log, history)
    }

    /// The I/O calls a roll makes when nothing fails.
    static func rollCalls(seed: UInt64) throws -> Int {
        let (fs, log, _) = try seeded(seed: seed)
        let before = fs.callCount
        try log.wait(log.submitRoll())
        let calls = fs.callCount - before
        #expect(try log.footprint().files.map(\.name).filter { $0.hasPrefix("seg-") } == [segment1, segment2])
        try log.close()
        return calls
    }

    /// Whether a failure of this call must poison the log: the old segment's sealing sync, and
    /// the MANIFEST's rename and the directory sync after it.
    static func mustPoison(_ call: (operation: FileOperation, path: String)) -> Bool {
        switch call.operation {
        case .sync: call.path.hasSuffix(segment1)
        case .rename, .syncDirectory: true
        default: false
        }
    }

    @Test(arguments: [FileSystemError.Code.noSpace, .ioError])
    func aRollFailingAtEveryCall(code: FileSystemError.Code) throws {
        let seed: UInt64 = 0x5E6_0001
        let calls = try Self.rollCalls(seed: seed)
        // Cut of the preallocated zeros, seal sync; segment create, header write, sync;
        // MANIFEST.tmp create, write, sync; rename; directory sync.
        #expect(calls == 10, "a roll made \(calls) calls")
        var givenUp = 0, poisoned = 0
        for k in 0..<calls {
            let ctx = "fault at roll call \(k + 1) of \(calls), \(code)"
            let (fs, log, history) = try Self.seeded(seed: seed)
            fs.failCall(afterCalls: k, code)
            let outcome = Result { () throws(LogError) in try log.wait(log.submitRoll()) }
            let failed = try #require(fs.failedCalls.first, "no call failed: \(ctx)")
            var expected = history
            switch outcome {
            case .success:
                #expect(!Self.mustPoison(failed), "\(failed) failed and the log went on: \(ctx)")
                givenUp += 1
                #expect(log.abandonedRolls.count == 1, "\(ctx)")
                // Nothing half-done is left: the old segment is still the only one, and neither
                // the new segment nor MANIFEST.tmp is in the directory.
                #expect(
                    try log.footprint().files.map(\.name).filter { $0.hasPrefix("seg-") } == [Self.segment1], "\(ctx)")
                #expect(!fs.fileNames(in: storeDir).contains { $0 == Self.segment2 || $0.hasSuffix(".tmp") }, "\(ctx)")
                // Writes go on, in the old segment, durably.
                for i in 100..<105 {
                    expected.append(jsonPayload(i))
                    #expect(try log.append(expected.last!, type: 1) == LSN(expected.count), "\(ctx)")
                }
                // And a later roll, with room again, succeeds.
                try log.wait(log.submitRoll())
                #expect(
                    try log.footprint().files.map(\.name).filter { $0.hasPrefix("seg-") } == [
                        Self.segment1, Self.segment2,
                    ], "\(ctx)")
                expected.append([42])
                _ = try log.append([42], type: 1)
            case .failure(let error):
                #expect(Self.mustPoison(failed), "\(failed) failed and poisoned the log: \(ctx)")
                poisoned += 1
                #expect(error == .io(FileSystemError(code, failed.operation, failed.path)), "\(ctx)")
                #expect(throws: LogError.self, "a poisoned log accepted an append: \(ctx)") {
                    try log.append([1], type: 1)
                }
            }
            try? log.close()
            fs.powerCut(mode: .dropAllUnsynced)
            let verify = try Log.verify(directory: storeDir, fileSystem: fs)
            #expect(verify.damage == nil, "\(String(describing: verify.damage)): \(ctx)")
            let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
            #expect(try recoveredHistory(again) == expected, "\(ctx)")
            #expect(try again.append([7], type: 1) == LSN(expected.count + 1), "\(ctx)")
            try again.close()
        }
        // Seven calls change nothing durable (the cut of the old segment's zero tail, and six
        // that touch only files no MANIFEST names); three (seal sync, rename, directory sync) do.
        #expect(givenUp == 7 && poisoned == 3, "given up \(givenUp), poisoned \(poisoned)")
    }

    /// A power cut at every call of a roll, in every mode: recovery finds the old generation or
    /// the new one — never a segment the MANIFEST names but that lacks its header, or records
    /// lost — and the log then rolls and appends normally.
    @Test func aPowerCutAtEveryCallOfARoll() throws {
        let seed: UInt64 = 0x5E6_0002
        let calls = try Self.rollCalls(seed: seed)
        var newGeneration = 0, oldGeneration = 0
        for k in 0...calls {
            for mode in SimulatedFileSystem.PowerCutMode.all {
                let ctx = "power cut after roll call \(k) of \(calls), \(mode)"
                let (fs, log, history) = try Self.seeded(seed: seed)
                fs.crash(afterCalls: k)
                _ = try? log.wait(log.submitRoll())
                try? log.close()
                fs.powerCut(mode: mode)
                let verify = try Log.verify(directory: storeDir, fileSystem: fs)
                #expect(
                    verify.damage == nil || verify.damage!.isTornTail, "\(String(describing: verify.damage)): \(ctx)")
                let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
                #expect(try recoveredHistory(again) == history, "\(ctx)")
                let segments = try again.footprint().files.map(\.name).filter { $0.hasPrefix("seg-") }
                if segments.count == 2 { newGeneration += 1 } else { oldGeneration += 1 }
                _ = try again.append([7], type: 1)
                try again.wait(again.submitRoll())
                _ = try again.append([8], type: 1)
                try again.close()
                let third = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
                #expect(try recoveredHistory(third) == history + [[7], [8]], "\(ctx)")
                try third.close()
            }
        }
        #expect(newGeneration > 0 && oldGeneration > 0, "new \(newGeneration), old \(oldGeneration)")
    }

    /// A requested roll falls exactly between the records queued before it and those after it,
    /// even when they are written in one group: a checkpoint through the roll's LSN then drops
    /// every segment holding a record it covers.
    @Test func aRollSplitsConcurrentAppendsAtItsLSN() throws {
        let fs = SimulatedFileSystem(seed: 0x5E6_0003)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20, durability: .buffered))
        var history: [[UInt8]] = []
        var pending: [Log.PendingAppend] = []
        for i in 0..<20 {
            history.append(jsonPayload(i))
            pending.append(try log.submit(history.last!, type: 1))
        }
        let roll = try log.submitRoll()
        #expect(roll.lsn == 20)
        for i in 20..<30 {
            history.append(jsonPayload(i))
            pending.append(try log.submit(history.last!, type: 1))
        }
        // All 31 requests are queued before anyone leads: the first leader must stop its
        // group at the roll, or the roll would come before records 1–20 are written.
        for p in pending.prefix(20) { try log.wait(p) }
        try log.wait(roll)
        for p in pending.suffix(10) { try log.wait(p) }
        try log.installCheckpoint(lsn: 20, body: encodeBody(Array(history.prefix(20))))
        #expect(log.firstLSN == 21, "the live log starts after the checkpoint")
        try log.close()
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        #expect(try recoveredHistory(again) == history)
        try again.close()
    }
}
