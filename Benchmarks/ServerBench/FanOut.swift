// Fan-out latency: one writer puts `fan/x` and N connections listening on `fan` each receive the
// `d` push; a round's latency is `p` sent → the last listener's frame read off its socket (an
// arrival stamp on the client's event loop, so the bench's own decoding is not counted; the
// older figure — every push decoded by the bench's threads — is kept beside it). The floor is
// the same rounds through `BroadcastServer`.
import Dispatch
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOWebSocket
import Synchronization

/// Stamps the arrival of every text frame on a `WebSocketTestClient`'s event loop.
final class ArrivalStamp: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    let last = Atomic<UInt64>(0)
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if unwrapInboundIn(data).opcode == .text { last.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
        context.fireChannelRead(data)
    }
    var seconds: Double { Double(last.load(ordering: .relaxed)) / 1e9 }
}

/// Inserts `handler` after the client's WebSocket decoding, before its inbox; returns it.
func insertAfterDecoding<H: ChannelInboundHandler & Sendable>(_ handler: H, into c: WebSocketTestClient) throws -> H {
    let channel = c.channel
    try channel.eventLoop.submit {
        let errors = try channel.pipeline.syncOperations.handler(type: WebSocketProtocolErrorHandler.self)
        try channel.pipeline.syncOperations.addHandler(handler, position: .after(errors))
    }.wait()
    return handler
}

/// Inserts an ``ArrivalStamp`` after the client's WebSocket decoding, before its inbox.
func stamp(_ c: WebSocketTestClient) throws -> ArrivalStamp { try insertAfterDecoding(ArrivalStamp(), into: c) }

struct RoundTimes {
    var last: [Double] = []
    var first: [Double] = []
    var decoded: [Double] = []
}

/// `rounds` rounds: `send(r)`, then every watcher's next message, then `ack(r)`; times in ms.
func measureRounds(_ watchers: [WebSocketTestClient], _ stamps: [ArrivalStamp], rounds: Int,
                   send: (Int) throws -> Void, ack: (Int) -> Void) rethrows -> RoundTimes {
    var times = RoundTimes()
    for r in 1...rounds {
        let t0 = now()
        try send(r)
        let decoded = Mutex<Double>(0)
        DispatchQueue.concurrentPerform(iterations: watchers.count) { i in
            guard watchers[i].receive(timeout: 10) != nil else { fatalError("push lost") }
            let t = now()
            decoded.withLock { $0 = max($0, t) }
        }
        let arrivals = stamps.map(\.seconds)
        times.last.append((arrivals.max()! - t0) * 1000)
        times.first.append((arrivals.min()! - t0) * 1000)
        times.decoded.append((decoded.withLock { $0 } - t0) * 1000)
        ack(r)
    }
    return times
}

func fanOut(listeners: Int, rounds: Int) async throws -> FanOutRun {
    let load = loadAverage()
    let live = try await Live()
    let watchers = try (0..<listeners).map { _ in try live.client() }
    for w in watchers {
        try w.send(ClientRequest.listen(path: "fan", query: .default, tag: nil, hash: "").message(number: 1))
        guard w.response(1, timeout: 30).status == "ok" else { fatalError("listen failed") }
    }
    let stamps = try watchers.map(stamp)
    let writer = try live.client()
    let real = try measureRounds(watchers, stamps, rounds: rounds, send: { r in
        try writer.send(ClientRequest.put(path: "fan/x", data: .number(Double(r)), hash: nil).message(number: r))
    }, ack: { r in _ = writer.response(r) })
    for w in watchers { w.close() }
    writer.close()
    try await live.stop()

    // The floor: the same connections count, the same put bytes in, the same push bytes out.
    let push = ServerMessage.set(path: "fan/x", data: .number(1), tag: nil).text
    let ok = ServerMessage.response(number: 1, status: "ok", data: nil).text
    let floorServer = try await BroadcastServer.start(push: push, ok: ok)
    let floorWatchers = try (0..<listeners).map { _ in try WebSocketTestClient(port: floorServer.port, group: clientLoop(), path: "/.ws?v=5") }
    let floorStamps = try floorWatchers.map(stamp)
    let floorWriter = try WebSocketTestClient(port: floorServer.port, group: clientLoop(), path: "/.ws?v=5")
    let floor = try measureRounds(floorWatchers, floorStamps, rounds: rounds, send: { r in
        try floorWriter.send(ClientRequest.put(path: "fan/x", data: .number(Double(r)), hash: nil).message(number: r))
    }, ack: { _ in _ = floorWriter.receive() })
    for w in floorWatchers { w.close() }
    floorWriter.close()
    try await floorServer.stop()

    return FanOutRun(
        listeners: listeners, rounds: rounds, load: load,
        p50Ms: percentile(real.last, 0.5), p99Ms: percentile(real.last, 0.99),
        firstP50Ms: percentile(real.first, 0.5),
        decodedP50Ms: percentile(real.decoded, 0.5), decodedP99Ms: percentile(real.decoded, 0.99),
        floorP50Ms: percentile(floor.last, 0.5), floorP99Ms: percentile(floor.last, 0.99))
}
