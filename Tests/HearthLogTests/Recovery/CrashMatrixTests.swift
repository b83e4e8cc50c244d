// The crash matrix: a crash at every I/O call of a workload, in every power-cut mode, checked against a
// model of what was acknowledged (TH3-style: crash after call 1, then 2, … until the workload completes).
//
// Invariants checked after every crash and reopen:
// - every record acknowledged as durable (`.full`, or covered by a successful flush or checkpoint)
//   is recovered; after a process crash (no power loss) every acknowledged record is recovered;
// - what is recovered is a prefix of what was attempted, in order, with contiguous LSNs (no holes,
//   no phantoms, no reordering);
// - a crash right after recovery recovers the same history (recovery is idempotent and durable);
// - appending after recovery continues at the next LSN, and a second crash keeps all of the above;
// - the read-only verifier reports a clean store after recovery.
import Foundation
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthModel
import Synchronization
import HearthTesting

/// What the workload was told.
/// Outcome tallies, printed so a reader can see the matrix exercises torn tails and stray files.
final class MatrixTally {
    var tornTails = 0, strays = 0, temps = 0, withCheckpoint = 0, lostUnsynced = 0
}

final class AckModel {
    var attempted: [[UInt8]] = []
    var acked = 0
    var durable = 0
    /// LSNs of checkpoint installs started, and the highest that completed.
    var checkpointsTried: Set<Int> = [0]
    var checkpointDone = 0
}

enum Step {
    case append(Int, Durability)
    case batch([Int])
    case flush
    case checkpoint
}

let matrixNever = Durability.batched(interval: .seconds(3600))

/// The workload: mixed tiers, atomic batches, flushes, two checkpoints, several segment rolls.
/// `big`: multi-KiB incompressible records, so that writes span several sectors and pages and tears
/// fall inside records and inside atomic batches.
func matrixSteps(big: Bool = false) -> [Step] {
    var s: [Step] = []
    let base = big ? 5000 : 0
    for k in 0..<(big ? 24 : 34) {
        let i = base + k
        switch k {
        case 9, 25: s.append(.checkpoint)
        case 21 where big: s.append(.checkpoint)
        case 14: s.append(.batch([1000 + i, 2000 + i, 3000 + i]))
        case 19, 30: s.append(.flush)
        default:
            let tier: Durability = i % 3 == 0 ? .buffered : (i % 3 == 1 ? .full : matrixNever)
            s.append(.append(i, tier))
        }
    }
    return s
}

func payload(for i: Int) -> [UInt8] {
    if i >= 5000 { return randomBytes(1500 + (i * 977) % 5000, seed: UInt64(i)) }
    return i % 5 == 4 ? randomBytes(300 + i * 7, seed: UInt64(i)) : jsonPayload(i, extra: 10 + i % 13)
}

/// Runs the steps until done or until the first error (the simulated crash). Never throws.
func runWorkload(_ log: Log, _ steps: [Step], _ model: AckModel) {
    do {
        for step in steps {
            switch step {
            case let .append(i, tier):
                let p = payload(for: i)
                model.attempted.append(p)
                let lsn = try log.append(p, type: UInt8(i % 7), durability: tier)
                precondition(lsn == LSN(model.attempted.count), "LSN \(lsn) for attempt \(model.attempted.count)")
                model.acked = model.attempted.count
                if tier == .full { model.durable = model.acked }
            case let .batch(ids):
                let ps = ids.map { payload(for: $0) }
                model.attempted += ps
                _ = try log.appendBatch(ps.map { ($0, UInt8(9)) }, durability: .full)
                model.acked = model.attempted.count
                model.durable = model.acked
            case .flush:
                try log.flush()
                model.durable = model.acked
            case .checkpoint:
                let l = model.acked
                model.checkpointsTried.insert(l)
                try log.installCheckpoint(lsn: LSN(l), body: encodeBody(Array(model.attempted.prefix(l))))
                model.durable = max(model.durable, l)
                model.checkpointDone = l
            }
        }
    } catch {
        // The crash (or an injected fault): stop, like a dead process.
    }
}

