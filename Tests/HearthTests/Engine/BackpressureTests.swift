import Foundation
@_spi(HearthInternals) @testable import Hearth
import HearthTesting
import Synchronization
import Testing

/// Writers wait for maintenance only where the disk bound needs it (Backpressure.swift): once
/// the log since the checkpoint passes the cap's log share plus a sixteenth of the cap, and
/// the footprint it makes with the checkpoint has grown as far as the bound allows or the next
/// checkpoint would no longer fit beside it — not at the checkpoint threshold plus that
/// sixteenth, which for a store well under its cap made a writer faster than its checkpoints
/// wait for every other one.
@Suite("Backpressure waits only where the disk bound needs it")
struct BackpressureTests {
    static let cap = 8 << 20

    /// Commits `bytes` of server data in 1 KiB values at `chat/m<i>` from index `start`, each
    /// one digit repeated (they compress to almost nothing).
    static func feed(_ store: Store, from start: Int, bytes: Int) throws -> Int {
        var i = start
        var written = 0
        while written < bytes {
            let value = String(repeating: "\(i % 10)", count: 1024)
            try store.applyServerOverwrite(
                .string(value), at: Path(keys: ["chat", ChildKey(String(format: "m%07d", i))]))
            written += 1024
            i += 1
        }
        return i
    }

    static func options(_ fs: SimulatedFileSystem) -> Store.Options {
        var options = Store.Options()
        options.fileSystem = fs
        options.cacheSizeBytes = cap
        options.checkpointMinimumBytes = 4096
        options.durability = .buffered
        options.backgroundMaintenance = true
        return options
    }

    /// Closes `store` with syncs at full speed again, checks that its files stayed within the
    /// disk bound (1.25× the cap) throughout, and reopens it, checking the last value fed.
    static func closeAndReopen(
        _ store: Store, _ fs: SimulatedFileSystem, _ options: Store.Options, lastFed: Int
    ) throws -> Store {
        fs.releaseSyncs()
        try store.close()
        #expect(Double(fs.peakStoredBytes) <= 1.25 * Double(cap), "peak \(fs.peakStoredBytes) bytes")
        let again = try Store.open(directory: "/s", options: options)
        let last = try again.serverValue(at: Path(keys: ["chat", ChildKey(String(format: "m%07d", lastFed))]))
        #expect(last == .string(String(repeating: "\(lastFed % 10)", count: 1024)))
        return again
    }

