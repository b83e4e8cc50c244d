@testable import HearthDatabase
import Testing

/// The logic both transports share (the SwiftNIO one on Linux, the URLSession one on Apple
/// platforms), tested on every platform: the handshake URL, IP address recognition, incoming
/// frames, the connection's phases and the reasons `.closed` reports.
@Suite("transport logic shared by every platform")
struct TransportSharedLogicTests {
    @Test("the handshake URL: ws:// or wss:// by the endpoint, the Host header's authority, the request target")
    func webSocketURL() throws {
        let firebase = try ServerEndpoint(url: "https://example.firebaseio.com")
        #expect(firebase.webSocketURL(lastSessionID: nil) == "wss://example.firebaseio.com/.ws?v=5&ns=example")
        let local = try ServerEndpoint(url: "http://localhost:9000?ns=demo")
        #expect(local.webSocketURL(lastSessionID: "s 1") == "ws://localhost:9000/.ws?v=5&ls=s%201&ns=demo")
        let v6 = try ServerEndpoint(url: "ws://[::1]:9000?ns=demo")
        #expect(v6.webSocketURL(lastSessionID: nil) == "ws://[::1]:9000/.ws?v=5&ns=demo")
        let securePort80 = ServerEndpoint(secure: true, host: "db.example.com", port: 80, namespace: "x")
        #expect(securePort80.webSocketURL(lastSessionID: nil) == "wss://db.example.com:80/.ws?v=5&ns=x")
    }

    @Test(
        "IP addresses: dotted IPv4 and IPv6 are; names, partial or out-of-range addresses, zones are not",
        arguments: [
            ("127.0.0.1", true), ("10.0.0.255", true), ("::1", true), ("fe80::1", true),
            ("2001:db8::8a2e:370:7334", true), ("::ffff:192.0.2.1", true),
            ("localhost", false), ("example.com", false), ("256.0.0.1", false), ("1.2.3", false),
            ("", false), ("fe80::1%eth0", false), ("1:2:3:4:5:6:7:8:9", false),
        ])
    func ipAddresses(text: String, isAddress: Bool) {
        #expect(EndpointParser.isIPAddress(text) == isAddress)
    }

    @Test("incoming frames: whole and split messages, keepalives, the size bound, binary and bad UTF-8 refused")
    func inboundFrames() throws {
        var inbound = InboundFrames(maxMessageBytes: 10)
        #expect(try inbound.text("{\"a\":1}") == "{\"a\":1}")
        #expect(try inbound.text("0") == nil, "a keepalive yields nothing")
        #expect(try inbound.text("2") == nil)
        #expect(try inbound.text("abc") == nil)
        #expect(try inbound.text(utf8: Array("def".utf8)) == "abcdef")
        #expect(throws: InboundFrames.Refusal(code: 1007, reason: "the server sent a text frame that is not UTF-8")) {
            try inbound.text(utf8: [0x61, 0xFF])
        }
        #expect(throws: InboundFrames.Refusal.self) { try inbound.text("12345678901") }
        do {
            _ = try inbound.text("12345678901")
        } catch {
            #expect(error.code == 1009)
            #expect(error.reason.contains("too large"), "\(error.reason)")
        }
        #expect(InboundFrames.binaryRefusal.code == 1003)
        #expect(InboundFrames.clampedLimit(0) == 1)
        #expect(InboundFrames.clampedLimit(Int.max) == Int(UInt32.max))
    }

    @Test("phases: .opened once and only while connecting, messages only while open, one .closed")
    func connectionState() {
        var state = ConnectionState()
        #expect(state.deliver("early") == nil, "nothing is delivered before the handshake")
        #expect(state.closingReason == CloseReason.closedBeforeHandshake)
        #expect(state.open() == .opened)
        #expect(state.open() == nil)
        #expect(state.deliver("m") == .message("m"))
        #expect(state.closingReason == CloseReason.lost)
        state.recordFailure("first")
        state.recordFailure("second")
        #expect(state.closingReason == "first", "the first failure is the one reported")
        #expect(state.finish(reason: state.closingReason) == .closed(reason: "first"))
        #expect(state.finish(reason: "again") == nil)
        #expect(state.deliver("late") == nil)

        var never = ConnectionState()
        #expect(never.finish(reason: CloseReason.closedByClient) == .closed(reason: "closed by the client"))
        #expect(never.open() == nil, "no .opened after .closed")
    }

    @Test("the reason for a connection URLSession ended: what the SwiftNIO transport says at the same point")
    func endedReasons() {
        func ended(upgraded: Bool = false, status: Int? = nil, code: Int? = nil, error: String? = nil) -> String {
            CloseReason.ended(
                upgraded: upgraded, host: "127.0.0.1", port: 9000, status: status, phrase: "forbidden",
                urlErrorCode: code, error: error)
        }
        #expect(ended(code: -1004, error: "refused") == "could not connect to 127.0.0.1:9000: refused")
        #expect(ended(code: -1003, error: "no host").hasPrefix("could not connect"))
        #expect(ended(code: -1202, error: "untrusted") == "opening the connection failed: untrusted")
        #expect(ended(status: 403, error: "bad response").contains("refused the WebSocket upgrade: HTTP 403 forbidden"))
        #expect(ended() == CloseReason.closedBeforeHandshake)
        #expect(ended(upgraded: true) == CloseReason.lost)
        #expect(ended(upgraded: true, status: 101, code: -1005, error: "reset") == "the connection failed: reset")
        #expect(
            CloseReason.serverClosed(code: 4000, text: "bye") == "the server closed the connection (code 4000: bye)")
        #expect(CloseReason.serverClosed(code: nil, text: "") == "the server closed the connection")
        #expect(CloseReason.timedOut(milliseconds: 300).contains("timed out"))
    }
}
