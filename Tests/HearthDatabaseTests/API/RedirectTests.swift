import Foundation
import Hearth
import HearthLog
import HearthModel
@_spi(HearthInternals) import HearthServer
import Synchronization
import Testing
@testable import HearthDatabase

/// The platform transport, recording the port of every connection it opens.
final class RecordingTransport: Transport {
    let inner = PlatformTransport.make()
    let ports = Mutex<[Int]>([])

    func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        ports.withLock { $0.append(endpoint.port) }
        return inner.connect(to: endpoint, lastSessionID: lastSessionID, events: events)
    }

    var all: [Int] { ports.withLock { $0 } }
}

/// A client pointed at a front `hearth serve` that redirects its namespace reaches the instance
/// that owns it, and keeps that host in its store directory for the next start.
@Suite("Host redirects", .serialized)
struct RedirectTests {
    func open(
        _ front: TransportTestServer, _ dir: String, _ transport: RecordingTransport, log: Collected<String>? = nil
    )
        throws -> Database
    {
        var o = Database.Options()
        o.storeDirectory = dir
        o.transport = transport
        if let log { o.logHandler = { log.add($0) } }
        return try Database(url: "ws://127.0.0.1:\(front.server.port)?ns=owned", options: o)
    }

    func cacheFile(_ dir: String) -> String { dir + "/" + HostCache.fileName }

    /// The redirect end to end, then the next start straight to the cached host.
    @Test func clientFollowsTheFrontToTheOwnerAndGoesStraightThereNextTime() async throws {
        let owner = try await TransportTestServer()
        let front = try await TransportTestServer(
            redirects: try Redirects(arguments: ["owned=127.0.0.1:\(owner.server.port)"]))
        let dir = TempDir()
        do {
            let transport = RecordingTransport()
            let db = try open(front, dir.path, transport)
            try await db.reference(withPath: "dinosaurs/stegosaurus").setValue(.int(5))
            let read = try await db.reference(withPath: "dinosaurs").getData()
            #expect(read.childSnapshot(forPath: "stegosaurus").databaseValue == 5)
            #expect(transport.all == [front.server.port, owner.server.port])
            try db.close()
        }
        #expect(try owner.store.value(at: "dinosaurs/stegosaurus") == Node(.number(5)), "written at the owner")
        #expect(try front.store.value(at: "dinosaurs") == Node.empty, "nothing at the front")
        let text = try String(contentsOfFile: cacheFile(dir.path), encoding: .utf8)
        #expect(text.contains("127.0.0.1:\(owner.server.port)"))

        let transport = RecordingTransport()
        let db = try open(front, dir.path, transport)
        try await db.reference(withPath: "dinosaurs/triceratops").setValue(.int(3))
        #expect(transport.all.first == owner.server.port, "straight to the cached host")
        #expect(try owner.store.value(at: "dinosaurs/triceratops") == Node(.number(3)))
        try db.close()
        try await front.stop()
        try await owner.stop()
    }

    /// Start after start (no cache: a temporary store), the client goes to the front once and
    /// then straight to the owner: the front's reset is never lost with its socket.
    @Test func everyStartFollowsTheResetOnce() async throws {
        let owner = try await TransportTestServer()
        let front = try await TransportTestServer(
            redirects: try Redirects(arguments: ["owned=127.0.0.1:\(owner.server.port)"]))
        for start in 0..<30 {
            let transport = RecordingTransport()
            var o = Database.Options()
            o.transport = transport
            let db = try Database(url: "ws://127.0.0.1:\(front.server.port)?ns=owned", options: o)
            try await db.reference(withPath: "starts/\(start)").setValue(.int(Int64(start)))
            #expect(transport.all == [front.server.port, owner.server.port], "start \(start)")
            try db.close()
        }
        try await front.stop()
        try await owner.stop()
    }

