// The WebSocket framing `hearth serve` does inside its one handler per connection: the reader
// reads what NIO's frame decoder reads and refuses what it refuses, in any chunking; what the
// writer writes, NIO's decoder reads back; and an upgraded connection's pipeline holds that one
// handler, not NIO's decoder, encoder and error handler. Verdicts are frames and the server's
// own state — never how long anything took.
import Foundation
import Hearth
@_spi(HearthInternals) @testable import HearthServer
import HearthModel
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@Suite("hearth serve's WebSocket framing, in one handler", .serialized)
struct WebSocketFramingTests {
    /// A frame as a client may send it: any opcode, fin, mask key (nil: unmasked), length encoding.
    static func frame(opcode: UInt8, fin: Bool, key: [UInt8]?, payload: [UInt8], longLength: Bool = false) -> [UInt8] {
        let maskBit: UInt8 = key == nil ? 0 : 0x80
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let length = payload.count
        if length <= 125 && !longLength {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF && !longLength {
            out += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            out.append(maskBit | 127)
            out += (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
        }
        guard let key else { return out + payload }
        return out + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    struct Read: Equatable {
        let fin: Bool
        let opcode: UInt8
        let payload: [UInt8]
    }

    /// What NIO's decoder reads from `stream` in `chunks`, and what `FrameReader` reads, chunk by
    /// chunk, with the refusal each ends in (NIO's as the status its error handler sends).
    static func readBoth(
        _ stream: [UInt8], cuts: [Int], max: Int = 1 << 20
    ) throws -> (
        nio: [Read], nioStatus: UInt16?, ours: [Read], ourStatus: UInt16?, pendingAtEnd: Bool
    ) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: max)))
        var reader = FrameReader(maxPayloadBytes: max)
        var nio: [Read] = []
        var ours: [Read] = []
        var nioStatus: UInt16?
        var ourStatus: UInt16?
        var at = 0
        for end in cuts + [stream.count] where end > at {
            let chunk = Array(stream[at..<end])
            at = end
            if nioStatus == nil {
                do {
                    try channel.writeInbound(channel.allocator.buffer(bytes: chunk))
                } catch let error as NIOWebSocketError {
                    nioStatus = error == .invalidFrameLength ? 1009 : 1002
                }
                while let f = try channel.readInbound(as: WebSocketFrame.self) {
                    nio.append(
                        Read(
                            fin: f.fin, opcode: UInt8(webSocketOpcode: f.opcode), payload: Array(buffer: f.unmaskedData)
                        ))
                }
            }
            if ourStatus == nil {
                var bytes = ByteBuffer(bytes: chunk)
                reader.append(&bytes)
                do {
                    while let f = try reader.next() {
                        ours.append(Read(fin: f.fin, opcode: f.opcode, payload: Array(buffer: f.payload)))
                    }
                } catch {
                    ourStatus = error.status
                }
            }
        }
        _ = try? channel.finish()
        return (nio, nioStatus, ours, ourStatus, reader.pending != nil)
    }

    @Test("the reader reads the frames NIO's decoder reads, masked or not, in any chunking and length encoding")
    func readerAgreesWithNIO() throws {
        var random = SeededRandom(seed: 48)
        for _ in 0..<300 {
            var stream: [UInt8] = []
            for _ in 0..<(1 + Int(random.next() % 6)) {
                let control = random.next() % 4 == 0
                let length =
                    control
                    ? [0, 1, 125][Int(random.next() % 3)]
                    : [0, 1, 125, 126, 300, 65_535, 65_536, 70_000][Int(random.next() % 8)]
                let opcode: UInt8 =
                    control ? [0x8, 0x9, 0xA][Int(random.next() % 3)] : [0x0, 0x1, 0x2][Int(random.next() % 3)]
                let key: [UInt8]? =
                    random.next() % 3 == 0 ? nil : (0..<4).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                stream += Self.frame(
                    opcode: opcode, fin: control || random.next() % 2 == 0, key: key, payload: payload,
                    longLength: random.next() % 4 == 0)
            }
            var cuts: [Int] = []
            var at = 0
            while true {
                at += 1 + Int(random.next() % (random.next() % 2 == 0 ? 7 : 40_000))
                guard at < stream.count else { break }
                cuts.append(at)
            }
            let got = try Self.readBoth(stream, cuts: cuts)
            #expect(got.nioStatus == nil && got.ourStatus == nil)
            #expect(got.ours == got.nio, "the reader and NIO's decoder read different frames")
            #expect(!got.pendingAtEnd, "the reader kept bytes after the last whole frame")
        }
    }

    @Test(
        "the reader refuses what NIO's decoder refuses, with the status NIO's error handler sends, after the frames before"
    )
    func readerRefusesAsNIO() throws {
        let before = Self.frame(opcode: 0x1, fin: true, key: [1, 2, 3, 4], payload: Array("ok".utf8))
        let cases: [(String, [UInt8], UInt16)] = [
            ("a payload over the limit", [0x81, 0xFF] + [0, 0, 0, 0, 0, 0x10, 0, 1], 1009),
            ("a length past Int.max", [0x81, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], 1009),
            ("a fragmented ping", [0x09, 0x80, 1, 2, 3, 4], 1002),
            ("a close of 126 bytes", [0x88, 0xFE, 0, 126], 1002),
        ]
        for (name, refused, status) in cases {
            for cut in 0...(before.count + refused.count) {
                let got = try Self.readBoth(before + refused + before, cuts: [cut])
                #expect(got.nioStatus == status, "NIO's decoder on \(name)")
                #expect(got.ourStatus == status, "the reader on \(name), cut at \(cut)")
                #expect(got.ours == got.nio, "\(name): the frames before it differ")
                #expect(got.ours.count == 1)
            }
        }
    }

    @Test("what the writer writes, NIO's decoder reads back: every length encoding, one buffer per frame")
    func writerAgreesWithNIO() throws {
        let allocator = ByteBufferAllocator()
        for length in [0, 1, 125, 126, 65_535, 65_536, 70_000] {
            let text = String(repeating: "é", count: length / 2) + (length % 2 == 1 ? "x" : "")
            let payload = ByteBuffer(string: text)
            var written = [(FrameWriter.text, FrameWriter.frame(FrameWriter.text, text: text, allocator: allocator))]
            if length <= 125 {  // a control frame's limit (a pong echoes a ping's payload)
                written.append(
                    (FrameWriter.pong, FrameWriter.frame(FrameWriter.pong, payload: payload, allocator: allocator)))
            }
            for (opcode, frame) in written {
                #expect(frame.readableBytes == FrameWriter.headerBytes(length) + length)
                let got = try Self.readBoth(Array(buffer: frame), cuts: [])
                #expect(got.nioStatus == nil && got.nio.count == 1, "length \(length)")
                #expect(got.nio.first == Read(fin: true, opcode: opcode, payload: Array(text.utf8)), "length \(length)")
            }
        }
        let close = try Self.readBoth(Array(buffer: FrameWriter.close(status: 1009, allocator: allocator)), cuts: [])
        #expect(close.nio == [Read(fin: true, opcode: 0x8, payload: [0x03, 0xF1])])
    }

    @Test("an upgraded WebSocket's pipeline holds its one handler; a ping is answered; a closed one leaves the ledger")
    func oneHandlerPerConnection() async throws {
        let live = try await LiveServer()
        let client = try live.client()
        _ = client.receive()  // the hello: upgraded, its sink made
        let sinks = live.runtime.state.withLock { s in
            s.deliveries.values.compactMap { $0.sink as? WebSocketHandler.Sink }
        }
        let channel = try #require(sinks.first).budget.channel
        let found = try await channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            return (
                ours: (try? pipeline.handler(type: WebSocketHandler.self)) != nil,
                decoder: (try? pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)) != nil,
                encoder: (try? pipeline.handler(type: WebSocketFrameEncoder.self)) != nil,
                errors: (try? pipeline.handler(type: WebSocketProtocolErrorHandler.self)) != nil
            )
        }.get()
        #expect(found.ours && !found.decoder && !found.encoder && !found.errors)
        let members = { live.server.shared.outbound.members.withLock { $0.count } }
        #expect(members() == 1)
        client.close()
        #expect(eventually { members() == 0 }, "a closed WebSocket stayed in the outbound ledger")

        let socket = try RawSocket(port: live.server.port)
        #expect(socket.upgradeToWebSocket() != nil)
        socket.write(
            RawSocket.frame(Array("are you there".utf8), opcode: 0x9) + RawSocket.frame([0x03, 0xE8], opcode: 0x8))
        let (bytes, closed) = socket.readUntilClosed()
        #expect(closed)
        #expect(RawSocket.frames(in: bytes).contains { $0.opcode == 0xA && $0.payload == Array("are you there".utf8) })
        #expect(RawSocket.closeStatus(in: bytes) == 1000)
        let big = try RawSocket(port: live.server.port)
        #expect(big.upgradeToWebSocket() != nil)
        big.write(RawSocket.frame([], announcing: NetworkServer.maxFrameBytes + 1))
        #expect(RawSocket.closeStatus(in: big.readUntilClosed().bytes) == 1009)
        #expect(eventually { members() == 0 && live.server.shared.frames.used.load(ordering: .relaxed) == 0 })
        try await live.stop()
    }
}
