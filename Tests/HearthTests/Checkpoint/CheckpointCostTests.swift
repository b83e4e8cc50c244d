import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog
import HearthTesting

/// Where a checkpoint's time goes, phase by phase, on a cache of realistic data. Runs only
/// with HEARTH_CKPT_BENCH=1 (a measurement, not a test): `HEARTH_CKPT_BENCH=1 swift test -c
/// release --filter CheckpointCost`.
@Suite struct CheckpointCostTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HEARTH_CKPT_BENCH"] == "1"))
    func phases() throws {
        // ~10 MiB raw: 60,000 chat messages in 40 rooms and 5,000 profiles.
        var rng = SeededRandom(seed: 1)
        var state = StoreState()
        let words = ["hey", "ok", "see", "you", "at", "the", "game", "tonight", "lol", "sure", "café", "🎉"]
        for i in 0..<60_000 {
            let text = (0..<(3 + Int(rng.next() % 12))).map { _ in words[Int(rng.next() % 12)] }.joined(separator: " ")
            let node = Node(children: [
                ("author", .string("user\(rng.next() % 100)")), ("text", .string(text)),
                ("ts", .number(Double(1_700_000_000_000 + i))),
            ])
            state.apply(
                .serverOverwrite(
                    path: Path(keys: ["chats", ChildKey("room\(i % 40)"), "messages", ChildKey("m\(100_000 + i)")]),
                    node: node, at: Int64(i)))
        }
        for i in 0..<5000 {
            state.apply(
                .serverOverwrite(
                    path: Path(keys: ["profiles", ChildKey("user\(i)")]),
                    node: Node(children: [("name", .string("User \(i)")), ("age", .number(Double(i % 80)))]),
                    at: Int64(i)))
        }
        let clock = ContinuousClock()
        var t = clock.now
        func lap(_ what: String) { let n = clock.now; print("checkpoint phase \(what): \(n - t)"); t = n }
        let raw = NodeCodec.encodedSize(state.serverCache)
        lap("encodedSize once (\(raw) bytes)")
        _ = NodeCodec.encode(state.serverCache)
        lap("NodeCodec.encode whole cache")
        let entries = state.untracked.entries
        lap("untracked.entries (\(entries.count))")
        let encoder = CheckpointEncoder(compressionLevel: 6)
        var total = 0
        let summary = encoder.encode(state) { total += $0.count }
        lap("CheckpointEncoder.encode (\(summary.chunkCount) chunks, \(total) bytes, level 6)")
        let fast = CheckpointEncoder(compressionLevel: 1)
        total = 0
        _ = fast.encode(state) { total += $0.count }
        lap("CheckpointEncoder.encode at level 1 (\(total) bytes)")
        // The deflate-ahead pipeline (DeflateAhead.swift) against compressing on the walk's
        // thread, alternated, medians of five each: the checkpoint of an idle store, its wall
        // time and the process's CPU time.
        var times: [Int: [Duration]] = [0: [], 4: []]
        var cpu: [Int: [Double]] = [0: [], 4: []]
        for _ in 0..<5 {
            for depth in [0, 4] {
                var encoder = CheckpointEncoder(compressionLevel: 6)
                encoder.deflateAhead = depth
                let start = clock.now
                let cpu0 = Double(Foundation.clock()) / Double(CLOCKS_PER_SEC)
                _ = encoder.encode(state) { _ in }
                cpu[depth, default: []].append(Double(Foundation.clock()) / Double(CLOCKS_PER_SEC) - cpu0)
                times[depth, default: []].append(clock.now - start)
            }
        }
        for depth in [0, 4] {
            print(
                "checkpoint phase deflate-ahead \(depth): median \(times[depth]!.sorted()[2]),"
                    + " process CPU median \(cpu[depth]!.sorted()[2]) s")
        }
        t = clock.now
        let plain = NodeCodec.encode(state.serverCache)
        t = clock.now
        _ = RawDeflate.compress(plain, level: 6)
        lap("RawDeflate level 6 of the raw cache")
        _ = CRC32C.checksum(plain)
        lap("CRC32C of the raw cache")
    }
}
