// Throughput figures for the closing note. Skipped unless HEARTH_LOG_BENCH=1; run in release:
//   HEARTH_LOG_BENCH=1 swift test -c release --filter LogThroughput
// Measures appends/s for 1 and 16 writers under each tier on the real file system, the raw
// append+fdatasync rate of the same bytes through the same seam, and the compression ratio.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wraps a file system and counts file syncs (to show records per fsync on the real device).
final class SyncCountingFileSystem: FileSystem {
    let base: any FileSystem
    let syncs = Atomic<Int>(0)
    init(_ base: any FileSystem) { self.base = base }

    final class File: StoreFile {
        let f: any StoreFile
        let owner: SyncCountingFileSystem
        init(_ f: any StoreFile, _ owner: SyncCountingFileSystem) { self.f = f; self.owner = owner }
        var path: String { f.path }
        func read(at offset: UInt64, count: Int) throws(FileSystemError) -> [UInt8] {
            try f.read(at: offset, count: count)
        }
        func write(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError) { try f.write(bytes, at: offset) }
        func size() throws(FileSystemError) -> UInt64 { try f.size() }
        func truncate(to size: UInt64) throws(FileSystemError) { try f.truncate(to: size) }
        func sync() throws(FileSystemError) { owner.syncs.add(1, ordering: .relaxed); try f.sync() }
        func close() throws(FileSystemError) { try f.close() }
    }

    func createDirectory(_ path: String) throws(FileSystemError) { try base.createDirectory(path) }
    func directoryExists(_ path: String) -> Bool { base.directoryExists(path) }
    func listDirectory(_ path: String) throws(FileSystemError) -> [String] { try base.listDirectory(path) }
    func open(_ path: String, mode: OpenMode) throws(FileSystemError) -> any StoreFile {
        File(try base.open(path, mode: mode), self)
    }
    func rename(from: String, to: String) throws(FileSystemError) { try base.rename(from: from, to: to) }
    func unlink(_ path: String) throws(FileSystemError) { try base.unlink(path) }
    func syncDirectory(_ path: String) throws(FileSystemError) { try base.syncDirectory(path) }
    func lockFile(_ path: String) throws(FileSystemError) -> any StoreLock { try base.lockFile(path) }
    func randomUInt64() -> UInt64 { base.randomUInt64() }
}

let benchEnabled = getenv("HEARTH_LOG_BENCH").map { String(cString: $0) == "1" } ?? false

@Suite(.serialized, .enabled(if: benchEnabled)) struct LogThroughput {
    static let seconds = 1.5
    static let runs = 3

    func tempDir(_ tag: String) -> String {
        "/tmp/hearth-bench-\(tag)-\(UInt64.random(in: 0 ... UInt64.max))"
    }

    /// Appends/s with `writers` threads under `tier` for `seconds`.
    func appendRate(writers: Int, tier: Durability) throws -> (rate: Double, recordsPerSync: Double) {
        let dir = tempDir("log")
        defer { removeTree(dir) }
        var o = Log.Options()
        o.durability = tier
        let fs = SyncCountingFileSystem(POSIXFileSystem())
        let log = try Log.open(directory: dir, fileSystem: fs, options: o)
        let syncsBefore = fs.syncs.load(ordering: .relaxed)
        let payloads = (0..<256).map { jsonPayload($0) }
        let count = Atomic<Int>(0)
        let start = monotonicNanos()
        let deadline = start + UInt64(Self.seconds * 1e9)
        onThreads(writers) { t in
            var k = 0
            while monotonicNanos() < deadline && k < 5_000_000 {
                _ = try? log.append(payloads[(t * 31 + k) % payloads.count], type: 1)
                k += 1
            }
            count.add(k, ordering: .relaxed)
        }
        let elapsed = Double(monotonicNanos() - start) / 1e9
        let syncs = fs.syncs.load(ordering: .relaxed) - syncsBefore
        try log.close()
        let n = Double(count.load(ordering: .relaxed))
        return (n / elapsed, n / Double(max(1, syncs)))
    }

    /// The raw rate of write+fdatasync of one framed record's bytes, appended, through the same seam.
    func rawSyncRate(recordBytes: Int) throws -> Double {
        let dir = tempDir("raw")
        defer { removeTree(dir) }
        let fs = POSIXFileSystem()
        try fs.createDirectory(dir)
        let f = try fs.open(dir + "/raw", mode: .createTruncate)
        let bytes = [UInt8](repeating: 0x5A, count: recordBytes)
        let start = monotonicNanos()
        let deadline = start + UInt64(Self.seconds * 1e9)
        var n = 0
        var offset: UInt64 = 0
        while monotonicNanos() < deadline && n < 5_000_000 {
            try f.write(bytes, at: offset)
            try f.sync()
            offset += UInt64(bytes.count)
            n += 1
        }
        let elapsed = Double(monotonicNanos() - start) / 1e9
        try f.close()
        return Double(n) / elapsed
    }

    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    @Test func figures() throws {
        // Compression ratio on JSON-like payloads: per record, as the log stores them.
        let d = Deflater(level: 6)
        var raw = 0, stored = 0
        for i in 0..<5000 {
            let p = jsonPayload(i)
            raw += p.count
            stored += d.compress(p)?.count ?? p.count
        }
        let avgRaw = raw / 5000
        let framed = Layout.aligned(Layout.recordHeaderSize + stored / 5000)
        print(
            "compression: \(raw) raw bytes -> \(stored) stored (ratio \(Double(stored) / Double(raw)), mean raw record \(avgRaw) B)"
        )
        var bigRaw = 0, bigStored = 0
        for i in 0..<500 {
            let p = jsonPayload(i, extra: 40)
            bigRaw += p.count
            bigStored += d.compress(p)?.count ?? p.count
        }
        print("compression (larger records, mean \(bigRaw / 500) B): ratio \(Double(bigStored) / Double(bigRaw))")

        let rawRate = median(try (0..<Self.runs).map { _ in try rawSyncRate(recordBytes: framed) })
        print("raw write+fdatasync of \(framed) B: \(Int(rawRate)) /s (median of \(Self.runs))")
        for tier in [Durability.full, .batched(interval: .milliseconds(10)), .buffered] {
            for writers in [1, 16] {
                let results = try (0..<Self.runs).map { _ in try appendRate(writers: writers, tier: tier) }
                let rate = median(results.map(\.rate))
                let perSync = median(results.map(\.recordsPerSync))
                print(
                    "append \(tier) writers=\(writers): \(Int(rate)) /s, \(Int(perSync)) records per fsync (medians of \(Self.runs))"
                )
            }
        }
    }
}
