import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// "Managing presence", as the documentation writes it, over real sockets.
@Suite("Presence", .serialized)
struct PresenceTests {
    func open(_ server: TransportTestServer) throws -> Database {
        var o = Database.Options()
        o.storeDirectory = TempDir().path + "/s"
        return try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=presence", options: o)
    }

    @Test func presenceExample() async throws {
        let server = try await TransportTestServer()
        let first = try open(server)
        let second = try open(server)
        // The page's example, on the first client.
        let myConnectionsRef = first.reference(withPath: "users/morgan/connections")
        let lastOnlineRef = first.reference(withPath: "users/morgan/lastOnline")
        let connectedRef = first.reference(withPath: ".info/connected")
        let registered = Collected<Bool>()
        connectedRef.observe(.value) { snapshot in
            guard let connected = snapshot.value as? Bool, connected else { return }
            let con = myConnectionsRef.childByAutoId()
            con.setValue(true) { _, _ in }
            con.onDisconnectRemoveValue { error, _ in registered.add(error == nil) }
            lastOnlineRef.onDisconnectSetValue(ServerValue.timestamp()) { error, _ in registered.add(error == nil)
            }
        }
        // The second client watches.
        let seen = Collected<DatabaseValue>()
        second.reference(withPath: "users/morgan").observe(.value) { seen.add($0.databaseValue) }
        #expect(await eventually { seen.all.last?["connections"]?.objectValue?.count == 1 })
        #expect(await eventually { registered.all == [true, true] }, "the server holds both operations")
        // The first client goes away.
        let closed = Date().timeIntervalSince1970 * 1000
        try first.close()
        #expect(
            await eventually {
                seen.all.last?["connections"] == nil && seen.all.last?["lastOnline"]?.doubleValue != nil
            })
        let observed = Date().timeIntervalSince1970 * 1000
        let lastOnline = try #require(seen.all.last?["lastOnline"]?.doubleValue)
        // The server and the test read the same clock: the timestamp falls between the close and
        // the event, however long the machine took (1 ms either side for rounding).
        #expect(lastOnline >= closed.rounded(.down) - 1 && lastOnline <= observed + 1, "a server timestamp")
        try second.close()
        try await server.stop()
    }
}
