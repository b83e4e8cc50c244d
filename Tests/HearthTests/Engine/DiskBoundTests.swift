import Foundation
@_spi(HearthInternals) @testable import Hearth
import HearthTesting
import Testing

/// The cap bounds the bytes on disk at every instant — including while a
/// checkpoint is written beside the old one — not only between commands.
@Suite("The cap bounds the disk at every instant")
struct DiskBoundTests {
    /// Feeds `megabytes` of server data (the feed of a chat: a new child per write, older ones
    /// untracked and prunable) through a store capped at `cap`, on the simulated file system,
    /// and returns the peak bytes in its files and the footprint at the end.
    static func feed(
        cap: Int, megabytes: Int, seed: UInt64, background: Bool = false
    ) throws -> (peak: Int, end: UInt64) {
        let fs = SimulatedFileSystem(seed: seed)
        var options = Store.Options()
        options.fileSystem = fs
        options.cacheSizeBytes = cap
        options.backgroundMaintenance = background
        let store = try Store.open(directory: "/s", options: options)
        var rng = SeededRandom(seed: seed)
        var written = 0
        var i = 0
        while written < megabytes << 20 {
            // 8 KiB values of random words: they compress about 3:1, as chat text does.
            let words = (0..<128).map { _ in
                ["hearth", "offline", "sync", "cache", "write", "query", "listen", "token"][Int(rng.next() % 8)]
                    + String(rng.next() % 10_000)
            }
            let value = String(words.joined(separator: " ").prefix(8192))
            let mixed = i % 10 == 0
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(
                    .string(value), at: Path(keys: ["chat", ChildKey(String(format: "m%07d", i))]))
                if mixed {
                    _ = try b.saveWrite(
                        .set(.string(value)), at: Path(keys: ["outbox", ChildKey(String(format: "w%07d", i))]))
                }
            }
            if mixed, i >= 10 {
                let id = store.pendingWrites().first!.id
                try store.ackWrite(id)
            }
            written += value.utf8.count
            i += 1
        }
        try store.waitUntilLoaded()
        try store.close()
        let end = UInt64(fs.storedBytes)
        print("files at the peak:", fs.filesAtPeak.sorted { $0.key < $1.key })
        return (fs.peakStoredBytes, end)
    }

    @Test(
        "10× the cap fed through a 1 MiB cap, maintenance inline or in the background: the disk never holds more than 1.25 × the cap",
        arguments: [false, true])
    func peakWithinBound(background: Bool) throws {
        let cap = 1 << 20
        let (peak, end) = try Self.feed(cap: cap, megabytes: 10, seed: 7, background: background)
        print(
            "cap \(cap) (background maintenance \(background)): peak \(peak) bytes (\(String(format: "%.2f", Double(peak) / Double(cap)))× the cap), at the end \(end)"
        )
        #expect(end <= UInt64(cap), "the footprint after the run")
        #expect(Double(peak) <= 1.25 * Double(cap), "peak \(peak) bytes is \(Double(peak) / Double(cap))× the cap")
    }
}
