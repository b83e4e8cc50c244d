// Shared pieces: an in-process `hearth serve` on a loopback port, temporary directories, the
// clock, medians, and a blocking wait.
import Dispatch
import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWireTesting
import NIOPosix
import Synchronization

/// The event loops the raw (floor) clients run on.
let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// Seconds on the monotonic clock.
func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// A new empty directory under the system's temporary directory.
func tempDir(_ name: String) -> String {
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-\(name)-\(UUID().uuidString)").path
    try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    return d
}

/// The median (the mean of the two middle values for an even count).
func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Polls `condition` every millisecond until it holds; false after `timeout` seconds.
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = now() + timeout
    while !condition() {
        if now() > deadline { return false }
        usleep(200)
    }
    return true
}

/// `hearth serve`'s runtime and network server in this process (emulator mode, an
/// its store at full durability in a temporary directory), as ServerBench runs it.
final class LiveServer {
    let store: AuthoritativeStore
    let runtime: ServerRuntime
    let server: NetworkServer
    let dir: String

    init() async throws {
        dir = tempDir("server")
        let opened = try AuthoritativeStore.open(directory: dir)
        store = opened.store
        var c = ServerConfiguration()
        c.emulator = true
        runtime = try ServerRuntime(store: opened, configuration: c, verifier: try await FirebaseTokenVerifier(secret: nil, emulator: true))
        server = try await NetworkServer.start(host: "127.0.0.1", port: 0, runtime: runtime, threads: 1)
    }

    /// The URL a `Database` connects with.
    var url: String { "ws://127.0.0.1:\(server.port)?ns=test" }

    /// A raw protocol client, past the server's hello.
    func rawClient() throws -> WebSocketTestClient {
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

/// A counter other threads bump, with a semaphore-free wait.
final class Counter: Sendable {
    let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.add(n, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
