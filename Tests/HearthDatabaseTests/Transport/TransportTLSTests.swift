// The SwiftNIO transport's TLS (its `TLSConfiguration`, custom trust roots): Linux only. The
// URLSession transport uses the system's TLS and trust settings.
#if HEARTH_NIO_TRANSPORT
import Foundation
@testable import HearthDatabase
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization
import Testing

/// What the test server saw.
final class TLSServerLog: Sendable {
    let requestTargets = Mutex<[String]>([])
    let hostHeaders = Mutex<[String]>([])
    let pongs = Mutex<[String]>([])
}

/// After the upgrade: sends a ping and the text "hello", echoes every text frame, and answers
/// the text "close-me" with a close frame (code 4000).
final class EchoFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    let log: TLSServerLog
    init(log: TLSServerLog) { self.log = log }

    func handlerAdded(context: ChannelHandlerContext) {
        let ping = WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(string: "p1"))
        context.write(wrapOutboundOut(ping), promise: nil)
        let hello = WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(string: "hello"))
        context.writeAndFlush(wrapOutboundOut(hello), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            let text = String(buffer: frame.unmaskedData)
            if text == "close-me" {
                var code = context.channel.allocator.buffer(capacity: 2)
                code.write(webSocketErrorCode: .unknown(4000))
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code)), promise: nil)
            } else {
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: frame.unmaskedData)), promise: nil)
            }
        case .pong:
            log.pongs.withLock { $0.append(String(buffer: frame.unmaskedData)) }
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }
}

/// A self-signed certificate for `localhost` made by the `openssl` command, or nil without it.
func makeSelfSignedCertificate(in directory: URL) throws -> (certificate: String, key: String)? {
    let candidates = ["/usr/bin/openssl", "/opt/homebrew/bin/openssl", "/usr/local/bin/openssl"]
    guard let openssl = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        return nil
    }
    let certificate = directory.appendingPathComponent("cert.pem").path
    let key = directory.appendingPathComponent("key.pem").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: openssl)
    process.arguments = [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
        "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? (certificate, key) : nil
}

@Suite("WebSocketTransport over TLS (wss://) against a NIO echo server", .serialized)
struct TransportTLSTests {
    /// A TLS WebSocket echo server on a loopback port, with its certificate's path.
    struct EchoServer {
        let channel: any Channel
        let certificate: String
        let log: TLSServerLog
        var port: Int { channel.localAddress?.port ?? 0 }

        static func start(in directory: URL) async throws -> EchoServer? {
            guard let (certificate, key) = try makeSelfSignedCertificate(in: directory) else { return nil }
            let tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            let context = try NIOSSLContext(configuration: tls)
            let log = TLSServerLog()
            let upgrader = NIOWebSocketServerUpgrader(
                maxFrameSize: 1 << 20,
                shouldUpgrade: { channel, head in
                    log.requestTargets.withLock { $0.append(head.uri) }
                    log.hostHeaders.withLock { $0 += head.headers["Host"] }
                    return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(EchoFrameHandler(log: log))
                    }
                })
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                            withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            return EchoServer(channel: channel, certificate: certificate, log: log)
        }
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "transport-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test(
        "wss://: TLS with SNI and a custom trust root; ping answered; split frames echoed and reassembled; server close frame"
    )
    func secureEcho() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let server = try await EchoServer.start(in: directory) else {
            print("TransportTLSTests: no openssl command, skipping the wss:// test")
            return
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(server.certificate))
        let transport = WebSocketTransport(connectTimeout: .seconds(10), tlsConfiguration: tls)
        let endpoint = try ServerEndpoint(url: "wss://localhost:\(server.port)?ns=demo")
        let events = EventRecorder()
        let connection = transport.connect(to: endpoint, lastSessionID: "s1", events: events.handler)
        #expect(await events.next() == .opened, "\(events.all)")
        #expect(await events.next() == .message("hello"))
        #expect(server.log.requestTargets.withLock { $0 } == ["/.ws?v=5&ls=s1&ns=demo"])
        #expect(server.log.hostHeaders.withLock { $0 } == ["localhost:\(server.port)"])

        let big = String(repeating: "0123456789", count: 4_000)  // 40,000 characters: 3 segments
        connection.send(big)
        #expect(await events.next() == .message(big), "the echoed count frame and segments arrive as one message")
        #expect(server.log.pongs.withLock { $0 } == ["p1"], "the ping was answered with its payload")

        connection.send("close-me")
        guard case .closed(let reason)? = await events.next() else {
            Issue.record("no .closed: \(events.all)")
            return
        }
        #expect(reason.contains("4000"), "\(reason)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(events.closedCount == 1)
        try await server.channel.close()
    }

    @Test("wss:// to a certificate the client does not trust: .closed only, never .opened")
    func untrustedCertificate() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let server = try await EchoServer.start(in: directory) else {
            print("TransportTLSTests: no openssl command, skipping the wss:// test")
            return
        }
        let transport = WebSocketTransport(connectTimeout: .seconds(10))
        let endpoint = try ServerEndpoint(url: "wss://localhost:\(server.port)?ns=demo")
        let events = EventRecorder()
        _ = transport.connect(to: endpoint, lastSessionID: nil, events: events.handler)
        guard case .closed(let reason)? = await events.next() else {
            Issue.record("no .closed: \(events.all)")
            return
        }
        #expect(reason.contains("opening the connection failed"), "\(reason)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(events.all.count == 1, "\(events.all)")
        #expect(server.log.requestTargets.withLock { $0 }.isEmpty, "no HTTP request reached the server")
        try await server.channel.close()
    }
}
#endif
