import Foundation
@_spi(HearthInternals) @testable import Hearth
import HearthTesting
import Testing

/// Writers wait for maintenance only where the disk bound needs it (Store+Queue.swift): once
/// the log since the checkpoint passes the cap's log share plus a sixteenth of the cap — not
/// the checkpoint threshold plus that sixteenth, which for a store well under its cap made a
/// writer faster than its checkpoints wait for every other one.
@Suite("Backpressure waits only where the disk bound needs it")
struct BackpressureTests {
    /// Commits `bytes` of server data in 1 KiB values at `chat/m<i>` from index `start`.
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

    @Test func aWriterUnderTheCapWaitsOnlyPastTheBoundsLogTerm() throws {
        let fs = SimulatedFileSystem(seed: 81)
        var options = Store.Options()
        options.fileSystem = fs
        let cap = 8 << 20
        options.cacheSizeBytes = cap
        options.checkpointMinimumBytes = 4096
        options.durability = .buffered
        options.backgroundMaintenance = true
        let store = try Store.open(directory: "/s", options: options)
        let limit = Store.backpressureLogBytes(cacheSizeBytes: cap)
        #expect(limit == Int(0.2 * Double(cap)) + cap / 16)
        // A checkpoint file's sync takes three seconds: the first checkpoint (due after 4 KiB)
        // runs that long while the writer goes on.
        fs.syncDelayPathContains = ".ckpt"
        fs.syncDelay = .seconds(3)
        // 1.5 MiB of log: past the old trigger (the threshold, at most half the checkpoint,
        // plus cap/16 = 512 KiB) but under the bound's (2.1 MiB). No writer waits.
        var next = try Self.feed(store, from: 0, bytes: 1536 << 10)
        #expect(store.backpressureWaitCount == 0, "a writer waited with the log under the bound's term")
        // Past the bound's term while the checkpoint still runs: the writer waits.
        next = try Self.feed(store, from: next, bytes: 1536 << 10)
        #expect(store.backpressureWaitCount > 0, "the log outran the checkpoints past the bound's term")
        fs.syncDelay = .zero
        try store.close()
        let again = try Store.open(directory: "/s", options: options)
        let last = try again.serverValue(at: Path(keys: ["chat", ChildKey(String(format: "m%07d", next - 1))]))
        #expect(last == .string(String(repeating: "\((next - 1) % 10)", count: 1024)))
        try again.close()
    }
}
