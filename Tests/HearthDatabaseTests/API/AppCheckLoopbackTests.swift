import Foundation
import Hearth
@_spi(HearthInternals) import HearthServer
import JWTKit
import Testing
@testable import HearthDatabase

/// The client against `hearth serve` enforcing App Check (the runtime the `--app-check-key-file`
/// flag makes), over loopback sockets: without a token writes are refused, with one signed by
/// the key they go through, and a token signed with another key gets the connection shut down
/// until the client stops reconnecting.
@Suite("App Check over loopback", .serialized)
struct AppCheckLoopbackTests {
    static let key = "an-app-check-key-of-32-bytes-or-more"

    struct Claims: JWTPayload {
        var sub: String
        var exp: Int64
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An App Check token for an hour, signed HS256 with `key`.
    static func token(signedWith key: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(sub: "1:123:ios:abc", exp: Int64(Date().timeIntervalSince1970) + 3600))
    }

    func open(_ server: TransportTestServer, appCheck: String?, log: Collected<String>) throws -> Database {
        var o = Database.Options()
        o.durability = .buffered
        o.seed = 1
        o.logHandler = { log.add($0) }
        if let appCheck { o.appCheckTokenProvider = { _ in appCheck } }
        return try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=test", options: o)
    }

    @Test func writesNeedAValidAppCheckToken() async throws {
        let server = try await TransportTestServer(appCheckKey: Self.key)
        let log = Collected<String>()
        let without = try open(server, appCheck: nil, log: log)
        await #expect(throws: DatabaseError.permissionDenied("Permission denied")) {
            try await without.reference(withPath: "a").setValue(.int(1))
        }
        try without.close()
        let with = try open(server, appCheck: try await Self.token(signedWith: Self.key), log: log)
        try await with.reference(withPath: "a").setValue(.int(2))
        #expect(try await with.reference(withPath: "a").getData().databaseValue == 2)
        #expect(try server.store.value(at: "a") == Node(.number(2)))
        try with.close()
        try await server.stop()
    }

    @Test func aWronglySignedTokenIsShutDownUntilTheClientStops() async throws {
        let server = try await TransportTestServer(appCheckKey: Self.key)
        let log = Collected<String>()
        let forged = try await Self.token(signedWith: "another-key-of-at-least-32-bytes!!!")
        let db = try open(server, appCheck: forged, log: log)
        db.goOnline()
        let stopped = "server shutdown: \(ClientCore.invalidAppCheckShutdown)"
        #expect(await eventually { log.all.contains(stopped) })
        let reconnects = log.all.filter { $0.hasPrefix("Detected invalid App Check token. Reconnecting") }
        #expect(reconnects.count == 3)
        #expect(!db.isConnected)
        try db.close()
        try await server.stop()
    }
}
