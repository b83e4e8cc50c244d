#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A plain blocking TCP connection to a loopback port, for attack tests: it sends bytes exactly
/// as given (half a request head, a body that never ends, invalid UTF-8) and reads what the
/// server answers. Every read waits at most `hangGuard` seconds: a hang guard only, never the
/// verdict of a test. One test uses it at a time (`@unchecked Sendable` only to hand it to a
/// thread off the task pool).
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    let hangGuard: Double

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(port: Int, hangGuard: Double = 30) throws {
        self.hangGuard = hangGuard
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
        var timeout = timeval(tv_sec: Int(hangGuard), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends `bytes`; false if the server has closed the connection.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Whether the server sent something or closed the connection within `ms` milliseconds.
    func hasInput(withinMs ms: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, ms) > 0
    }

    /// Reads until the server closes the connection: what it sent, and whether it closed before
    /// the hang guard ran out.
    func readUntilClosed() -> (bytes: [UInt8], closed: Bool) {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(hangGuard)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                out += chunk[0..<n]
            } else if n == 0 || errno == ECONNRESET {
                return (out, true)
            } else if errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK {
                return (out, true)
            }
        }
        return (out, false)
    }

    /// Reads one HTTP response (head and a `Content-Length` body): its status and body, or nil
    /// if the connection closed or the hang guard ran out first.
    func readResponse() -> (status: Int, body: String)? {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(hangGuard)
        while Date() < deadline {
            let text = String(decoding: data, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound]
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                let body = Array(text[end.upperBound...].utf8)
                if body.count >= length, let status = Int(head.dropFirst("HTTP/1.1 ".count).prefix(3)) {
                    return (status, String(decoding: body.prefix(length), as: UTF8.self))
                }
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                data += chunk[0..<n]
            } else if n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
                return nil
            }
        }
        return nil
    }
}

// WebSocket by hand (RFC 6455), to send frames a well-behaved client never would.
extension RawSocket {
    /// Upgrades to a WebSocket at `/.ws` — with `frames` in the same write as the request — and
    /// returns the bytes read after the 101 response head; nil if the server did not switch
    /// protocols.
    func upgradeToWebSocket(sendingAlong frames: [UInt8] = []) -> [UInt8]? {
        write(
            Array(
                ("GET /.ws?v=5&ns=test HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8) + frames
        )
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = data.indices.first(where: { data[$0...].starts(with: Array("\r\n\r\n".utf8)) }) {
                guard data.starts(with: Array("HTTP/1.1 101".utf8)) else { return nil }
                return Array(data[(end + 4)...])
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            data += chunk[0..<n]
        }
    }

    /// A client frame: masked (with a zero key, so the payload reads as sent), any opcode.
    static func frame(
        _ payload: [UInt8], opcode: UInt8 = 0x1, fin: Bool = true, announcing length: Int? = nil
    )
        -> [UInt8]
    {
        let length = length ?? payload.count
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if length <= 125 {
            out.append(0x80 | UInt8(length))
        } else if length <= 0xFFFF {
            out += [0x80 | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            out.append(0x80 | 127)
            out += (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
        }
        return out + [0, 0, 0, 0] + payload
    }

    /// The server's frames in `bytes` (unmasked, as a server sends them): opcode and payload.
    static func frames(in bytes: [UInt8]) -> [(opcode: UInt8, payload: [UInt8])] {
        var out: [(UInt8, [UInt8])] = []
        var i = 0
        while i + 2 <= bytes.count {
            var length = Int(bytes[i + 1] & 0x7F)
            var start = i + 2
            if length == 126, start + 2 <= bytes.count {
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127, start + 8 <= bytes.count {
                length = bytes[start..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            out.append((bytes[i] & 0x0F, Array(bytes[start..<(start + length)])))
            i = start + length
        }
        return out
    }

    /// The status of the server's close frame in `bytes`, if it sent one.
    static func closeStatus(in bytes: [UInt8]) -> Int? {
        guard let close = frames(in: bytes).first(where: { $0.opcode == 0x8 }), close.payload.count >= 2 else {
            return nil
        }
        return Int(close.payload[0]) << 8 | Int(close.payload[1])
    }
}
