import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Upgrades `/.ws` requests to a WebSocket whose pipeline is one handler: NIO's upgrader checks
/// the request and builds the `101` response (its `Sec-WebSocket-Accept`), and this one, in
/// place of NIO's, adds ``WebSocketHandler`` (or ``RedirectHandler``) alone — not NIO's frame
/// encoder, decoder and error handler, whose work the handler does itself, so that an idle
/// connection does not hold their objects and pipeline contexts.
final class WebSocketUpgrader: HTTPServerProtocolUpgrader, Sendable {
    let checks: NIOWebSocketServerUpgrader
    let databases: Databases
    let shared: NetworkShared

    var supportedProtocol: String { checks.supportedProtocol }
    var requiredUpgradeHeaders: [String] { checks.requiredUpgradeHeaders }

    init(databases: Databases, shared: NetworkShared) {
        self.databases = databases
        self.shared = shared
        checks = NIOWebSocketServerUpgrader(
            maxFrameSize: NetworkServer.maxFrameBytes,
            shouldUpgrade: { channel, head in
                // Not upgraded (a wrong path, or a namespace that cannot be served): the request
                // goes on as plain HTTP, and RESTTarget answers it with the reason.
                let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
                let namespace = RESTTarget.namespace(inTarget: head.uri)
                let upgrade =
                    (path == "/.ws" || path == "/.ws/")
                    && (databases.redirects.host(for: namespace) != nil
                        || (try? databases.runtime(for: namespace).get()) != nil)
                return channel.eventLoop.makeSucceededFuture(upgrade ? HTTPHeaders() : nil)
            },
            // Never called: `upgrade(context:upgradeRequest:)` below builds the pipeline.
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() })
    }

    func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        checks.buildUpgradeResponse(
            channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest head: HTTPRequestHead) -> EventLoopFuture<Void> {
        let pipeline = context.pipeline.syncOperations
        return context.eventLoop.makeCompletedFuture {
            let namespace = RESTTarget.namespace(inTarget: head.uri)
            if let reset = databases.redirects.reset(for: namespace) {
                try pipeline.addHandler(RedirectHandler(message: reset))
                return
            }
            let runtime = try databases.runtime(for: namespace).get()
            try pipeline.addHandler(
                WebSocketHandler(
                    runtime: runtime, shared: shared, host: head.headers["Host"].first,
                    lastSession: ServerCore.lastSession(inURI: head.uri)))
        }
    }
}
