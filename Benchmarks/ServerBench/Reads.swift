// Reads per second: `connections` clients each asking for one small location at a time for
// min(`--seconds`, 3), over a WebSocket (`g` → its `ok` with the data) and over REST
// (`GET /PATH.json` on a keep-alive HTTP/1.1 connection), against the in-process server of
// Support.swift; quoted against the raw loopback WebSocket echo of Echo.swift.
import Dispatch
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import Synchronization

/// The data the reads ask for: 100 small children under `r`, written once.
func seedReads(_ live: Live) throws {
    let c = try live.client()
    let kids = (0..<100).map { (Path(keys: [ChildKey("k\($0)")]), JSONValue.string("value \($0)")) }
    try c.send(ClientRequest.merge(path: "r", data: kids).message(number: 1))
    guard c.response(1).status == "ok" else { fatalError("seeding the reads failed") }
    c.close()
}

/// WebSocket `g` requests answered per second.
func webSocketReads(connections: Int) async throws -> Double {
    let live = try await Live()
    try seedReads(live)
    let clients = try (0..<connections).map { _ in try live.client() }
    let rate = try await timed(connections) { i, n in
        let c = clients[i]
        try! c.send(ClientRequest.get(path: Path(keys: ["r", ChildKey("k\(n % 100)")]), query: .default).message(number: n))
        guard c.response(n).status == "ok" else { fatalError("get \(n) failed") }
    }
    for c in clients { c.close() }
    try await live.stop()
    return rate
}

/// REST `GET` requests answered per second, one keep-alive connection per client.
func restReads(connections: Int) async throws -> Double {
    let live = try await Live()
    try seedReads(live)
    let clients = (0..<connections).map { _ in HTTPClient(port: live.server.port) }
    let rate = try await timed(connections) { i, n in
        let body = clients[i].get("/r/k\(n % 100).json?ns=test")
        guard body.hasPrefix("\"value ") else { fatalError("GET \(n) answered \(body)") }
    }
    for c in clients { c.close() }
    try await live.stop()
    return rate
}

/// Runs `body(client, n)` for n = 1, 2, … on one thread per client for min(`--seconds`, 3)
/// and returns the calls per second.
func timed(_ connections: Int, _ body: @escaping @Sendable (Int, Int) -> Void) async throws -> Double {
    let count = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let start = now()
    let threads = Threads(connections) { i in
        var n = 1
        while !stop.load(ordering: .relaxed) {
            body(i, n)
            count.add(1, ordering: .relaxed)
            n += 1
        }
    }
    try await Task.sleep(for: .seconds(min(options.seconds, 3)))
    stop.store(true, ordering: .relaxed)
    threads.join()
    return Double(count.load(ordering: .relaxed)) / (now() - start)
}

/// A minimal HTTP/1.1 client on a blocking socket: GET with keep-alive, a `Content-Length`
/// body. Enough for the server's answers to small reads; not a general client.
final class HTTPClient: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { fatalError("connect failed: \(errno)") }
    }

    /// PUTs `body` to `target` and returns the answer's status and body.
    func put(_ target: String, body: String) -> (status: Int, body: String) {
        let bytes = Array(body.utf8)
        let head = Array("PUT \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(bytes.count)\r\n\r\n".utf8)
        for part in [head, bytes] {
            var sent = 0
            while sent < part.count {
                let n = part.withUnsafeBytes { write(fd, $0.baseAddress! + sent, part.count - sent) }
                guard n > 0 else { fatalError("write failed") }
                sent += n
            }
        }
        return response()
    }

    func get(_ target: String) -> String {
        let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else { fatalError("write failed") }
        return response().body
    }

    /// Reads one answer: its status and its body (`Content-Length`).
    private func response() -> (status: Int, body: String) {
        let end = Array("\r\n\r\n".utf8)
        var headEnd: Int? = nil
        while true {
            if headEnd == nil, let r = find(end) { headEnd = r }
            if let h = headEnd {
                let head = String(decoding: buffer[..<h], as: UTF8.self).lowercased()
                let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                // A 204 or 304 has no body and no Content-Length (RFC 9110 §8.6).
                let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") })
                let declared = line.flatMap {
                    Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                }
                guard let length = status == 204 || status == 304 ? 0 : declared else {
                    fatalError("no content-length in \(head)")
                }
                if buffer.count >= h + 4 + length {
                    let body = String(decoding: buffer[(h + 4)..<(h + 4 + length)], as: UTF8.self)
                    buffer.removeFirst(h + 4 + length)
                    return (status, body)
                }
            }
            var chunk = [UInt8](repeating: 0, count: 16384)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { fatalError("the server closed the connection") }
            buffer += chunk[..<n]
        }
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count) where buffer[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }

    func close() { _ = Glibc.close(fd) }
}