/// Checks a recovered history against the model.
func checkHistory(_ history: [[UInt8]], _ model: AckModel, processCrashOnly: Bool, _ ctx: String) {
    #expect(history.count >= model.durable, "lost a durable acknowledged record: \(ctx)")
    if processCrashOnly { #expect(history.count >= model.acked, "process crash lost an acknowledged record: \(ctx)") }
    #expect(history.count <= model.attempted.count, "phantom records: \(ctx)")
    #expect(history == Array(model.attempted.prefix(history.count)), "not a prefix of the attempts: \(ctx)")
}

@Suite(.serialized) struct CrashMatrixTests {
    static let modes = SimulatedFileSystem.PowerCutMode.all

    /// `swift test` runs half the matrix: at every crash point, half the power-cut modes, the
    /// half alternating every two points, so each mode meets every kind of call and both the
    /// runs with and without a crash during recovery (odd points). The whole matrix costs about
    /// two and a half minutes of CPU, the largest single cost of the suite on a 2-core CI
    /// machine; `HEARTH_CRASH_MATRIX=full swift test --filter CrashMatrixTests` runs every cell
    /// (CONTRIBUTING.md: before changing anything in HearthLog's write or recovery paths).
    static let everyCell = ProcessInfo.processInfo.environment["HEARTH_CRASH_MATRIX"] == "full"

    /// Whether the cell (crash point `n`, mode index `m`) runs.
    static func runs(crashAfter n: Int, mode m: Int) -> Bool {
        everyCell || (n / 2 + m) % 2 == 0
    }

    /// Number of I/O calls the whole workload (including opening a new store) makes.
    static func totalCalls(seed: UInt64, big: Bool) throws -> Int {
        let fs = SimulatedFileSystem(seed: seed)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: big ? 24 << 10 : 4096))
        let model = AckModel()
        runWorkload(log, matrixSteps(big: big), model)
        #expect(model.acked == model.attempted.count, "the workload completes without faults")
        let n = fs.callCount
        try log.close()
        return n
    }

    @Test(arguments: [false, true])
    func crashAtEveryCallInEveryMode(big: Bool) throws {
        let seed: UInt64 = big ? 0xB16_4845 : 0x4845_4152_5448
        let total = try Self.totalCalls(seed: seed, big: big)
        #expect(total > 100, "the workload is big enough to be interesting (\(total) calls)")
        var runs = 0
        let tally = MatrixTally()
        for n in 0...total {
            for (m, mode) in Self.modes.enumerated() where Self.runs(crashAfter: n, mode: m) {
                let runSeed = seed &+ UInt64(n) &* 131 &+ UInt64(m)
                let ctx = "seed \(runSeed) crash after call \(n) mode \(mode)"
                try crashRun(seed: runSeed, crashAfter: n, mode: mode, ctx: ctx, tally: tally, big: big)
                runs += 1
            }
        }
        let cells = (total + 1) * Self.modes.count
        #expect(
            Self.everyCell
                ? runs == cells : (runs * 2 >= cells - Self.modes.count && runs * 2 <= cells + Self.modes.count))
        print(
            "crash matrix (\(big ? "multi-KiB records" : "small records")): \(total) calls × \(Self.modes.count) modes, \(runs) of \(cells) cells run\(Self.everyCell ? "" : " (HEARTH_CRASH_MATRIX=full runs every cell)"); torn tails cut \(tally.tornTails), "
                + "stray files removed in \(tally.strays), temp files in \(tally.temps), recovered with a checkpoint \(tally.withCheckpoint), "
                + "lost unsynced acknowledged records \(tally.lostUnsynced)")
        #expect(
            tally.tornTails > 0 && tally.strays > 0 && tally.temps > 0 && tally.withCheckpoint > 0
                && tally.lostUnsynced > 0)
    }

    /// One cell of the matrix: crash, recover, check; crash right after recovery, recover, check;
    /// append more, crash again at a pseudo-random point, recover, check.
    func crashRun(
        seed: UInt64, crashAfter n: Int, mode: SimulatedFileSystem.PowerCutMode, ctx: String,
        tally: MatrixTally, big: Bool
    ) throws {
        let options = Log.Options.test(segmentSize: big ? 24 << 10 : 4096)
        let fs = SimulatedFileSystem(seed: seed)
        let model = AckModel()
        fs.crash(afterCalls: n)
        if let log = try? Log.open(directory: storeDir, fileSystem: fs, options: options) {
            runWorkload(log, matrixSteps(big: big), model)
            try? log.close()
        }
        fs.powerCut(mode: mode)
        // Every other run: a crash during recovery itself (compound failure), then another power cut.
        if n % 2 == 1 {
            fs.crash(afterCalls: Int(seed % 11))
            if let log = try? Log.open(directory: storeDir, fileSystem: fs, options: options) { try? log.close() }
            fs.powerCut(mode: Self.modes[Int((seed / 7) % UInt64(Self.modes.count))])
        }
        // The read-only verifier, run first, must predict exactly what recovery does.
        let predicted = fs.directoryExists(storeDir) ? try Log.verify(directory: storeDir, fileSystem: fs) : nil
        #expect(
            predicted?.damage == nil || predicted!.damage!.isTornTail,
            "crash produced non-tail damage: \(String(describing: predicted?.damage)) — \(ctx)")

        // 1. Recover and check.
        let history: [[UInt8]]
        do {
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: options)
            if let predicted, !predicted.isEmptyStore {
                #expect(log.lastLSN == predicted.lastLSN, "verifier and recovery disagree on the last LSN: \(ctx)")
                let cut = log.recovery.truncatedTail
                if let d = predicted.damage {
                    #expect(
                        cut?.file == d.file && cut?.offset == predicted.segments.last?.validEnd,
                        "verifier and recovery disagree on the cut: \(ctx)")
                } else {
                    #expect(cut == nil, "recovery cut a tail the verifier did not see: \(ctx)")
                }
                #expect(Set(log.recovery.removedStrayFiles) == Set(predicted.strayFiles), "stray files: \(ctx)")
                #expect(Set(log.recovery.removedTempFiles) == Set(predicted.tempFiles), "temp files: \(ctx)")
            }
            history = try recoveredHistory(log)
            checkHistory(history, model, processCrashOnly: mode == .processCrash, ctx)
            // Exactly the old or the new checkpoint generation, never a half-installed one.
            let c = Int(log.checkpoint?.lsn ?? 0)
            #expect(model.checkpointsTried.contains(c) && c >= model.checkpointDone, "checkpoint \(c): \(ctx)")
            if log.recovery.truncatedTail != nil { tally.tornTails += 1 }
            if !log.recovery.removedStrayFiles.isEmpty { tally.strays += 1 }
            if !log.recovery.removedTempFiles.isEmpty { tally.temps += 1 }
            if log.checkpoint != nil { tally.withCheckpoint += 1 }
            if history.count < model.acked { tally.lostUnsynced += 1 }
            #expect(log.lastLSN == LSN(history.count), "lastLSN: \(ctx)")
            // Crash immediately after recovery: nothing recovered may be lost.
            fs.crash(afterCalls: 0)
            try? log.close()
        } catch {
            Issue.record("reopen failed: \(error) — \(ctx)")
            return
        }
        fs.powerCut(mode: .dropAllUnsynced)
        let verify = try Log.verify(directory: storeDir, fileSystem: fs)
        #expect(verify.damage == nil, "verifier after recovery: \(String(describing: verify.damage)) — \(ctx)")

        // 2. Idempotent: same history again; then append more and crash at a later call.
        let model2 = AckModel()
        model2.attempted = history
        model2.acked = history.count
        model2.durable = history.count
        do {
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: options)
            let again = try recoveredHistory(log)
            #expect(again == history, "second recovery differs: \(ctx)")
            fs.crash(afterCalls: Int(seed % 9))
            var steps: [Step] = []
            for k in 0..<4 { steps.append(.append(100 + k, k % 2 == 0 ? .full : .buffered)) }
            runWorkload(log, steps, model2)
            try? log.close()
        } catch {
            Issue.record("second reopen failed: \(error) — \(ctx)")
            return
        }
        let mode2 = Self.modes[Int(seed % UInt64(Self.modes.count))]
        fs.powerCut(mode: mode2)
        do {
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: options)
            let h2 = try recoveredHistory(log)
            checkHistory(h2, model2, processCrashOnly: mode2 == .processCrash, ctx + " / second crash \(mode2)")
            #expect(try log.append([1], type: 1) == LSN(h2.count + 1), "next LSN: \(ctx)")
            try log.close()
        } catch {
            Issue.record("third reopen failed: \(error) — \(ctx)")
        }
    }
}

