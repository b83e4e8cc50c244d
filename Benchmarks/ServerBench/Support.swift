// What every ServerBench figure shares: the command-line options, an in-process server like
// `hearth serve`'s, percentiles and medians, the machine's load, and the results written with
// `--json PATH` for `scripts/sync_chart.py`.
import Dispatch
import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOPosix
import Synchronization

/// The command line: `--seconds S` (throughput runs), `--runs N` (repetitions of each row),
/// `--rounds N` (fan-out rounds per run; idle writes time 5 × N puts), `--only a,b` (writes,
/// fanout, hash, restart, memory, memory-data, idlewrites, mixed), `--connections`, `--listeners`, `--idle`,
/// `--idle-writes`, `--mixed`, `--data-mb` (comma-separated counts), `--mixed-rate` (writes per
/// second per connection in the mixed workload), `--json PATH`, `--hearth PATH`. `memory-data`
/// (minutes per GB) runs only when `--only` names it.
struct Options: Sendable {
    let seconds: Double
    let runs: Int
    let rounds: Int
    let only: Set<String>?
    let connections: [Int]
    let listeners: [Int]
    let idle: [Int]
    let idleWriters: [Int]
    let mixed: [Int]
    let dataMegabytes: [Int]
    let mixedRate: Double
    let json: String?
    let hearth: String

    init(_ args: [String]) {
        func option(_ name: String) -> String? {
            guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
            return args[i + 1]
        }
        func counts(_ name: String, _ fallback: [Int]) -> [Int] {
            option(name).map { $0.split(separator: ",").compactMap { Int($0) } } ?? fallback
        }
        seconds = option("--seconds").flatMap(Double.init) ?? 5
        runs = option("--runs").flatMap(Int.init) ?? 3
        rounds = option("--rounds").flatMap(Int.init) ?? 200
        only = option("--only").map { Set($0.split(separator: ",").map(String.init)) }
        connections = counts("--connections", [1, 16, 64])
        listeners = counts("--listeners", [10, 100, 1000])
        idle = counts("--idle", [100, 1000, 5000])
        idleWriters = counts("--idle-writes", [1000, 10000])
        mixed = counts("--mixed", [1000])
        dataMegabytes = counts("--data-mb", [64, 256])
        mixedRate = option("--mixed-rate").flatMap(Double.init) ?? 1
        json = option("--json")
        // The root package's release build, or this package's (`swift build -c release --product hearth` here).
        hearth = option("--hearth") ?? ["../.build/release/hearth", ".build/release/hearth"]
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "../.build/release/hearth"
    }

    func wants(_ part: String) -> Bool { only?.contains(part) ?? true }
}

let options = Options(CommandLine.arguments)
let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let clientLoops = Array(clientGroup.makeIterator())
let nextLoop = Atomic<Int>(0)

/// The client event loop for the next connection, round robin. `WebSocketTestClient` given the
/// whole group calls `next()` twice per connection (once for its upgrade promise, once through
/// `ClientBootstrap`), so with two loops every connection landed on the same one and a single
/// thread read every client socket; handing it one loop spreads the clients over both.
func clientLoop() -> any EventLoop {
    clientLoops[nextLoop.add(1, ordering: .relaxed).oldValue % clientLoops.count]
}

/// The local address the bench's next client connection is bound to: a new one of 127.0.0.2 …
/// 127.0.0.251 for every 20,000 connections. One address has about 28,000 ephemeral ports
/// (`net.ipv4.ip_local_port_range`), fewer while an earlier run's sockets sit in `TIME_WAIT`
/// (a minute); each loopback address has its own, so counting across runs, from a random
/// address in each process, keeps a run off the ports the last one (or the last process) left
/// waiting.
func sourceAddress() -> String {
    "127.0.0.\(2 + (connectionsOpened.add(1, ordering: .relaxed).oldValue / 20_000) % 250)"
}
let connectionsOpened = Atomic<Int>(Int.random(in: 0..<250) * 20_000)

func tempDir(_ name: String) -> String {
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("serverbench-\(name)-\(UUID().uuidString)").path
    try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    return d
}

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s[min(s.count - 1, Int(Double(s.count - 1) * p + 0.5))]
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Prints a line unbuffered (progress shows through `tee`).
func report(_ s: String) {
    FileHandle.standardOutput.write(Data((s + "\n").utf8))
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), printed with every run.
func loadAverage() -> [Double] {
    guard let s = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return [] }
    return s.split(separator: " ").prefix(3).compactMap { Double($0) }
}

func loadText(_ load: [Double]) -> String { "load " + load.map { String(format: "%.2f", $0) }.joined(separator: " ") }

/// An in-process server: the same `ServerRuntime` and `NetworkServer` (2 threads) as
/// `hearth serve --emulator`, on its store (`AuthoritativeStore`) in the temp directory.
final class Live {
    let store: AuthoritativeStore
    let runtime: ServerRuntime
    let server: NetworkServer
    let dir: String
    init() async throws {
        dir = tempDir("db")
        let opened = try AuthoritativeStore.open(directory: dir)
        store = opened.store
        var c = ServerConfiguration()
        c.emulator = true
        runtime = try ServerRuntime(store: opened, configuration: c, verifier: try await FirebaseTokenVerifier(secret: nil, emulator: true))
        server = try await NetworkServer.start(host: "127.0.0.1", port: 0, runtime: runtime, threads: 2)
    }
    func client() throws -> WebSocketTestClient {
        let c = try WebSocketTestClient(port: server.port, group: clientLoop())
        _ = c.receive()  // hello
        return c
    }
    func stop() async throws {
        try await server.stop()
        try store.close()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// Runs `body(i)` for i in 0..<count, each on its own thread, until `body` returns; `join()`
/// waits for all. (Blocking loops on GCD's global queue get only as many threads as it grants —
/// about 35 here, fewer than 64 — and starve the task that would stop them.)
struct Threads {
    let done = DispatchGroup()

    init(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        for i in 0..<count {
            done.enter()
            let group = done
            let t = Thread { body(i); group.leave() }
            t.stackSize = 1 << 20
            t.start()
        }
    }

    func join() { done.wait() }
}
