// What the network side of `hearth serve` accepts, exactly: WebSocket frames (UTF-8, fragments,
// the frame budget) against a real server, and REST request targets as `RESTTarget` parses them.
import Foundation
import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@Suite("hearth serve's network input, exactly", .serialized)
struct NetworkInputTests {
    /// `{"t":"d","d":{"r":1,"a":"p","b":{"p":"/u","d":"<bytes>"}}}` as bytes.
    static func put(_ value: [UInt8]) -> [UInt8] {
        Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/u","d":""#.utf8) + value + Array(#""}}}"#.utf8)
    }

    @Test("a WebSocket text frame that is not UTF-8 closes the connection with 1007 and stores nothing")
    func invalidUTF8FrameCloses1007() async throws {
        let live = try await LiveServer()
        let socket = try RawSocket(port: live.server.port)
        #expect(socket.upgradeToWebSocket() != nil)
        // A valid message right behind it, in the same packet, is not served either.
        let behind = Array(#"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/w","d":1}}}"#.utf8)
        socket.write(RawSocket.frame(Self.put([0x61, 0xFF, 0x62])) + RawSocket.frame(behind))
        let (bytes, closed) = socket.readUntilClosed()
        #expect(closed)
        #expect(RawSocket.closeStatus(in: bytes) == 1007)
        #expect(live.runtime.state.withLock { $0.core.data.isEmpty })
        // The same message, valid, is answered and stored: the refusal is the bytes' doing.
        let valid = try RawSocket(port: live.server.port)
        #expect(valid.upgradeToWebSocket() != nil)
        valid.write(RawSocket.frame(Self.put(Array("aé".utf8))))
        #expect(eventually { live.runtime.state.withLock { !$0.core.data.isEmpty } })
        #expect(live.runtime.state.withLock { $0.core.data } == (try Node(jsonText: #"{"u":"aé"}"#)))
        try await live.stop()
    }

    @Test("a message in fragments is joined; a code point split between fragments is fine; bad fragments close")
    func fragments() async throws {
        let live = try await LiveServer()
        let socket = try RawSocket(port: live.server.port)
        #expect(socket.upgradeToWebSocket() != nil)
        let message = Self.put(Array("é".utf8))
        let cut = message.firstIndex(of: 0xC3)! + 1  // inside the two bytes of "é"
        socket.write(RawSocket.frame(Array(message[..<cut]), opcode: 0x1, fin: false))
        socket.write(RawSocket.frame(Array(message[cut...]), opcode: 0x0, fin: true))
        #expect(eventually { live.runtime.state.withLock { !$0.core.data.isEmpty } })
        // Frames in the same packet as the upgrade request reach the meter and the decoder in order.
        let eager = try RawSocket(port: live.server.port)
        let along = RawSocket.frame(Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/v","d":1}}}"#.utf8))
        #expect(eager.upgradeToWebSocket(sendingAlong: along + along) != nil)
        #expect(eventually { live.runtime.state.withLock { $0.core.data.child(at: Path(keys: ["v"])) == .number(1) } })
        #expect(eventually { live.server.shared.frames.used.load(ordering: .relaxed) == 0 })
        let stray = try RawSocket(port: live.server.port)
        #expect(stray.upgradeToWebSocket() != nil)
        stray.write(RawSocket.frame(Array("x".utf8), opcode: 0x0, fin: true))
        #expect(RawSocket.closeStatus(in: stray.readUntilClosed().bytes) == 1002)
        let binary = try RawSocket(port: live.server.port)
        #expect(binary.upgradeToWebSocket() != nil)
        binary.write(RawSocket.frame([1, 2, 3], opcode: 0x2))
        #expect(RawSocket.closeStatus(in: binary.readUntilClosed().bytes) == 1003)
        try await live.stop()
    }

    @Test("a frame the total frame budget cannot take closes its connection with 1013 before it is buffered")
    func frameBudget() async throws {
        var limits = LiveServer.patient
        limits.maxBufferedFrameBytes = 3 << 19  // one frame of 600,000 bytes, in a buffer of 1 MiB
        let live = try await LiveServer(limits: limits)
        let frames = live.server.shared.frames
        let first = try RawSocket(port: live.server.port)
        #expect(first.upgradeToWebSocket() != nil)
        first.write(RawSocket.frame(Array("{".utf8), announcing: 600_000))
        #expect(eventually { frames.used.load(ordering: .relaxed) == 1 << 20 })
        let second = try RawSocket(port: live.server.port)
        #expect(second.upgradeToWebSocket() != nil)
        second.write(RawSocket.frame([], announcing: 600_000))
        let (bytes, closed) = second.readUntilClosed()
        #expect(closed && RawSocket.closeStatus(in: bytes) == 1013)
        #expect(frames.used.load(ordering: .relaxed) == 1 << 20)
        let small = try RawSocket(port: live.server.port)
        #expect(small.upgradeToWebSocket() != nil)
        small.write(RawSocket.frame(Self.put(Array("ok".utf8))))
        #expect(eventually { live.runtime.state.withLock { !$0.core.data.isEmpty } }, "a small frame was refused")
        withExtendedLifetime(first) {}
        try await live.stop()
        #expect(frames.used.load(ordering: .relaxed) == 0, "a closed connection kept its reservation")
    }

    @Test("a REST body or target that is not UTF-8 is answered 400 and stores nothing")
    func invalidUTF8InREST() async throws {
        let live = try await LiveServer()
        let body = try RawSocket(port: live.server.port)
        body.write(
            Array("PUT /u.json HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n\"".utf8) + [0xC0, 0xAF] + [0x22])
        #expect(body.readResponse()?.status == 400)
        for target in ["/u%FF.json", "/u.json?print=%C0%AF", "/u%2.json", "/u.json?x=%"] {
            let socket = try RawSocket(port: live.server.port)
            socket.write("PUT \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n1")
            #expect(socket.readResponse()?.status == 400, "\(target)")
        }
        let raw = try RawSocket(port: live.server.port)
        raw.write(
            Array("PUT /u".utf8) + [0xC3, 0xA9] + Array(".json HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n1".utf8))
        #expect(raw.readResponse()?.status == 400, "a target with raw non-ASCII bytes")
        #expect(live.runtime.state.withLock { $0.core.data.isEmpty })
        try await live.stop()
    }

    @Test("RESTTarget: methods, percent-decoding, the query, credentials, streams")
    func restTarget() throws {
        func route(_ method: String = "GET", _ target: String, _ headers: [(String, String)] = []) -> RESTTarget.Routing
        {
            RESTTarget.route(method: method, target: target, headers: headers.map { (name: $0.0, value: $0.1) })
        }
        func status(_ routing: RESTTarget.Routing) -> Int? {
            if case .answer(let r) = routing { return r.status }
            return nil
        }
        guard case .request(let t) = route("PUT", "/a%20b/c+d.json?x=1+2&y=%C3%A9&z&auth=tok") else {
            Issue.record("not routed")
            return
        }
        #expect(t.method == .put && t.path == Path(keys: ["a b", "c+d"]))
        #expect(t.parameters == ["x": "1 2", "y": "é", "z": "", "auth": "tok"])
        #expect(t.credential == "tok")
        guard
            case .request(let s) = route(
                "GET", "/.json", [("Accept", "text/html, Text/Event-Stream"), ("AUTHORIZATION", "Bearer b")])
        else { Issue.record("not routed"); return }
        #expect(s.isStream && s.credential == "b" && s.path == .root)
        #expect(status(route("OPTIONS", "/anything")) == 204)
        #expect(status(route("HEAD", "/a.json")) == 405)
        #expect(status(route("GET", "/a")) == 404)
        #expect(status(route("GET", "/a.json?orderBy=oops")) == 400)
        #expect(status(route("GET", "/a.json?orderBy=%22%24key%22&limitToFirst=2")) == nil)
        #expect(status(route("GET", "/a%zz.json")) == 400)
        #expect(status(route("GET", "/a%F0%9F.json")) == 400, "a truncated UTF-8 sequence")
        #expect(status(route("GET", "/a.json?q=%ED%A0%80")) == 400, "an encoded surrogate")
        #expect(status(route("GET", "/é.json")) == 400)
        // Namespaces (ns) and the rules settings endpoint.
        guard case .request(let n) = route("GET", "/a.json?ns=one-2") else { Issue.record("not routed"); return }
        #expect(n.namespace == "one-2" && !n.isRulesSettings)
        for invalid in ["One", "a_b", "", "a.b", String(repeating: "a", count: 64), "%C3%A9"] {
            #expect(status(route("GET", "/a.json?ns=\(invalid)")) == 400, "ns=\(invalid)")
        }
        guard case .request(let r) = route("PUT", "/.settings/rules.json?ns=x") else {
            Issue.record("not routed")
            return
        }
        #expect(r.isRulesSettings && r.path == .root && r.namespace == "x")
        #expect(status(route("DELETE", "/.settings/rules.json")) == 405)
        #expect(status(route("GET", "/.settings/other.json")) == 400, "not a path, not an endpoint")
        #expect(status(route("GET", "/.ws?ns=x", [("Upgrade", "websocket")])) == 503, "an upgrade refused")
        #expect(status(route("GET", "/.ws?ns=x")) == 404, "no upgrade asked")
        #expect(RESTTarget.namespace(inTarget: "/.ws?v=5&ns=abc") == "abc")
        #expect(RESTTarget.namespace(inTarget: "/.ws?v=5") == nil)
        #expect(RESTTarget.namespace(inTarget: "/.ws?ns=%zz").map(Databases.isValidName) == false)
    }

    @Test("the frame scanner finds the frame boundaries NIO's decoder finds, in any chunking and any length encoding")
    func scannerAgreesWithNIO() throws {
        var random = SeededRandom(seed: 43)
        for _ in 0..<200 {
            var stream: [UInt8] = []
            var lengths: [Int] = []
            for _ in 0..<(1 + Int(random.next() % 6)) {
                let length = [0, 1, 125, 126, 300, 65_535, 65_536, 70_000][Int(random.next() % 8)]
                let masked = random.next() % 2 == 0
                var header: [UInt8] = [0x81]
                let encoding = random.next() % 3  // minimal, or longer than needed
                let maskBit: UInt8 = masked ? 0x80 : 0
                if length <= 125 && encoding == 0 {
                    header.append(maskBit | UInt8(length))
                } else if length <= 0xFFFF && encoding < 2 {
                    header += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
                } else {
                    header.append(maskBit | 127)
                    header += (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
                }
                if masked { header += [1, 2, 3, 4] }
                stream += header + [UInt8](repeating: 0x61, count: length)
                lengths.append(length)
            }
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
            var scanner = FrameBoundaryScanner(maxPayloadBytes: 1 << 20)
            var decoded: [Int] = []
            var at = 0
            while at < stream.count {
                let end = min(stream.count, at + 1 + Int(random.next() % 40_000))
                let chunk = Array(stream[at..<end])
                at = end
                try chunk.withUnsafeBytes { try scanner.scan($0) }
                try channel.writeInbound(channel.allocator.buffer(bytes: chunk))
                while let frame = try channel.readInbound(as: WebSocketFrame.self) { decoded.append(frame.length) }
                #expect(scanner.completed == decoded.count, "the scanner and the decoder disagree on frame ends")
                if let announced = scanner.announced { #expect(announced == lengths[decoded.count]) }
            }
            #expect(decoded == lengths && scanner.announced == nil)
            _ = try channel.finish()
        }
        var tooLong = FrameBoundaryScanner(maxPayloadBytes: 1 << 20)
        #expect(throws: FrameBoundaryScanner.FrameTooLarge.self) {
            try [UInt8]([0x81, 127, 0xFF, 0, 0, 0, 0, 0, 0, 0]).withUnsafeBytes { try tooLong.scan($0) }
        }
    }
}
