// The server's figures (issue 12): durable writes per second from 1 and 64 connections against
// the machine's floor (fsync rate × the measured group-commit batch; raw loopback WebSocket
// echo), fan-out latency to 100 listeners, the bytes a matching-hash listen costs on a 10 MiB
// location, and the time from `hearth serve` process start to accepting connections over a
// 100 MiB database. Run: `swift run -c release ServerBench [--hearth PATH] [--seconds S]`.
import Dispatch
import Foundation
import Hearth
import HearthServer
import HearthWire
import HearthWireTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

let args = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}
let seconds = Double(option("--seconds") ?? "5")!
let hearthBinary = option("--hearth") ?? "../.build/release/hearth"
let only = option("--only")
let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)

func tempDir(_ name: String) -> String {
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("serverbench-\(name)-\(UUID().uuidString)").path
    try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    return d
}

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s[min(s.count - 1, Int(Double(s.count - 1) * p + 0.5))]
}

func report(_ s: String) { print(s) }

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

final class Live {
    let store: Store
    let runtime: ServerRuntime
    let server: NetworkServer
    let dir: String
    init() async throws {
        dir = tempDir("db")
        var o = Store.Options()
        o.authoritative = true
        o.segmentSize = 16 << 20
        o.checkpointMinimumBytes = 16 << 20
        store = try Store.open(directory: dir, options: o)
        var c = ServerCore.Configuration()
        c.emulator = true
        runtime = try ServerRuntime(store: store, configuration: c, verifier: try await FirebaseTokenVerifier(secret: nil, emulator: true))
        server = try await NetworkServer.start(host: "127.0.0.1", port: 0, runtime: runtime, threads: 2)
    }
    func client() throws -> WebSocketTestClient {
        let c = try WebSocketTestClient(port: server.port, group: clientGroup)
        _ = c.receive()  // hello
        return c
    }
    func stop() async throws {
        try await server.stop()
        try store.close()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

// MARK: - Durable writes per second

func writes(connections: Int) async throws -> (perSecond: Double, batch: Double) {
    let live = try await Live()
    let clients = try (0..<connections).map { _ in try live.client() }
    let acked = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let commits0 = live.runtime.commitCount, writes0 = live.runtime.committedWriteCount
    let group = DispatchGroup()
    let start = now()
    for (i, c) in clients.enumerated() {
        DispatchQueue.global().async(group: group) {
            var n = 1
            while !stop.load(ordering: .relaxed) {
                try! c.send(ClientRequest.put(path: Path(keys: ["w", ChildKey("c\(i)"), ChildKey("k\(n % 100)")]), data: .number(Double(n)), hash: nil).message(number: n))
                guard c.response(n).status == "ok" else { fatalError("write \(n) failed") }
                acked.add(1, ordering: .relaxed)
                n += 1
            }
        }
    }
    try await Task.sleep(for: .seconds(seconds))
    stop.store(true, ordering: .relaxed)
    group.wait()
    let elapsed = now() - start
    let commits = live.runtime.commitCount - commits0, written = live.runtime.committedWriteCount - writes0
    for c in clients { c.close() }
    try await live.stop()
    return (Double(acked.load(ordering: .relaxed)) / elapsed, Double(written) / Double(max(1, commits)))
}

/// fsyncs per second of a small append in the same file system (the floor of one durable
/// commit), measured for `seconds`.
func fsyncRate() -> Double {
    let dir = tempDir("fsync")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let fd = open(dir + "/f", O_CREAT | O_WRONLY | O_APPEND, 0o600)
    let bytes = [UInt8](repeating: 7, count: 128)
    var n = 0
    let start = now()
    while now() - start < min(seconds, 3) {
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, 128) }
        fdatasync(fd)
        n += 1
    }
    close(fd)
    return Double(n) / (now() - start)
}

// MARK: - Raw loopback WebSocket echo (the network floor)

final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.opcode == .text else { return }
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: frame.unmaskedData)), promise: nil)
    }
}