    /// Feeds `bytes` as ``feed(_:from:bytes:)`` does while the file system holds checkpoint
    /// syncs, and lets them go once a writer waits (or the feed ends without waiting): a
    /// writer that waits would otherwise wait for ever.
    static func feedReleasingOnWait(
        _ store: Store, _ fs: SimulatedFileSystem, from start: Int, bytes: Int
    ) throws -> Int {
        let fed = Atomic<Bool>(false)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            while store.backpressureWaitCount == 0 && !fed.load(ordering: .relaxed) { usleep(1_000) }
            fs.releaseSyncs()
            released.signal()
        }
        defer {
            fed.store(true, ordering: .relaxed)
            released.wait()
        }
        return try feed(store, from: start, bytes: bytes)
    }

    @Test func theRuleNeverWaitsBeforeTheLogTermAndKeepsTheBoundAfterIt() {
        let k = Self.cap
        let term = Store.backpressureLogBytes(cacheSizeBytes: k)
        #expect(term == Int(0.1 * Double(k)) + k / 16)
        let logs = stride(from: 0, through: k + k / 4, by: k / 256)
        for checkpoint in stride(from: 0, through: Int(0.85 * Double(k)), by: k / 64) {
            for ratio in [0, 0.05, 0.35, 0.75, 1, 1.5] {
                var waited = false
                for log in logs {
                    let wait = Store.writersWait(
                        log: log, checkpoint: UInt64(checkpoint), ratio: ratio, cacheSizeBytes: k)
                    if log <= term { #expect(!wait, "waited at \(log) of log, under the log term") }
                    // Once it waits, more log does not stop it.
                    if waited { #expect(wait, "stopped waiting at \(log) of log, checkpoint \(checkpoint)") }
                    waited = waited || wait
                    guard !wait && log > term else { continue }
                    // Past the log term without waiting: the checkpoint and log stay within the
                    // disk bound's 1.0125 K, and the next checkpoint's new file, estimated as the
                    // log at the cache's ratio, still fits beside the footprint under the planned
                    // peak.
                    let c = Double(checkpoint)
                    let l = Double(log)
                    let kd = Double(k)
                    #expect(c + l <= 1.0125 * kd)
                    #expect(c + l + kd / 64 + kd / 32 + min(1, ratio) * l <= 1.1 * kd)
                }
            }
        }
        // Each of the two conditions binds somewhere: an empty checkpoint whose log compresses
        // to nothing waits at 1.0125 K; a checkpoint of 0.8 K waits just past the log term.
        let justUnder = Int(1.0125 * Double(k)) - 1024
        #expect(!Store.writersWait(log: justUnder, checkpoint: 0, ratio: 0, cacheSizeBytes: k))
        #expect(Store.writersWait(log: justUnder + 2048, checkpoint: 0, ratio: 0, cacheSizeBytes: k))
        let pastTerm = term + 1024
        #expect(Store.writersWait(log: pastTerm, checkpoint: UInt64(0.8 * Double(k)), ratio: 0.75, cacheSizeBytes: k))
        #expect(!Store.writersWait(log: pastTerm, checkpoint: UInt64(0.5 * Double(k)), ratio: 0.75, cacheSizeBytes: k))
    }

    @Test func aSmallStoreWaitsOnlyOnceItsFootprintReachesTheBound() throws {
        let fs = SimulatedFileSystem(seed: 81)
        let options = Self.options(fs)
        let store = try Store.open(directory: "/s", options: options)
        // A checkpoint file's sync is held: the first checkpoint (due after 4 KiB) runs while
        // the writer goes on, until a writer waits for it.
        fs.syncDelayPathContains = ".ckpt"
        fs.holdSyncs()
        // 1 MiB of log: past a trigger at the threshold (the threshold, at most half the checkpoint,
        // plus cap/16 = 512 KiB) but under the log term (1.3 MiB). No writer waits.
        var next = try Self.feed(store, from: 0, bytes: 1 << 20)
        #expect(store.backpressureWaitCount == 0, "a writer waited with the log under the bound's term")
        // 6 MiB: past the log term, but the checkpoint is small and the log compresses to
        // almost nothing, so the footprint is far from the bound. Writers waited here when the
        // log term alone decided.
        next = try Self.feed(store, from: next, bytes: 5 << 20)
        #expect(store.backpressureWaitCount == 0, "a writer waited with the footprint far under the bound")
        // Past 1.0125 of the cap while the checkpoint still runs: the writer waits.
        next = try Self.feedReleasingOnWait(store, fs, from: next, bytes: 3 << 20)
        #expect(store.backpressureWaitCount > 0, "the log outran the checkpoints past the bound")
        try Self.closeAndReopen(store, fs, options, lastFed: next - 1).close()
    }

    @Test func aStoreWithALargeCheckpointWaitsPastTheLogTerm() throws {
        let fs = SimulatedFileSystem(seed: 82)
        let options = Self.options(fs)
        // ~3.3 MiB of values that hardly compress (random letters and digits), checkpointed at
        // close: a checkpoint of about 0.3 of the cap.
        var rng = SeededRandom(seed: 7)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var store = try Store.open(directory: "/s", options: options)
        for i in 0..<3300 {
            let value = String((0..<1024).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
            try store.applyServerOverwrite(
                .string(value), at: Path(keys: ["old", ChildKey(String(format: "r%05d", i))]))
        }
        try store.close()
        store = try Store.open(directory: "/s", options: options)
        let checkpoint = store.core.withLock { $0.checkpointBodyBytes }
        #expect(checkpoint > UInt64(0.25 * Double(Self.cap)) && checkpoint < UInt64(0.4 * Double(Self.cap)))
        fs.syncDelayPathContains = ".ckpt"
        fs.holdSyncs()
        var next = try Self.feed(store, from: 0, bytes: 1 << 20)
        #expect(store.backpressureWaitCount == 0, "a writer waited with the log under the bound's term")
        // 4 MiB: past the log term; the checkpoint and log are at 0.75–0.9 of the cap, under
        // the bound's 1.0125, but the next checkpoint's new file (the log at the cache's ratio)
        // would not fit beside them without pruning. The writer waits.
        next = try Self.feedReleasingOnWait(store, fs, from: next, bytes: 3 << 20)
        #expect(store.backpressureWaitCount > 0, "the next checkpoint would not fit, yet no writer waited")
        let again = try Self.closeAndReopen(store, fs, options, lastFed: next - 1)
        #expect(!(try again.serverValue(at: Path(keys: ["old", "r00000"]))).isEmpty)
        try again.close()
    }
}
