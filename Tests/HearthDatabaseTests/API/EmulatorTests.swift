import Foundation
import HearthLog
import Synchronization
import Testing

@testable import HearthDatabase

/// A transport that records where it was asked to connect and never opens.
private final class DialRecorder: Transport, TransportConnection {
    let dialed = Mutex<[ServerEndpoint]>([])

    func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        dialed.withLock { $0.append(endpoint) }
        return self
    }

    func send(_ message: String) {}
    func close() {}
    func setReading(_ reading: Bool) {}
}

@Suite("The emulator: useEmulator, the option and FIREBASE_DATABASE_EMULATOR_HOST; connecting at first use")
struct EmulatorTests {
    private func open(
        _ url: String = "https://demo.firebaseio.com", configure: (inout Database.Options) -> Void = { _ in }
    ) throws -> (Database, DialRecorder) {
        let recorder = DialRecorder()
        var options = Database.Options()
        options.transport = recorder
        configure(&options)
        return (try Database(url: url, options: options), recorder)
    }

    /// What the database has dialed once everything queued on its sync queue has run.
    private func dialed(_ db: Database, _ recorder: DialRecorder) -> [ServerEndpoint] {
        db.work.sync {}
        return recorder.dialed.withLock { $0 }
    }

    @Test("an emulated endpoint: in the clear, the emulator's host and port, the URL's namespace")
    func emulatedEndpoint() throws {
        let production = try ServerEndpoint(url: "https://demo.firebaseio.com")
        #expect(
            try production.emulated(by: "127.0.0.1:9000")
                == ServerEndpoint(secure: false, host: "127.0.0.1", port: 9000, namespace: "demo"))
        #expect(try production.emulated(by: "[::1]:9001").host == "::1")
        #expect(try production.emulated(by: "Emulator.Local").port == 80, "no port: 80, as http://HOST does")
        #expect(throws: EndpointError.invalidHost("bad host")) { try production.emulated(by: "bad host:9000") }
        #expect(throws: EndpointError.invalidPort("0")) { try production.emulated(by: "localhost:0") }
        #expect(throws: EndpointError.invalidPort("9000/x")) { try production.emulated(by: "localhost:9000/x") }
    }

    @Test("the option wins over FIREBASE_DATABASE_EMULATOR_HOST; an empty variable is no emulator")
    func emulatorHostResolution() {
        let environment = ["FIREBASE_DATABASE_EMULATOR_HOST": "10.0.0.2:9000"]
        #expect(Database.emulatorHost(option: nil, environment: environment) == "10.0.0.2:9000")
        #expect(Database.emulatorHost(option: "localhost:9100", environment: environment) == "localhost:9100")
        #expect(Database.emulatorHost(option: nil, environment: ["FIREBASE_DATABASE_EMULATOR_HOST": ""]) == nil)
        #expect(Database.emulatorHost(option: nil, environment: [:]) == nil)
    }

    @Test("opening connects nowhere; the first reference connects, once")
    func connectsAtFirstUse() throws {
        let (db, recorder) = try open()
        defer { try? db.close() }
        #expect(dialed(db, recorder).isEmpty, "opening alone does not connect")
        _ = db.isConnected
        _ = db.pendingWriteIDs
        #expect(dialed(db, recorder).isEmpty, "reading properties is not a use")
        _ = db.reference(withPath: "a")
        _ = db.reference()
        #expect(dialed(db, recorder) == [try ServerEndpoint(url: "https://demo.firebaseio.com")])
    }

    @Test("every first use connects: goOffline aside, each call that works with the database", arguments: 0..<6)
    func eachUseConnects(_ use: Int) throws {
        let (db, recorder) = try open()
        defer { try? db.close() }
        switch use {
        case 0: db.goOnline()
        case 1: db.updateAuthToken(nil)
        case 2: _ = db.observeWritesPaused { _ in }
        case 3: _ = db.observeWriteResults { _ in }
        case 4: _ = db.observeTransactionResults { _ in }
        default: db.registerTransactionFunction("f") { _, _ in .abort() }
        }
        #expect(dialed(db, recorder).count == 1)
        #expect(throws: DatabaseError.self) { try db.useEmulator(host: "127.0.0.1", port: 9000) }
    }

    @Test("goOffline is a use that keeps the database offline")
    func goOfflineIsAUse() throws {
        let (db, recorder) = try open()
        defer { try? db.close() }
        db.goOffline()
        _ = db.reference()
        #expect(dialed(db, recorder).isEmpty)
        #expect(throws: DatabaseError.self) { try db.useEmulator(host: "127.0.0.1", port: 9000) }
    }

    @Test("connectAtOpen false: the first reference does not connect; goOnline does")
    func staysOfflineWhenAsked() throws {
        let (db, recorder) = try open { $0.connectAtOpen = false }
        defer { try? db.close() }
        _ = db.reference()
        #expect(dialed(db, recorder).isEmpty)
        db.goOnline()
        #expect(dialed(db, recorder).count == 1)
    }

    @Test("useEmulator before the first use: the connection goes to the emulator")
    func useEmulatorBeforeUse() throws {
        let (db, recorder) = try open()
        defer { try? db.close() }
        db.useEmulator(withHost: "127.0.0.1", port: 9000)
        #expect(db.endpoint == ServerEndpoint(secure: false, host: "127.0.0.1", port: 9000, namespace: "demo"))
        _ = db.reference()
        #expect(dialed(db, recorder) == [db.endpoint])
    }

    @Test("useEmulator after the first use: refused with a typed error; the same emulator again is no change")
    func useEmulatorAfterUse() throws {
        let (db, _) = try open()
        defer { try? db.close() }
        try db.useEmulator(host: "::1", port: 9000)
        #expect(db.endpoint.host == "::1")
        _ = db.reference()
        try db.useEmulator(host: "::1", port: 9000)
        #expect(throws: DatabaseError.self) { try db.useEmulator(host: "127.0.0.1", port: 9000) }
        do {
            try db.useEmulator(host: "127.0.0.1", port: 9000)
        } catch {
            guard case .alreadyInUse = error else {
                Issue.record("expected alreadyInUse, got \(error)")
                return
            }
        }
        #expect(db.endpoint.host == "::1", "unchanged")
        #expect(throws: DatabaseError.self) { try db.useEmulator(host: "no such host", port: 9000) }
    }

    @Test("useEmulator after opening: the host a server redirected the URL's host to is not the emulator's")
    func useEmulatorDropsTheURLsRedirect() throws {
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let production = try ServerEndpoint(url: "https://demo.firebaseio.com")
        try HostCache(fs: POSIXFileSystem(), directory: dir.path, endpoint: production).save(
            "s-usc1a-nss-1.firebaseio.com")
        let (db, recorder) = try open { $0.storeDirectory = dir.path }
        db.useEmulator(withHost: "127.0.0.1", port: 9000)
        _ = db.reference()
        #expect(
            dialed(db, recorder) == [ServerEndpoint(secure: false, host: "127.0.0.1", port: 9000, namespace: "demo")])
        try db.close()
        // Without the emulator the kept redirect is used again: it was not replaced.
        let (again, second) = try open { $0.storeDirectory = dir.path }
        defer { try? again.close() }
        _ = again.reference()
        #expect(dialed(again, second).map(\.host) == ["s-usc1a-nss-1.firebaseio.com"])
    }

    @Test("the emulatorHost option: the database connects to it from the start")
    func emulatorOption() throws {
        let (db, recorder) = try open { $0.emulatorHost = "localhost:9100" }
        defer { try? db.close() }
        _ = db.reference()
        #expect(
            dialed(db, recorder) == [ServerEndpoint(secure: false, host: "localhost", port: 9100, namespace: "demo")])
        #expect(throws: DatabaseError.self) {
            var options = Database.Options()
            options.emulatorHost = "localhost:99999"
            _ = try Database(url: "https://demo.firebaseio.com", options: options)
        }
    }
}
