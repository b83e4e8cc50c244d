// Durable writes per second: `connections` clients each writing one put at a time (put → ok)
// for `--seconds`, and the floors they are quoted against: the fdatasync rate of a small append
// in the same file system, and the raw loopback WebSocket echo (Echo.swift).
import Dispatch
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import Synchronization

/// One writes run: acknowledged writes/s, the mean group commit, and CPU µs per acknowledged
/// write of the server's threads (event loops and commit thread) and of the whole process.
func writes(connections: Int) async throws -> (perSecond: Double, batch: Double, serverMicros: Double, processMicros: Double) {
    let before = threadNames()
    let live = try await Live()
    let serverThreads = newThreads(since: before)
    let clients = try (0..<connections).map { _ in try live.client() }
    let acked = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let commits0 = live.runtime.commitCount, writes0 = live.runtime.committedWriteCount
    let cpu0 = cpuSeconds(serverThreads), process0 = processCPUSeconds()
    let start = now()
    let threads = Threads(connections) { i in
        let c = clients[i]
        var n = 1
        while !stop.load(ordering: .relaxed) {
            try! c.send(ClientRequest.put(path: Path(keys: ["w", ChildKey("c\(i)"), ChildKey("k\(n % 100)")]), data: .number(Double(n)), hash: nil).message(number: n))
            guard c.response(n).status == "ok" else { fatalError("write \(n) failed") }
            acked.add(1, ordering: .relaxed)
            n += 1
        }
    }
    try await Task.sleep(for: .seconds(options.seconds))
    stop.store(true, ordering: .relaxed)
    threads.join()
    let elapsed = now() - start
    let cpu = cpuSeconds(serverThreads) - cpu0, process = processCPUSeconds() - process0
    let commits = live.runtime.commitCount - commits0, written = live.runtime.committedWriteCount - writes0
    for c in clients { c.close() }
    try await live.stop()
    let count = Double(max(1, acked.load(ordering: .relaxed)))
    return (count / elapsed, Double(written) / Double(max(1, commits)), 1e6 * cpu / count, 1e6 * process / count)
}

/// fdatasyncs per second of a 128-byte overwrite of zero bytes already written and synced, in
/// the same file system, for `seconds` (at most 3): the store's own pattern, whose log writes
/// zeros ahead of its records (LogCore+Preallocate.swift) so that a group's sync changes no file
/// size. An append's sync (``fsyncRate()``) writes the inode too on this disk.
func fsyncOverwriteRate() -> Double {
    let dir = tempDir("fsync")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let fd = open(dir + "/f", O_CREAT | O_RDWR, 0o600)
    let zeros = [UInt8](repeating: 0, count: 4 << 20)
    _ = zeros.withUnsafeBytes { write(fd, $0.baseAddress, zeros.count) }
    fsync(fd)
    let bytes = [UInt8](repeating: 7, count: 128)
    var n = 0
    let start = now()
    while now() - start < min(options.seconds, 3) && (n + 1) * 128 <= zeros.count {
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, 128, off_t(n * 128)) }
        fdatasync(fd)
        n += 1
    }
    close(fd)
    return Double(n) / (now() - start)
}

/// fsyncs per second of a small append in the same file system (the floor of one durable
/// commit), measured for `seconds` (at most 3).
func fsyncRate() -> Double {
    let dir = tempDir("fsync")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let fd = open(dir + "/f", O_CREAT | O_WRONLY | O_APPEND, 0o600)
    let bytes = [UInt8](repeating: 7, count: 128)
    var n = 0
    let start = now()
    while now() - start < min(options.seconds, 3) {
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, 128) }
        fdatasync(fd)
        n += 1
    }
    close(fd)
    return Double(n) / (now() - start)
}
