// TEMPORARY: stand-ins until the transport and values branches land (deleted at merge).
import HearthModel

extension DatabaseReference {
    func child(_ pathString: String) -> DatabaseReference {
        DatabaseReference(database: database, path: Path(keys: path.keys + pathString.split(separator: "/").map { ChildKey(String($0)) }))
    }
}

extension ServerEndpoint {
    init(url: String) throws(DatabaseError) {
        self.init(secure: false, host: "127.0.0.1", port: 80, namespace: "x")
    }
}

struct WebSocketTransport: Transport {
    func connect(to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportConnection {
        fatalError("stub")
    }
}