func echoRoundTrips(connections: Int) async throws -> Double {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let upgrader = NIOWebSocketServerUpgrader(
        shouldUpgrade: { ch, _ in ch.eventLoop.makeSucceededFuture(HTTPHeaders()) },
        upgradePipelineHandler: { ch, _ in ch.eventLoop.makeCompletedFuture { try ch.pipeline.syncOperations.addHandler(EchoHandler()) } })
    let channel = try await ServerBootstrap(group: group)
        .childChannelInitializer { ch in
            ch.eventLoop.makeCompletedFuture {
                try ch.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
        }
        .bind(host: "127.0.0.1", port: 0).get()
    let port = channel.localAddress!.port!
    let clients = try (0..<connections).map { _ in try WebSocketTestClient(port: port, group: clientGroup, path: "/") }
    let count = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let g = DispatchGroup()
    let message = ClientRequest.put(path: "w/c0/k1", data: 1, hash: nil).message(number: 1)
    let start = now()
    for c in clients {
        DispatchQueue.global().async(group: g) {
            while !stop.load(ordering: .relaxed) {
                try! c.sendFrame(message)
                guard c.inbox.next(timeout: 5) != nil else { fatalError("echo lost") }
                count.add(1, ordering: .relaxed)
            }
        }
    }
    try await Task.sleep(for: .seconds(min(seconds, 3)))
    stop.store(true, ordering: .relaxed)
    g.wait()
    let rate = Double(count.load(ordering: .relaxed)) / (now() - start)
    for c in clients { c.close() }
    try await channel.close()
    try await group.shutdownGracefully()
    return rate
}

// MARK: - Fan-out

func fanOut(listeners: Int, rounds: Int) async throws -> (p50: Double, p99: Double) {
    let live = try await Live()
    let watchers = try (0..<listeners).map { _ in try live.client() }
    for w in watchers {
        try w.send(ClientRequest.listen(path: "fan", query: .default, tag: nil, hash: "").message(number: 1))
        _ = w.response(1)
    }
    let writer = try live.client()
    var latencies: [Double] = []
    for r in 1...rounds {
        let t0 = now()
        try writer.send(ClientRequest.put(path: "fan/x", data: .number(Double(r)), hash: nil).message(number: r))
        let last = Mutex<Double>(0)
        DispatchQueue.concurrentPerform(iterations: watchers.count) { i in
            guard watchers[i].receive(timeout: 10) != nil else { fatalError("push lost") }
            let t = now()
            last.withLock { $0 = max($0, t) }
        }
        latencies.append((last.withLock { $0 } - t0) * 1000)
        _ = writer.response(r)
    }
    for w in watchers { w.close() }
    writer.close()
    try await live.stop()
    return (percentile(latencies, 0.5), percentile(latencies, 0.99))
}

// MARK: - Matching hash on 10 MiB

func hashListen() async throws -> (withoutHash: Int, withHash: Int, dataBytes: Int) {
    let live = try await Live()
    let filler = String(repeating: "x", count: 1000)
    var children: [(Path, JSONValue)] = []
    for i in 0..<10_240 { children.append((Path(keys: [ChildKey(String(format: "c%05d", i))]), .string(filler))) }
    let w = try live.client()
    for chunk in stride(from: 0, to: children.count, by: 1024) {
        try w.send(ClientRequest.merge(path: "big", data: Array(children[chunk..<min(children.count, chunk + 1024)])).message(number: chunk + 1))
        _ = w.response(chunk + 1)
    }
    var data = Node.empty
    for (p, v) in children { data = data.updating(p, with: try Node(json: v)) }
    let first = try live.client()
    let before1 = first.inbox.bytes.load(ordering: .relaxed)
    try first.send(ClientRequest.listen(path: "big", query: .default, tag: nil, hash: "").message(number: 1))
    _ = first.response(1, timeout: 30)
    let without = first.inbox.bytes.load(ordering: .relaxed) - before1
    let second = try live.client()
    let before2 = second.inbox.bytes.load(ordering: .relaxed)
    try second.send(ClientRequest.listen(path: "big", query: .default, tag: nil, hash: data.hash).message(number: 1))
    _ = second.response(1)
    let with = second.inbox.bytes.load(ordering: .relaxed) - before2
    w.close(); first.close(); second.close()
    try await live.stop()
    return (without, with, data.exportJSONString().utf8.count)
}

// MARK: - Restart of a process over 100 MiB

func restart(megabytes: Int, runs: Int) throws -> [Double] {
    let dir = tempDir("restart")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var o = Store.Options()
    o.authoritative = true
    o.segmentSize = 16 << 20
    o.checkpointMinimumBytes = 16 << 20
    let store = try Store.open(directory: dir + "/db", options: o)
    // Random letters (they compress to about 60%), so the database is N MiB as JSON, written
    // in 1 MiB commits of 256 strings of 4 KiB.
    var rng = SystemRandomNumberGenerator()
    for chunk in 0..<megabytes {
        var kids: [ChildUpdate] = []
        for i in 0..<256 {
            var bytes = [UInt8](repeating: 0, count: 4096)
            for j in 0..<4096 { bytes[j] = UInt8(97 + rng.next() % 26) }
            kids.append(ChildUpdate(path: Path(keys: [ChildKey(String(format: "m%04d", chunk)), ChildKey(String(format: "k%03d", i))]), node: .string(String(decoding: bytes, as: UTF8.self))))
        }
        try store.applyServerMerge(kids, at: "data", durability: .buffered)
    }
    try store.compact()
    let stats = try store.stats()
    report("restart: database of \(megabytes) MiB of strings, \(stats.footprintBytes) bytes on disk")
    try store.close()
    var times: [Double] = []
    for _ in 0..<runs {
        let portFile = dir + "/port"
        try? FileManager.default.removeItem(atPath: portFile)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: hearthBinary)
        p.arguments = ["serve", dir + "/db", "--port", "0", "--port-file", portFile, "--emulator"]
        p.standardError = FileHandle.nullDevice
        let t0 = now()
        try p.run()
        while !FileManager.default.fileExists(atPath: portFile) { usleep(500) }
        // Accepting: a TCP connect succeeds.
        let port = Int(try String(contentsOfFile: portFile, encoding: .utf8))!
        let c = try WebSocketTestClient(port: port, group: clientGroup)
        _ = c.receive()
        times.append(now() - t0)
        c.close()
        p.terminate()
        p.waitUntilExit()
    }
    return times
}