    /// A damaged cache file is ignored with a warning: the client starts at the configured
    /// host, is redirected again, and the file is written anew.
    @Test func damagedCacheFileIsIgnored() async throws {
        let owner = try await TransportTestServer()
        let front = try await TransportTestServer(
            redirects: try Redirects(arguments: ["owned=127.0.0.1:\(owner.server.port)"]))
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        try Data("{\"v\":1,\"internal\":".utf8).write(to: URL(fileURLWithPath: cacheFile(dir.path)))
        let transport = RecordingTransport()
        let log = Collected<String>()
        let db = try open(front, dir.path, transport, log: log)
        #expect(log.all.contains { $0.contains("damaged") })
        try await db.reference(withPath: "a").setValue(.int(1))
        #expect(transport.all == [front.server.port, owner.server.port])
        #expect(try String(contentsOfFile: cacheFile(dir.path), encoding: .utf8).contains("\(owner.server.port)"))
        try db.close()
        try await front.stop()
        try await owner.stop()
    }

    /// A cached host that cannot be reached: the client falls back to the configured host and
    /// is redirected from there.
    @Test func unreachableCachedHostFallsBackToTheConfiguredOne() async throws {
        let owner = try await TransportTestServer()
        let front = try await TransportTestServer(
            redirects: try Redirects(arguments: ["owned=127.0.0.1:\(owner.server.port)"]))
        // A port nothing listens on any more (stopped after the others bound theirs).
        let gone = try await TransportTestServer()
        let gonePort = gone.server.port
        try await gone.stop()
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let configured = ServerEndpoint(secure: false, host: "127.0.0.1", port: front.server.port, namespace: "owned")
        try HostCache(fs: POSIXFileSystem(), directory: dir.path, endpoint: configured).save("127.0.0.1:\(gonePort)")
        let transport = RecordingTransport()
        let db = try open(front, dir.path, transport)
        try await db.reference(withPath: "b").setValue(.int(2))
        #expect(transport.all == [gonePort, front.server.port, owner.server.port])
        #expect(try owner.store.value(at: "b") == Node(.number(2)))
        try db.close()
        try await front.stop()
        try await owner.stop()
    }
}

/// The host cache file on its own: what it keeps, and what it ignores.
@Suite struct HostCacheTests {
    let endpoint = ServerEndpoint(secure: true, host: "demo.example.com", port: 443, namespace: "demo")

    @Test func keepsReplacesAndRemovesTheHost() throws {
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let cache = HostCache(fs: POSIXFileSystem(), directory: dir.path, endpoint: endpoint)
        var warnings: [String] = []
        #expect(cache.load { warnings.append($0) } == nil, "no file")
        try cache.save("s-1.example.com")
        #expect(cache.load { warnings.append($0) } == "s-1.example.com")
        try cache.save("[::1]:9001")
        #expect(cache.load { warnings.append($0) } == "[::1]:9001")
        #expect(!FileManager.default.fileExists(atPath: cache.path + ".tmp"))
        let bytes = try String(contentsOfFile: cache.path, encoding: .utf8)
        #expect(bytes == #"{"v":1,"secure":true,"host":"demo.example.com","ns":"demo","internal":"[::1]:9001"}"# + "\n")
        let other = HostCache(
            fs: POSIXFileSystem(), directory: dir.path,
            endpoint: ServerEndpoint(secure: true, host: "demo.example.com", port: 443, namespace: "other"))
        #expect(other.load { warnings.append($0) } == nil, "written for another database")
        try cache.save(nil)
        try cache.save(nil)
        #expect(!FileManager.default.fileExists(atPath: cache.path))
        #expect(warnings.isEmpty)
    }

    @Test(arguments: [
        "", "not json", #"{"v":2,"secure":true,"host":"demo.example.com","ns":"demo","internal":"a"}"#,
        #"{"v":1,"secure":true,"host":"demo.example.com","ns":"demo","internal":"bad host/"}"#,
        #"{"v":1,"host":"demo.example.com","ns":"demo","internal":"a"}"#,
    ])
    func damagedFileIsIgnoredWithAWarning(contents: String) throws {
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let cache = HostCache(fs: POSIXFileSystem(), directory: dir.path, endpoint: endpoint)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: cache.path))
        var warnings: [String] = []
        #expect(cache.load { warnings.append($0) } == nil)
        #expect(warnings.count == 1)
    }
}
