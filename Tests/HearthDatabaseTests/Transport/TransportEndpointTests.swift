@testable import HearthDatabase
import Testing

@Suite("ServerEndpoint: database URLs and the WebSocket request target")
struct TransportEndpointTests {
    static let accepted: [(String, ServerEndpoint)] = [
        (
            "wss://example.firebaseio.com",
            .init(secure: true, host: "example.firebaseio.com", port: 443, namespace: "example")
        ),
        (
            "https://example.firebaseio.com/",
            .init(secure: true, host: "example.firebaseio.com", port: 443, namespace: "example")
        ),
        (
            "https://Example-Default-RTDB.europe-west1.firebasedatabase.app",
            .init(
                secure: true, host: "example-default-rtdb.europe-west1.firebasedatabase.app", port: 443,
                namespace: "example-default-rtdb")
        ),
        (
            "http://example.firebaseio.com",
            .init(secure: false, host: "example.firebaseio.com", port: 80, namespace: "example")
        ),
        ("ws://127.0.0.1:9000?ns=demo", .init(secure: false, host: "127.0.0.1", port: 9000, namespace: "demo")),
        (
            "WS://localhost:9000/?ns=demo-default-rtdb",
            .init(secure: false, host: "localhost", port: 9000, namespace: "demo-default-rtdb")
        ),
        (
            "http://localhost:9000?foo=bar&ns=Demo&x",
            .init(secure: false, host: "localhost", port: 9000, namespace: "Demo")
        ),
        (
            "wss://db.example.com:8443?ns=other",
            .init(secure: true, host: "db.example.com", port: 8443, namespace: "other")
        ),
        ("ws://[::1]:9000?ns=demo", .init(secure: false, host: "::1", port: 9000, namespace: "demo")),
        ("ws://localhost?ns=a%20b", .init(secure: false, host: "localhost", port: 80, namespace: "a b")),
        (
            "https://example.firebaseio.com//",
            .init(secure: true, host: "example.firebaseio.com", port: 443, namespace: "example")
        ),
    ]

    @Test("accepted URLs", arguments: accepted)
    func accepts(url: String, expected: ServerEndpoint) throws {
        #expect(try ServerEndpoint(url: url) == expected)
    }

    static let refused: [(String, EndpointError)] = [
        ("ftp://example.firebaseio.com", .unsupportedScheme("ftp")),
        ("example.firebaseio.com", .unsupportedScheme("")),
        ("ws://", .invalidHost("")),
        ("ws://:9000?ns=a", .invalidHost("")),
        ("ws://user@host.example.com", .invalidHost("user@host.example.com")),
        ("ws://a..b.com", .invalidHost("a..b.com")),
        ("ws://[::1?ns=a", .invalidHost("[::1")),
        ("ws://[nothost]:80?ns=a", .invalidHost("[nothost]:80")),
        ("ws://localhost:?ns=a", .invalidPort("")),
        ("ws://localhost:0?ns=a", .invalidPort("0")),
        ("ws://localhost:65536?ns=a", .invalidPort("65536")),
        ("ws://localhost:80a?ns=a", .invalidPort("80a")),
        ("ws://localhost:-1?ns=a", .invalidPort("-1")),
        ("https://example.firebaseio.com/users/1", .pathNotRoot("/users/1")),
        ("ws://localhost:9000", .missingNamespace(host: "localhost")),
        ("ws://127.0.0.1:9000", .missingNamespace(host: "127.0.0.1")),
        ("ws://[::1]:9000", .missingNamespace(host: "::1")),
        ("https://firebaseio.com", .missingNamespace(host: "firebaseio.com")),
        ("ws://localhost?ns=", .invalidNamespace("")),
        ("ws://localhost?ns=a.b", .invalidNamespace("a.b")),
        ("ws://localhost?ns=a%2Fb", .invalidNamespace("a/b")),
        ("ws://localhost?ns=a$b", .invalidNamespace("a$b")),
        ("ws://localhost?ns=a%0Ab", .invalidNamespace("a\nb")),
        ("ws://localhost?ns=%zz", .invalidNamespace("%zz")),
        ("ws://localhost?ns=%FF", .invalidNamespace("%FF")),
    ]

    @Test("refused URLs, with the reason", arguments: refused)
    func refuses(url: String, expected: EndpointError) {
        #expect(throws: expected) { try ServerEndpoint(url: url) }
    }

    @Test("the WebSocket request target: v=5, then ls when resuming, then ns (firebase-js-sdk's order)")
    func webSocketPath() throws {
        let endpoint = try ServerEndpoint(url: "https://example.firebaseio.com")
        #expect(endpoint.webSocketPath(lastSessionID: nil) == "/.ws?v=5&ns=example")
        #expect(endpoint.webSocketPath(lastSessionID: "abc123") == "/.ws?v=5&ls=abc123&ns=example")
        let odd = ServerEndpoint(secure: false, host: "localhost", port: 9000, namespace: "a b&c")
        #expect(odd.webSocketPath(lastSessionID: "s=1") == "/.ws?v=5&ls=s%3D1&ns=a%20b%26c")
    }

    @Test("the Host header names the port unless it is the default, and brackets IPv6")
    func hostHeader() throws {
        #expect(try ServerEndpoint(url: "wss://example.firebaseio.com").hostHeader == "example.firebaseio.com")
        #expect(try ServerEndpoint(url: "ws://example.firebaseio.com:443").hostHeader == "example.firebaseio.com:443")
        #expect(try ServerEndpoint(url: "ws://[::1]:9000?ns=x").hostHeader == "[::1]:9000")
    }

    @Test("errors describe themselves")
    func descriptions() {
        #expect(EndpointError.missingNamespace(host: "localhost").description.contains("?ns="))
        #expect(EndpointError.unsupportedScheme("").description.contains("no scheme"))
    }
}