// MARK: - Run

report("ServerBench: \(seconds) s per throughput run, loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores")
if only == nil || only == "writes" {
    let fsync = fsyncRate()
    report(String(format: "floor: fdatasync %.0f/s", fsync))
    for c in [1, 64] {
        let echo = try await echoRoundTrips(connections: c)
        let (rate, batch) = try await writes(connections: c)
        report(String(format: "writes, %2d connection(s): %.0f acknowledged durable writes/s, mean group commit %.1f writes; floor fsync×batch %.0f/s; raw WebSocket echo %.0f round trips/s",
                      c, rate, batch, fsync * batch, echo))
    }
}
if only == nil || only == "fanout" {
    let (p50, p99) = try await fanOut(listeners: 100, rounds: 200)
    report(String(format: "fan-out to 100 listening connections: p50 %.2f ms, p99 %.2f ms (p sent → last d received)", p50, p99))
}
if only == nil || only == "hash" {
    let (without, with, data) = try await hashListen()
    report("listen on a 10 MiB location (\(data) bytes as JSON): \(without) bytes received without a hash, \(with) with the matching hash")
}
if only == nil || only == "restart" {
    if FileManager.default.isExecutableFile(atPath: hearthBinary) {
        let times = try restart(megabytes: 100, runs: 3)
        report(String(format: "restart over 100 MiB: process start → accepting connections %@ s (median %.2f s)",
                      times.map { String(format: "%.2f", $0) }.joined(separator: ", "), percentile(times, 0.5)))
    } else {
        report("restart: skipped, no hearth binary at \(hearthBinary) (build it with `swift build -c release` in the root, or pass --hearth)")
    }
}
try await clientGroup.shutdownGracefully()