@Suite struct ConcurrentCrashTests {
    /// 8 threads append concurrently (mixed tiers) while the power is cut at a pseudo-random I/O call:
    /// every `.full`-acknowledged record is recovered with its payload, and every recovered record was
    /// attempted (no phantoms). Thread interleavings vary; the seed fixes crash point and mode.
    @Test func concurrentAppendersSurvivePowerCuts() throws {
        let base: UInt64 = 0xC0C0
        var crashed = 0, durableSeen = 0
        for iteration in 0..<30 {
            let seed = base &+ UInt64(iteration)
            var g = SeededRandom(seed: seed)
            let fs = SimulatedFileSystem(seed: seed)
            let mode = SimulatedFileSystem.PowerCutMode.all[Int(g.next() % 8)]
            let crashAt = 20 + Int(g.next() % 200)
            let ctx = "seed \(seed) crash after \(crashAt) mode \(mode)"
            let attempted = Mutex<Set<[UInt8]>>([])
            let durable = Mutex<[LSN: [UInt8]]>([:])
            do {
                let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
                fs.crash(afterCalls: crashAt)
                onThreads(8) { t in
                    for k in 0..<40 {
                        let p = jsonPayload(t * 1000 + k, seed: seed, extra: 5)
                        attempted.withLock { _ = $0.insert(p) }
                        let tier: Durability = k % 2 == 0 ? .full : .buffered
                        guard let lsn = try? log.append(p, type: UInt8(t), durability: tier) else { return }
                        if tier == .full { durable.withLock { $0[lsn] = p } }
                    }
                }
                try? log.close()
            }
            if fs.hasCrashed { crashed += 1 }
            durableSeen += durable.withLock { $0.count }
            fs.powerCut(mode: mode)
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            let recovered = try readAll(log)
            let byLSN = Dictionary(uniqueKeysWithValues: recovered.map { ($0.lsn, $0.payload) })
            let att = attempted.withLock { $0 }
            for (lsn, p) in durable.withLock({ $0 }) {
                #expect(byLSN[lsn] == p, "acknowledged .full record \(lsn) lost or changed: \(ctx)")
            }
            for r in recovered { #expect(att.contains(r.payload), "phantom record \(r.lsn): \(ctx)") }
            #expect(Set(recovered.map(\.payload)).count == recovered.count, "duplicate: \(ctx)")
            try log.close()
        }
        print(
            "concurrent crashes: \(crashed) of 30 runs crashed mid-workload; \(durableSeen) .full acknowledgements checked"
        )
        #expect(crashed > 20 && durableSeen > 100)
    }
}
