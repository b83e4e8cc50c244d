// A mixed workload: `connections` clients, each listening at its own location (`m/cI`) and at one
// of `sharedLocations` shared ones (`s/gJ`, J = I mod sharedLocations), each writing at a steady
// rate — open loop, on a fixed schedule whatever the acknowledgements do — to its own location,
// and every `sharedEvery`-th write to its shared one (staggered: round k's shared writers are
// the connections I with (k + I) mod sharedEvery = 0). Each written value is its send time, so a
// push's delivery latency is read from the push itself: the send time → the frame read off the
// listener's socket (stamped on the client's event loop, before the bench decodes anything).
// Figures: acknowledged writes/s, p50/p99 of put sent → its `ok` read, and p50/p99 of delivery
// over every push of a write sent after the warm-up (the first tenth of the run).
import Dispatch
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOWebSocket
import Synchronization

/// Every text frame a client receives, with the uptime nanoseconds it was read at.
final class FrameRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    let frames = Mutex<[(at: UInt64, text: String)]>([])
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.opcode == .text {
            let at = DispatchTime.now().uptimeNanoseconds
            let text = String(buffer: frame.unmaskedData)
            frames.withLock { $0.append((at, text)) }
        }
        context.fireChannelRead(data)
    }
}

/// The shape of the mixed workload (see the file's comment).
struct MixedShape: Sendable {
    var connections: Int
    /// Writes per second per connection.
    var rate: Double
    var sharedLocations = 20
    var sharedEvery = 10
    /// Threads sending the writes, each for every `senders`-th connection.
    var senders = 4
}

func mixed(_ shape: MixedShape, seconds: Double) async throws -> MixedRun {
    let load = loadAverage()
    let live = try await Live()
    let clients = try (0..<shape.connections).map { _ in try live.client() }
    for (i, c) in clients.enumerated() {
        try c.send(ClientRequest.listen(path: Path(keys: ["m", ChildKey("c\(i)")]), query: .default, tag: nil, hash: "").message(number: 1))
        try c.send(ClientRequest.listen(path: Path(keys: ["s", ChildKey("g\(i % shape.sharedLocations)")]), query: .default, tag: nil, hash: "").message(number: 2))
        guard c.response(2, timeout: 30).status == "ok" else { fatalError("listen failed") }
    }
    let recorders = try clients.map { c in try insertAfterDecoding(FrameRecorder(), into: c) }

    // The senders: connection i's k-th write goes out at start + (k × connections + i) / total rate.
    let total = Double(shape.connections) * shape.rate
    let start = DispatchTime.now().uptimeNanoseconds + 100_000_000
    let end = start + UInt64(seconds * 1e9)
    let sent = Mutex<[Int: [UInt64]]>([:])  // connection → the send times of its requests 3, 4, …
    let behind = Atomic<Int>(0)
    let threads = Threads(shape.senders) { s in
        // In schedule order: round k, then connection i.
        var mine: [Int: [UInt64]] = [:]
        var k = 0
        rounds: while true {
            for i in stride(from: s, to: shape.connections, by: shape.senders) {
                let at = start + UInt64(Double(k * shape.connections + i) / total * 1e9)
                if at >= end { break rounds }
                let now = DispatchTime.now().uptimeNanoseconds
                if at > now { usleep(UInt32((at - now) / 1000)) } else if now - at > 1_000_000 { behind.add(1, ordering: .relaxed) }
                let n = k + 3
                // Spread over the connections, so that every round has its shared writes.
                let path = (k + i) % shape.sharedEvery == 0
                    ? Path(keys: ["s", ChildKey("g\(i % shape.sharedLocations)")]) : Path(keys: ["m", ChildKey("c\(i)")])
                let t = DispatchTime.now().uptimeNanoseconds
                try! clients[i].send(ClientRequest.put(path: path, data: .string(String(t)), hash: nil).message(number: n))
                mine[i, default: []].append(t)
            }
            k += 1
        }
        sent.withLock { $0.merge(mine) { a, _ in a } }
    }
    threads.join()
    let sends = sent.withLock { $0 }
    let sendCount = sends.values.reduce(0) { $0 + $1.count }
    // Every write's `ok`, for up to 30 s after the last send.
    let acks = { recorders.reduce(0) { n, r in n + r.frames.withLock { $0.count { $0.text.contains("\"s\":\"ok\"") } } } - 2 * shape.connections }
    let deadline = now() + 30
    while acks() < sendCount && now() < deadline { try await Task.sleep(for: .milliseconds(50)) }

    let warm = start + UInt64(seconds * 0.1 * 1e9)
    var ackTimes: [Double] = [], deliveries: [Double] = [], ackedInWindow = 0
    for (i, r) in recorders.enumerated() {
        let times = sends[i] ?? []
        for (at, text) in r.frames.withLock({ $0 }) {
            switch try? ServerMessage.decode(text) {
            case let .response(n, "ok", _)? where n >= 3 && n - 3 < times.count:
                let t = times[n - 3]
                if t >= warm { ackTimes.append(Double(at - t) / 1e6) }
                if at >= warm && at < end { ackedInWindow += 1 }
            case let .set(_, .string(value), _)?:
                if let t = UInt64(value), t >= warm { deliveries.append(Double(at - t) / 1e6) }
            default: break
            }
        }
    }
    for c in clients { c.close() }
    try await live.stop()
    let window = Double(end - warm) / 1e9
    return MixedRun(
        connections: shape.connections, rate: shape.rate, sharedLocations: shape.sharedLocations,
        sharedEvery: shape.sharedEvery, load: load, offeredPerSecond: total, sent: sendCount,
        sendsBehind: behind.load(ordering: .relaxed), ackedPerSecond: Double(ackedInWindow) / window,
        ackP50Ms: percentile(ackTimes, 0.5), ackP99Ms: percentile(ackTimes, 0.99), pushes: deliveries.count,
        deliveryP50Ms: percentile(deliveries, 0.5), deliveryP99Ms: percentile(deliveries, 0.99))
}
