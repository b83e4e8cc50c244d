import Foundation
@_spi(HearthInternals) import Hearth
@testable import HearthDatabase
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The test server's store, and the data its runtime serves: every acknowledged write is in it.
struct ServedStore {
    let store: AuthoritativeStore
    let runtime: ServerRuntime

    /// The data at `path` as the server serves it now.
    func value(at path: Path) throws -> Node { runtime.servedValue(at: path) }

    /// The server's data at `path` (the client store's name for it).
    func serverValue(at path: Path) throws -> Node { runtime.servedValue(at: path) }

    func close() throws { try store.close() }
}

/// `hearth serve`'s core on a loopback port over a store in a temporary directory.
final class TransportTestServer {
    let directory: String
    let store: ServedStore
    let runtime: ServerRuntime
    let server: NetworkServer

    /// A server; with `redirects`, a front that sends those namespaces' clients elsewhere and
    /// serves every other namespace from its one store.
    ///
    /// `appCheckKey`: App Check enforced, with tokens signed by that key.
    init(redirects: Redirects = Redirects(), appCheckKey: String? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("transport-\(UUID().uuidString)").path
        let opened = try AuthoritativeStore.open(directory: directory)
        let storeOnly = opened.store
        var configuration = ServerCore.Configuration()
        configuration.emulator = true
        configuration.enforcesAppCheck = appCheckKey != nil
        var appCheck: AppCheckVerifier?
        if let appCheckKey { appCheck = try await AppCheckVerifier(key: appCheckKey) }
        runtime = try ServerRuntime(
            store: opened, configuration: configuration,
            verifier: try await FirebaseTokenVerifier(secret: String(repeating: "k", count: 32), emulator: true),
            appCheckVerifier: appCheck)
        store = ServedStore(store: storeOnly, runtime: runtime)
        if redirects.isEmpty {
            server = try await NetworkServer.start(host: "127.0.0.1", port: 0, runtime: runtime, threads: 1)
        } else {
            let runtime = self.runtime
            let databases = Databases(primary: runtime, redirects: redirects) { _ in runtime }
            server = try await NetworkServer.start(host: "127.0.0.1", port: 0, databases: databases, threads: 1)
        }
    }

    var endpoint: ServerEndpoint {
        ServerEndpoint(secure: false, host: "127.0.0.1", port: server.port, namespace: "test")
    }

    func stop() async throws {
        try await server.stop()
        try store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Collects a connection's events, checking they arrive one at a time.
final class EventRecorder: Sendable {
    private let events = Mutex<[TransportEvent]>([])
    private let cursor = Mutex<Int>(0)
    private let inside = Atomic<Int>(0)
    /// How many times a call began while another was still running.
    let overlaps = Atomic<Int>(0)

    /// The handler to pass to `connect`.
    var handler: @Sendable (TransportEvent) -> Void {
        { [self] event in
            if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 { overlaps.add(1, ordering: .relaxed) }
            events.withLock { $0.append(event) }
            inside.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Everything received so far.
    var all: [TransportEvent] { events.withLock { $0 } }

    /// The number of `.closed` events so far.
    var closedCount: Int { all.filter { if case .closed = $0 { true } else { false } }.count }

    /// The next event not yet returned, waiting up to `timeout` seconds: a bound for an event
    /// that never comes, generous because the whole suite on a loaded 2-core machine delayed
    /// one past a minute.
    func next(timeout: Double = 300) async -> TransportEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let got = cursor.withLock { c -> TransportEvent? in
                let all = self.all
                guard c < all.count else { return nil }
                c += 1
                return all[c - 1]
            }
            if let got { return got }
            try? await Task.sleep(for: .milliseconds(5))
        }
        // One last look: on a loaded machine the task may have been starved past the deadline
        // while the event arrived (the full suite keeps both cooperative threads busy).
        return cursor.withLock { c -> TransportEvent? in
            let all = self.all
            guard c < all.count else { return nil }
            c += 1
            return all[c - 1]
        }
    }

    /// The next event, decoded as a server message when it is one.
    func nextMessage(timeout: Double = 300) async -> ServerMessage? {
        guard case .message(let text)? = await next(timeout: timeout) else { return nil }
        return try? ServerMessage.decode(text)
    }

    /// Messages until the response to request `number`: the pushes before it, and it.
    func response(_ number: Int) async -> (pushes: [ServerMessage], status: String?, data: JSONValue?) {
        var pushes: [ServerMessage] = []
        while let message = await nextMessage() {
            if case let .response(n, status, data) = message, n == number { return (pushes, status, data) }
            pushes.append(message)
        }
        return (pushes, nil, nil)
    }
}

/// A loopback port nothing listens on (bound, then closed).
func unusedPort() async throws -> Int {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: 0).get()
    let port = channel.localAddress?.port ?? 1
    try await channel.close()
    return port
}
